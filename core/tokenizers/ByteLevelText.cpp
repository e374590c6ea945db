#include "core/tokenizers/ByteLevelText.h"

#include <cctype>

#include "core/tokenizers/UnicodeText.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace attnscope {

char32_t byteToUnicode(unsigned b)
{
    const auto printable = [](unsigned v) { return (v >= 0x21 && v <= 0x7e) || (v >= 0xa1 && v <= 0xac) || v >= 0xae; };
    if (printable(b))
        return b;
    char32_t n = 0;
    for (unsigned v = 0; v < b; ++v)
        if (!printable(v))
            ++n;
    return 0x100 + n;
}

int unicodeToByte(char32_t c)
{
    static const std::array<char32_t, 256> table = [] {
        std::array<char32_t, 256> t{};
        for (unsigned b = 0; b < 256; ++b)
            t[b] = byteToUnicode(b);
        return t;
    }();
    // The printable bytes stand for themselves; the rest are U+0100..U+0143.
    if (c < 256)
        return table[c] == c ? int(c) : -1;
    const auto it = std::find(table.begin(), table.end(), c);
    return it == table.end() ? -1 : int(it - table.begin());
}

namespace {

// "[CLS]", "<|endoftext|>": markers that never belong to a neighbouring word.
bool isSpecialToken(const std::string &t)
{
    return t.size() >= 3 && ((t.front() == '[' && t.back() == ']') || (t.front() == '<' && t.back() == '>'));
}

// One character as a label shows it: a space, a newline, a tab or another control as a visible sign.
void appendShown(char32_t c, std::string &out)
{
    if (c == U' ')
        appendUtf8(U'\u2423', out); // ␣
    else if (c == U'\n')
        appendUtf8(U'\u21b5', out); // ↵
    else if (c == U'\t')
        appendUtf8(U'\u21e5', out); // ⇥
    else if (c < 0x20)
        appendUtf8(char32_t(0x2400 + c), out); // the control pictures
    else if (c == 0x7f)
        appendUtf8(U'\u2421', out); // ␡
    else
        appendUtf8(c, out);
}

struct Char {
    std::size_t begin, end; // bytes of the run
    char32_t value;
};

bool isPunctuationOnly(const std::vector<Char> &chars, std::size_t from, std::size_t to)
{
    bool any = false;
    for (std::size_t k = from; k < to; ++k) {
        const char32_t c = chars[k].value;
        if (isWhiteSpace(c))
            continue;
        const bool ascii = c < 0x80 && ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
                                        (c >= 123 && c <= 126));
        if (!ascii && unicodeClass(c) != UnicodeClass::Punctuation)
            return false;
        any = true;
    }
    return any;
}

// SentencePiece's byte-fallback piece "<0xE4>": its byte, or -1.
int fallbackByte(const std::string &t)
{
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>' ||
        !std::isxdigit(static_cast<unsigned char>(t[3])) || !std::isxdigit(static_cast<unsigned char>(t[4])))
        return -1;
    return std::stoi(t.substr(3, 2), nullptr, 16);
}

// Labels, words and word texts from each token's bytes (special tokens: none, kept as spelled).
std::optional<ByteLevelPieces> piecesFromBytes(const std::vector<std::string> &tokens,
                                               const std::vector<std::string> &bytes, const std::vector<bool> &special);

} // namespace

std::optional<ByteLevelPieces> byteLevelPieces(const std::vector<std::string> &tokens)
{
    // Every token's bytes.
    std::vector<std::string> bytes(tokens.size());
    std::vector<bool> special(tokens.size());
    bool telling = false; // a stand-in that plain text would not hold
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        special[i] = isSpecialToken(tokens[i]);
        if (special[i])
            continue;
        const std::string &t = tokens[i];
        for (std::size_t at = 0; at < t.size();) {
            const Utf8Char c = decodeUtf8(t, at);
            const int b = c.valid ? unicodeToByte(c.value) : -1;
            if (b < 0)
                return std::nullopt;
            telling |= c.value >= 0x100 || b >= 0x80;
            bytes[i] += char(b);
            at += c.length;
        }
    }
    if (!telling)
        return std::nullopt;
    return piecesFromBytes(tokens, bytes, special);
}

