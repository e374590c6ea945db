#include "core/tokenizers/UnicodeText.h"

#include <algorithm>
#include <iterator>

namespace attnscope {

namespace {

struct LowerRun {
    char32_t first;
    std::uint16_t count;
    std::uint8_t stride;
    std::int32_t delta;
};

struct StrippedDecomposition {
    char32_t from;
    char32_t to[3]; // 0-terminated when shorter
};

struct Decomposition {
    char32_t from;
    std::uint16_t offset; // into kDecompositionPool
    std::uint8_t length;
    std::uint8_t compatibility; // 1 for a <tag>ged (compatibility) mapping
};

struct Composition {
    char32_t first, second, composite;
};

#include "core/tokenizers/UnicodeTables.inc"

constexpr char32_t kHangulFirst = 0xac00, kHangulLast = 0xd7a3;

} // namespace

UnicodeClass unicodeClass(char32_t c)
{
    if (c > 0x10ffff)
        return UnicodeClass::Control;
    // The last run that starts at or before c.
    const std::uint32_t key = (std::uint32_t(c) << 3) | 7u;
    const auto it = std::upper_bound(std::begin(kClassRuns), std::end(kClassRuns), key);
    return static_cast<UnicodeClass>(*(it - 1) & 7u);
}

bool isChineseCharacter(char32_t c)
{
    return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) ||
           (c >= 0x2a700 && c <= 0x2b73f) || (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b820 && c <= 0x2ceaf) ||
           (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

bool isWhiteSpace(char32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

Utf8Char decodeUtf8(std::string_view text, std::size_t offset)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(offset);
    if (b0 < 0x80)
        return {b0, 1, true};
    std::uint32_t length = 0, min = 0;
    char32_t c = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf)
        length = 2, c = b0 & 0x1fu, min = 0x80;
    else if (b0 >= 0xe0 && b0 <= 0xef)
        length = 3, c = b0 & 0x0fu, min = 0x800;
    else if (b0 >= 0xf0 && b0 <= 0xf4)
        length = 4, c = b0 & 0x07u, min = 0x10000;
    const Utf8Char invalid{0xfffd, 1, false};
    if (length == 0 || offset + length > text.size())
        return invalid;
    for (std::uint32_t k = 1; k < length; ++k) {
        if ((byte(offset + k) & 0xc0) != 0x80)
            return invalid;
        c = (c << 6) | (byte(offset + k) & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return invalid;
    return {c, length, true};
}

void appendUtf8(char32_t c, std::string &out)
{
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xc0 | (c >> 6));
        out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        out += char(0xe0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    } else {
        out += char(0xf0 | (c >> 18));
        out += char(0x80 | ((c >> 12) & 0x3f));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    }
}

void appendUtf8(std::u32string_view chars, std::string &out)
{
    for (char32_t c : chars)
        appendUtf8(c, out);
}

void appendLowerCase(char32_t c, std::u32string &out)
{
    if (c < 0x80) {
        out += (c >= 'A' && c <= 'Z') ? c + 32 : c;
        return;
    }
    if (c == 0x130) { // LATIN CAPITAL LETTER I WITH DOT ABOVE: the one mapping to two
        out += U'i';
        out += char32_t(0x307);
        return;
    }
    // The last run starting at or before c; c maps when it lies on that run's stride.
    const auto it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), c,
                                     [](char32_t v, const LowerRun &run) { return v < run.first; });
    if (it != std::begin(kLowerRuns)) {
        const LowerRun &run = *(it - 1);
        const char32_t step = c - run.first;
        if (step % run.stride == 0 && step / run.stride < run.count) {
            out += char32_t(std::int64_t(c) + run.delta);
            return;
        }
    }
    out += c;
}

void appendWithoutAccents(char32_t c, std::u32string &out)
{
    if (c < 0xc0) { // nothing in Basic Latin or before À decomposes
        out += c;
        return;
    }
    if (c >= kHangulFirst && c <= kHangulLast) {
        // Unicode 3.12: a syllable is a leading consonant, a vowel and maybe a trailing one.
        const char32_t s = c - kHangulFirst;
        out += char32_t(0x1100 + s / 588);
        out += char32_t(0x1161 + (s % 588) / 28);
        if (s % 28 != 0)
            out += char32_t(0x11a7 + s % 28);
        return;
    }
    if (unicodeClass(c) == UnicodeClass::NonspacingMark)
        return;
    const auto it = std::lower_bound(std::begin(kStrippedDecompositions), std::end(kStrippedDecompositions), c,
                                     [](const StrippedDecomposition &d, char32_t v) { return d.from < v; });
    if (it == std::end(kStrippedDecompositions) || it->from != c) {
        out += c;
        return;
    }
    for (char32_t d : it->to)
        if (d != 0)
            out += d;
}