std::optional<ByteLevelPieces> sentencePiecePieces(const std::vector<std::string> &tokens)
{
    std::vector<std::string> bytes(tokens.size());
    std::vector<bool> special(tokens.size());
    bool telling = false; // a "▁" or a byte piece
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string &t = tokens[i];
        if (const int b = fallbackByte(t); b >= 0) {
            bytes[i] = char(b);
            telling = true;
            continue;
        }
        special[i] = isSpecialToken(t);
        if (special[i])
            continue;
        for (std::size_t at = 0; at < t.size();) {
            if (t.compare(at, 3, "\xE2\x96\x81") == 0) { // ▁, U+2581
                bytes[i] += ' ';
                at += 3;
                telling = true;
            } else {
                bytes[i] += t[at++];
            }
        }
    }
    if (!telling)
        return std::nullopt;
    return piecesFromBytes(tokens, bytes, special);
}

std::optional<ByteLevelPieces> readablePieces(const std::vector<std::string> &tokens)
{
    if (auto pieces = byteLevelPieces(tokens))
        return pieces;
    return sentencePiecePieces(tokens);
}

namespace {

std::optional<ByteLevelPieces> piecesFromBytes(const std::vector<std::string> &tokens,
                                               const std::vector<std::string> &bytes, const std::vector<bool> &special)
{
    ByteLevelPieces out;
    out.labels.resize(tokens.size());
    out.wordOf.resize(tokens.size());
    std::vector<std::string> wordBytes;
    bool previousAlone = true;
    char32_t previousLast = 0;
    for (std::size_t i = 0; i < tokens.size();) {
        if (special[i]) {
            out.labels[i] = tokens[i];
            out.wordOf[i] = int(wordBytes.size());
            wordBytes.push_back(tokens[i]);
            out.words.push_back(tokens[i]);
            previousAlone = true;
            ++i;
            continue;
        }
        // A run of tokens between special ones: their bytes must be whole UTF-8 characters.
        std::size_t j = i;
        std::string run;
        std::vector<std::size_t> start;
        for (; j < tokens.size() && !special[j]; ++j) {
            start.push_back(run.size());
            run += bytes[j];
        }
        start.push_back(run.size());
        std::vector<Char> chars;
        for (std::size_t at = 0; at < run.size();) {
            const Utf8Char c = decodeUtf8(run, at);
            if (!c.valid)
                return std::nullopt;
            chars.push_back({at, at + c.length, c.value});
            at += c.length;
        }
        std::size_t k = 0; // the first character that ends after the token's start
        for (std::size_t t = i; t < j; ++t) {
            const std::size_t b0 = start[t - i], b1 = start[t - i + 1];
            while (k < chars.size() && chars[k].end <= b0)
                ++k;
            std::size_t last = k;
            std::string label;
            const bool startsInside = k < chars.size() && chars[k].begin < b0;
            if (startsInside)
                label += "\xE2\x80\xA6"; // …
            for (; last < chars.size() && chars[last].begin < b1; ++last)
                appendShown(chars[last].value, label);
            if (last > k && chars[last - 1].end > b1)
                label += "\xE2\x80\xA6";
            out.labels[t] = label;

            const char32_t first = k < chars.size() ? chars[k].value : 0;
            const bool alone = !startsInside && isPunctuationOnly(chars, k, last);
            const bool continues = startsInside || (!previousAlone && !alone && !isWhiteSpace(first) &&
                                                    !isChineseCharacter(first) && !isChineseCharacter(previousLast));
            if (!continues || wordBytes.empty()) {
                wordBytes.emplace_back();
                out.words.emplace_back();
            }
            out.wordOf[t] = int(wordBytes.size()) - 1;
            wordBytes.back() += run.substr(b0, b1 - b0);
            previousAlone = alone;
            previousLast = last > k ? chars[last - 1].value : 0;
        }
        i = j;
    }
    // A word's text: its pieces joined, without the space before it.
    for (std::size_t w = 0; w < wordBytes.size(); ++w) {
        if (!out.words[w].empty())
            continue; // a special token
        const std::string &text = wordBytes[w];
        std::size_t from = 0;
        while (from < text.size()) {
            const Utf8Char c = decodeUtf8(text, from);
            if (!isWhiteSpace(c.value))
                break;
            from += c.length;
        }
        if (from == text.size())
            from = 0; // only spaces: shown as such
        for (std::size_t at = from; at < text.size();) {
            const Utf8Char c = decodeUtf8(text, at);
            appendShown(c.value, out.words[w]);
            at += c.length;
        }
    }
    return out;
}

} // namespace

} // namespace attnscope