UnicodeCategory unicodeCategory(char32_t c)
{
    if (c > 0x10ffff)
        return UnicodeCategory::Cn;
    const std::uint32_t key = (std::uint32_t(c) << 5) | 31u;
    const auto it = std::upper_bound(std::begin(kCategoryRuns), std::end(kCategoryRuns), key);
    return static_cast<UnicodeCategory>(*(it - 1) & 31u);
}

int combiningClass(char32_t c)
{
    if (c < 0x300 || c > 0x10ffff)
        return 0;
    const std::uint32_t key = (std::uint32_t(c) << 8) | 255u;
    const auto it = std::upper_bound(std::begin(kCombiningClassRuns), std::end(kCombiningClassRuns), key);
    return int(*(it - 1) & 255u);
}

namespace {

constexpr char32_t kHangulL = 0x1100, kHangulV = 0x1161, kHangulT = 0x11a7;
constexpr char32_t kHangulVCount = 21, kHangulTCount = 28, kHangulNCount = kHangulVCount * kHangulTCount;

void decompose(char32_t c, bool compatibility, std::u32string &out)
{
    if (c >= kHangulFirst && c <= kHangulLast) {
        const char32_t s = c - kHangulFirst;
        out += char32_t(kHangulL + s / kHangulNCount);
        out += char32_t(kHangulV + (s % kHangulNCount) / kHangulTCount);
        if (s % kHangulTCount != 0)
            out += char32_t(kHangulT + s % kHangulTCount);
        return;
    }
    const auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), c,
                                     [](const Decomposition &d, char32_t v) { return d.from < v; });
    if (it == std::end(kDecompositions) || it->from != c || (it->compatibility && !compatibility)) {
        out += c;
        return;
    }
    for (std::size_t k = 0; k < it->length; ++k)
        decompose(kDecompositionPool[it->offset + k], compatibility, out);
}

// The primary composite of a starter and a following character, or 0.
char32_t compose(char32_t first, char32_t second)
{
    if (first >= kHangulL && first < kHangulL + 19 && second >= kHangulV && second < kHangulV + kHangulVCount)
        return kHangulFirst + ((first - kHangulL) * kHangulVCount + (second - kHangulV)) * kHangulTCount;
    if (first >= kHangulFirst && first <= kHangulLast && (first - kHangulFirst) % kHangulTCount == 0 &&
        second > kHangulT && second < kHangulT + kHangulTCount)
        return first + (second - kHangulT);
    const auto it = std::lower_bound(
        std::begin(kCompositions), std::end(kCompositions), std::pair(first, second),
        [](const Composition &c, const std::pair<char32_t, char32_t> &v) { return std::pair(c.first, c.second) < v; });
    if (it == std::end(kCompositions) || it->first != first || it->second != second)
        return 0;
    return it->composite;
}

} // namespace

std::u32string normalizeUnicode(std::u32string_view text, NormalizationForm form)
{
    const bool compatibility = form == NormalizationForm::Nfkc || form == NormalizationForm::Nfkd;
    const bool composed = form == NormalizationForm::Nfc || form == NormalizationForm::Nfkc;
    const char32_t quick = compatibility ? 0xa0 : 0xc0;
    if (std::all_of(text.begin(), text.end(), [&](char32_t c) { return c < quick; }))
        return std::u32string(text);
    std::u32string out;
    out.reserve(text.size() + text.size() / 4);
    for (char32_t c : text)
        decompose(c, compatibility, out);
    // Canonical ordering: a stable sort of each run of non-starters by combining class.
    for (std::size_t i = 0; i < out.size();) {
        if (combiningClass(out[i]) == 0) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < out.size() && combiningClass(out[j]) != 0)
            ++j;
        std::stable_sort(out.begin() + std::ptrdiff_t(i), out.begin() + std::ptrdiff_t(j),
                         [](char32_t a, char32_t b) { return combiningClass(a) < combiningClass(b); });
        i = j;
    }
    if (!composed)
        return out;
    // Canonical composition (UAX #15, D117): each character after the last starter combines with
    // it unless blocked by a character of equal or higher class in between.
    std::u32string result;
    result.reserve(out.size());
    std::size_t starter = std::u32string::npos;
    int lastClass = -1;
    for (char32_t c : out) {
        const int cls = combiningClass(c);
        if (starter != std::u32string::npos && (lastClass < cls || (lastClass == 0 && result.size() == starter + 1))) {
            if (const char32_t composite = compose(result[starter], c)) {
                result[starter] = composite;
                continue;
            }
        }
        if (cls == 0) {
            starter = result.size();
            lastClass = 0;
        } else {
            lastClass = cls;
        }
        result += c;
    }
    return result;
}

std::string legibleUtf8(std::string_view bytes)
{
    std::string out;
    static const char hex[] = "0123456789ABCDEF";
    for (std::size_t i = 0; i < bytes.size();) {
        const Utf8Char c = decodeUtf8(bytes, i);
        if (c.valid) {
            out.append(bytes, i, c.length);
        } else {
            const auto b = static_cast<unsigned char>(bytes[i]);
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 15];
        }
        i += c.length;
    }
    return out;
}

} // namespace attnscope
