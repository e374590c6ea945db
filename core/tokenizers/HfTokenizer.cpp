#include "core/tokenizers/HfTokenizer.h"

#include "core/tokenizers/ByteLevelText.h"
#include "core/tokenizers/HfTokenizerParts.h"
#include "core/tokenizers/Tokenizer.h"

#include <queue>

namespace attnscope {

using namespace hfjson;

namespace {

std::string applyNormalizer(const Normalizer &n, std::string text)
{
    switch (n.kind) {
    case NormalizerKind::Sequence:
        for (const Normalizer &child : n.children)
            text = applyNormalizer(child, std::move(text));
        return text;
    case NormalizerKind::Nfc:
        return toUtf8(normalizeUnicode(toChars(text), NormalizationForm::Nfc));
    case NormalizerKind::Nfd:
        return toUtf8(normalizeUnicode(toChars(text), NormalizationForm::Nfd));
    case NormalizerKind::Nfkc:
        return toUtf8(normalizeUnicode(toChars(text), NormalizationForm::Nfkc));
    case NormalizerKind::Nfkd:
        return toUtf8(normalizeUnicode(toChars(text), NormalizationForm::Nfkd));
    case NormalizerKind::Lowercase: {
        std::u32string out;
        for (char32_t c : toChars(text))
            appendLowerCase(c, out);
        return toUtf8(out);
    }
    case NormalizerKind::Replace: {
        std::string out;
        std::size_t last = 0;
        for (const TokenRegex::Match &m : n.pattern.findAll(text)) {
            out.append(text, last, m.begin - last);
            out += n.content;
            last = m.end;
        }
        out.append(text, last, std::string::npos);
        return out;
    }
    case NormalizerKind::Prepend:
        return text.empty() ? text : n.content + text;
    case NormalizerKind::Strip: {
        std::u32string chars = toChars(text);
        std::size_t b = 0, e = chars.size();
        if (n.left)
            while (b < e && isWhiteSpace(chars[b]))
                ++b;
        if (n.right)
            while (e > b && isWhiteSpace(chars[e - 1]))
                --e;
        return toUtf8(std::u32string_view(chars).substr(b, e - b));
    }
    case NormalizerKind::Bert: {
        std::u32string out;
        const bool strip = n.stripAccents.value_or(n.lowercase);
        for (char32_t c : toChars(text)) {
            if (n.cleanText) {
                if (c == 0 || c == 0xfffd)
                    continue;
                if (c == U'\t' || c == U'\n' || c == U'\r' || isWhiteSpace(c)) {
                    out += U' ';
                    continue;
                }
                if (unicodeClass(c) == UnicodeClass::Control)
                    continue;
            }
            if (n.chineseChars && isChineseCharacter(c)) {
                out += U' ';
                out += c;
                out += U' ';
                continue;
            }
            out += c;
        }
        if (strip) {
            std::u32string d = normalizeUnicode(out, NormalizationForm::Nfd), kept;
            for (char32_t c : d)
                if (unicodeCategory(c) != UnicodeCategory::Mn)
                    kept += c;
            out = std::move(kept);
        }
        if (n.lowercase) {
            std::u32string lower;
            for (char32_t c : out)
                appendLowerCase(c, lower);
            out = std::move(lower);
        }
        return toUtf8(out);
    }
    }
    return text;
}

// Cuts `text` at the matches the way the `tokenizers` library's NormalizedString::split does.
std::vector<std::string> splitText(const std::string &text, const std::vector<TokenRegex::Match> &found,
                                   SplitBehavior behavior, bool invert)
{
    struct Part {
        std::size_t begin, end;
        bool match;
    };
    std::vector<Part> parts;
    std::size_t previous = 0;
    for (const TokenRegex::Match &m : found) {
        if (previous != m.begin)
            parts.push_back({previous, m.begin, false});
        parts.push_back({m.begin, m.end, true});
        previous = m.end;
    }
    if (previous != text.size() || text.empty())
        parts.push_back({previous, text.size(), false});
    if (invert)
        for (Part &p : parts)
            p.match = !p.match;
    std::vector<Part> kept; // match here means "remove"
    bool previousMatch = false;
    switch (behavior) {
    case SplitBehavior::Removed:
        kept = parts;
        break;
    case SplitBehavior::Isolated:
        for (const Part &p : parts)
            kept.push_back({p.begin, p.end, false});
        break;
    case SplitBehavior::MergedWithPrevious:
        for (const Part &p : parts) {
            if (p.match && !previousMatch && !kept.empty())
                kept.back().end = p.end;
            else
                kept.push_back({p.begin, p.end, false});
            previousMatch = p.match;
        }
        break;
    case SplitBehavior::MergedWithNext:
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
            if (it->match && !previousMatch && !kept.empty())
                kept.back().begin = it->begin;
            else
                kept.push_back({it->begin, it->end, false});
            previousMatch = it->match;
        }
        std::reverse(kept.begin(), kept.end());
        break;
    case SplitBehavior::Contiguous:
        for (const Part &p : parts) {
            if (p.match == previousMatch && !kept.empty())
                kept.back().end = p.end;
            else
                kept.push_back({p.begin, p.end, false});
            previousMatch = p.match;
        }
        break;
    }
    std::vector<std::string> out;
    for (const Part &p : kept)
        if (!p.match && p.end > p.begin)
            out.push_back(text.substr(p.begin, p.end - p.begin));
    return out;
}

bool isBertPunctuation(char32_t c)
{
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126) ||
           unicodeClass(c) == UnicodeClass::Punctuation;
}

// Splits each character run by a predicate: `isolate` characters become pieces of their own,
// `drop` characters end a piece and vanish.
std::vector<std::string> splitChars(const std::string &text, bool (*drop)(char32_t), bool (*isolate)(char32_t))
{
    std::vector<std::string> out;
    std::string current;
    for (std::size_t i = 0; i < text.size();) {
        const Utf8Char c = decodeUtf8(text, i);
        const std::string_view bytes(text.data() + i, c.length);
        i += c.length;
        if (drop && drop(c.value)) {
            if (!current.empty())
                out.push_back(std::move(current));
            current.clear();
        } else if (isolate && isolate(c.value)) {
            if (!current.empty())
                out.push_back(std::move(current));
            current.clear();
            out.emplace_back(bytes);
        } else {
            current += bytes;
        }
    }
    if (!current.empty())
        out.push_back(std::move(current));
    return out;
}

} // namespace

std::string HfTokenizer::Data::normalize(std::string text) const
{
    return normalizer ? applyNormalizer(*normalizer, std::move(text)) : text;
}

std::vector<Piece> HfTokenizer::Data::preTokenize(const PreTokenizer &p, std::vector<Piece> pieces) const
{
    if (p.kind == PreTokenizerKind::Sequence) {
        for (const PreTokenizer &child : p.children)
            pieces = preTokenize(child, std::move(pieces));
        return pieces;
    }
    static const TokenRegex gpt2 = *TokenRegex::compile(kGpt2Pattern);
    std::vector<Piece> out;
    for (Piece &piece : pieces) {
        std::vector<std::string> parts;
        switch (p.kind) {
        case PreTokenizerKind::Sequence:
            break;
        case PreTokenizerKind::ByteLevel: {
            std::string text = std::move(piece.text);
            if (p.addPrefixSpace && (text.empty() || text[0] != ' '))
                text.insert(text.begin(), ' ');
            if (p.useRegex)
                parts = splitText(text, gpt2.findAll(text), SplitBehavior::Isolated, false);
            else
                parts.push_back(std::move(text));
            for (std::string &part : parts) {
                std::string mapped;
                for (unsigned char b : part)
                    appendUtf8(byteToUnicode(b), mapped);
                part = std::move(mapped);
            }
            break;
        }
        case PreTokenizerKind::Split:
            parts = splitText(piece.text, p.pattern.findAll(piece.text), p.behavior, p.invert);
            break;
        case PreTokenizerKind::Metaspace: {
            std::string text;
            for (char c : piece.text)
                if (c == ' ')
                    text += p.replacement;
                else
                    text += c;
            const bool prepend =
                p.prepend == PrependScheme::Always || (p.prepend == PrependScheme::First && piece.first);
            if (prepend && text.compare(0, p.replacement.size(), p.replacement) != 0)
                text = p.replacement + text;
            if (p.split) {
                Pattern literal{p.replacement, std::nullopt};
                parts = splitText(text, literal.findAll(text), SplitBehavior::MergedWithNext, false);
            } else {
                parts.push_back(std::move(text));
            }
            break;
        }
        case PreTokenizerKind::Bert: {
            // Whitespace removed, punctuation isolated.
            parts = splitChars(
                piece.text, [](char32_t c) { return isWhiteSpace(c); }, isBertPunctuation);
            break;
        }
        case PreTokenizerKind::WhitespaceSplit:
            parts = splitChars(
                piece.text, [](char32_t c) { return isWhiteSpace(c); }, nullptr);
            break;
        case PreTokenizerKind::Whitespace: {
            static const TokenRegex words = *TokenRegex::compile(R"(\w+|[^\w\s]+)");
            parts = splitText(piece.text, words.findAll(piece.text), SplitBehavior::Removed, true);
            break;
        }
        case PreTokenizerKind::Digits: {
            const auto isDigit = [](char32_t c) {
                const UnicodeCategory k = unicodeCategory(c);
                return k == UnicodeCategory::Nd || k == UnicodeCategory::Nl || k == UnicodeCategory::No;
            };
            if (p.individualDigits) {
                parts = splitChars(piece.text, nullptr, +isDigit);
            } else {
                // Runs of digits and runs of the rest.
                std::string current;
                int kind = -1;
                for (std::size_t i = 0; i < piece.text.size();) {
                    const Utf8Char c = decodeUtf8(piece.text, i);
                    const int k = isDigit(c.value) ? 1 : 0;
                    if (k != kind && !current.empty()) {
                        parts.push_back(std::move(current));
                        current.clear();
                    }
                    kind = k;
                    current.append(piece.text, i, c.length);
                    i += c.length;
                }
                if (!current.empty())
                    parts.push_back(std::move(current));
            }
            break;
        }
        }
        bool first = piece.first;
        for (std::string &part : parts) {
            out.push_back({std::move(part), first});
            first = false;
        }
    }
    return out;
}

void HfTokenizer::Data::model(const std::string &piece, std::vector<std::int32_t> &ids) const
{
    if (wordPiece)
        wordPieceModel(piece, ids);
    else
        bpe(piece, ids);
}

void HfTokenizer::Data::bpe(const std::string &piece, std::vector<std::int32_t> &ids) const
{
    if (piece.empty())
        return;
    if (ignoreMerges) {
        if (const auto it = vocab.find(piece); it != vocab.end()) {
            ids.push_back(it->second);
            return;
        }
    }
    // The word's symbols, one per character (byte-fallback bytes and unknowns as the library
    // makes them), linked so merges can remove symbols.
    struct Symbol {
        std::int32_t id;
        int prev, next;
        bool alive;
    };
    std::vector<Symbol> symbols;
    std::int32_t pendingUnk = -1; // an unknown character's id, waiting to be fused with the next
    const auto add = [&](std::int32_t id) {
        symbols.push_back({id, int(symbols.size()) - 1, int(symbols.size()) + 1, true});
    };
    for (std::size_t i = 0; i < piece.size();) {
        const Utf8Char c = decodeUtf8(piece, i);
        std::string s(piece, i, c.length);
        const bool isFirst = i == 0;
        i += c.length;
        const bool isLast = i >= piece.size();
        if (!isFirst)
            s = prefix + s;
        if (isLast)
            s += suffix;
        if (const auto it = vocab.find(s); it != vocab.end()) {
            if (pendingUnk >= 0) {
                add(pendingUnk);
                pendingUnk = -1;
            }
            add(it->second);
            continue;
        }
        if (byteFallback && std::all_of(s.begin(), s.end(), [&](char b) { return byteIds[std::uint8_t(b)] >= 0; })) {
            if (pendingUnk >= 0) {
                add(pendingUnk);
                pendingUnk = -1;
            }
            for (unsigned char b : s)
                add(byteIds[b]);
            continue;
        }
        if (unk) {
            if (pendingUnk >= 0 && !fuseUnk)
                add(pendingUnk);
            pendingUnk = *unk;
        }
    }
    if (pendingUnk >= 0)
        add(pendingUnk);
    if (symbols.empty())
        return;
    symbols.back().next = -1;

    struct Candidate {
        std::int32_t rank;
        int pos;
        std::int32_t id;
        bool operator>(const Candidate &o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
    const auto pairKey = [](std::int32_t a, std::int32_t b) {
        return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
    };
    const auto consider = [&](int pos) {
        if (pos < 0)
            return;
        const int next = symbols[std::size_t(pos)].next;
        if (next < 0)
            return;
        const auto it = merges.find(pairKey(symbols[std::size_t(pos)].id, symbols[std::size_t(next)].id));
        if (it != merges.end())
            queue.push({it->second.first, pos, it->second.second});
    };
    for (int k = 0; k + 1 < int(symbols.size()); ++k)
        consider(k);
    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol &left = symbols[std::size_t(top.pos)];
        if (!left.alive || left.next < 0)
            continue;
        Symbol &right = symbols[std::size_t(left.next)];
        const auto it = merges.find(pairKey(left.id, right.id));
        if (it == merges.end() || it->second.second != top.id)
            continue; // stale: one side merged since
        left.id = top.id;
        right.alive = false;
        left.next = right.next;
        if (right.next >= 0)
            symbols[std::size_t(right.next)].prev = top.pos;
        consider(left.prev);
        consider(top.pos);
    }
    for (const Symbol &s : symbols)
        if (s.alive)
            ids.push_back(s.id);
}

void HfTokenizer::Data::wordPieceModel(const std::string &piece, std::vector<std::int32_t> &ids) const
{
    const std::u32string chars = toChars(piece);
    if (std::int64_t(chars.size()) > maxCharsPerWord) {
        if (unk)
            ids.push_back(*unk);
        return;
    }
    std::vector<std::int32_t> found;
    std::size_t start = 0;
    while (start < chars.size()) {
        std::size_t end = chars.size();
        std::optional<std::int32_t> id;
        for (; end > start; --end) {
            std::string s = start > 0 ? prefix : std::string();
            appendUtf8(std::u32string_view(chars).substr(start, end - start), s);
            if (const auto it = vocab.find(s); it != vocab.end()) {
                id = it->second;
                break;
            }
        }
        if (!id) {
            if (unk)
                ids.push_back(*unk);
            return;
        }
        found.push_back(*id);
        start = end;
    }
    ids.insert(ids.end(), found.begin(), found.end());
}

namespace {

// Where the added tokens occur in `text`: leftmost, then longest, as the library's
// Aho-Corasick (MatchKind::LeftmostLongest) finds them, widened by lstrip/rstrip and skipped
// when single_word and inside a word.
struct AddedMatch {
    std::size_t begin, end;
    std::int32_t id;
};

bool isWordCharacter(char32_t c)
{
    const UnicodeClass k = unicodeClass(c);
    return k == UnicodeClass::Letter || k == UnicodeClass::Number || c == U'_';
}

std::vector<AddedMatch> findAdded(std::string_view text, const AddedSet &set, const std::vector<AddedToken> &added,
                                  const std::vector<std::int32_t> &addedIndex)
{
    std::vector<AddedMatch> out;
    if (set.ids.empty())
        return out;
    std::size_t limit = 0; // where the previous match ended
    for (std::size_t i = 0; i < text.size();) {
        if (!set.firstByte[std::uint8_t(text[i])]) {
            ++i;
            continue;
        }
        std::optional<std::int32_t> id;
        std::size_t length = 0;
        for (std::size_t len : set.lengths) {
            if (len > text.size() - i)
                continue;
            const auto it = set.ids.find(text.substr(i, len));
            if (it == set.ids.end())
                continue;
            const AddedToken &token = added[std::size_t(addedIndex[std::size_t(it->second)])];
            if (token.singleWord) {
                // The character before: back over at most three continuation bytes to its start.
                std::size_t previous = i > 0 ? i - 1 : 0;
                while (previous > 0 && (std::uint8_t(text[previous]) & 0xc0) == 0x80 && i - previous < 4)
                    --previous;
                const bool before = i > 0 && isWordCharacter(decodeUtf8(text, previous).value);
                const bool after = i + len < text.size() && isWordCharacter(decodeUtf8(text, i + len).value);
                if (before || after)
                    continue;
            }
            id = it->second;
            length = len;
            break;
        }
        if (!id) {
            ++i;
            continue;
        }
        const AddedToken &token = added[std::size_t(addedIndex[std::size_t(*id)])];
        std::size_t begin = i, end = i + length;
        if (token.lstrip)
            while (begin > limit && (text[begin - 1] == ' ' || text[begin - 1] == '\t' || text[begin - 1] == '\n' ||
                                     text[begin - 1] == '\r'))
                --begin;
        if (token.rstrip)
            while (end < text.size() &&
                   (text[end] == ' ' || text[end] == '\t' || text[end] == '\n' || text[end] == '\r'))
                ++end;
        out.push_back({begin, end, *id});
        limit = end;
        i = end;
    }
    return out;
}

} // namespace

void HfTokenizer::encode(std::string_view text, bool addSpecialTokens, Encoding &out) const
{
    const Data &d = *m_data;
    const std::vector<std::int32_t> &index = d.addedIndex;

    std::vector<std::int32_t> ids, words;
    std::int32_t word = 0;
    const auto emitText = [&](const std::string &normalized, bool first) {
        if (normalized.empty())
            return;
        std::vector<Piece> pieces{{normalized, first}};
        if (d.preTokenizer)
            pieces = d.preTokenize(*d.preTokenizer, std::move(pieces));
        for (const Piece &piece : pieces) {
            const std::size_t before = ids.size();
            d.model(piece.text, ids);
            words.resize(ids.size(), word);
            if (ids.size() > before)
                ++word;
        }
    };
    const auto emitAdded = [&](std::int32_t id) {
        ids.push_back(id);
        words.push_back(-1);
    };
    // Raw text first: tokens that are not normalized.
    std::size_t last = 0;
    const auto segment = [&](std::size_t begin, std::size_t end) {
        if (end <= begin)
            return;
        const std::string normalized = d.normalize(std::string(text.substr(begin, end - begin)));
        const auto inner = findAdded(normalized, d.addedNormalized, d.added, index);
        std::size_t at = 0;
        for (const AddedMatch &m : inner) {
            emitText(normalized.substr(at, m.begin - at), begin == 0 && at == 0);
            emitAdded(m.id);
            at = m.end;
        }
        emitText(normalized.substr(at), begin == 0 && at == 0);
    };
    for (const AddedMatch &m : findAdded(text, d.addedRaw, d.added, index)) {
        segment(last, m.begin);
        emitAdded(m.id);
        last = m.end;
    }
    segment(last, text.size());

    // The post-processor.
    std::vector<std::int32_t> finalIds, finalWords;
    const PostProcessor *templ = nullptr;
    if (addSpecialTokens) {
        if (d.post.kind == PostKind::Template || d.post.kind == PostKind::Bert)
            templ = &d.post;
        for (const PostProcessor &child : d.post.children)
            if (child.kind == PostKind::Template || child.kind == PostKind::Bert)
                templ = &child;
    }
    if (templ) {
        for (const auto &item : templ->single) {
            if (!item) {
                finalIds.insert(finalIds.end(), ids.begin(), ids.end());
                finalWords.insert(finalWords.end(), words.begin(), words.end());
            } else {
                finalIds.insert(finalIds.end(), item->begin(), item->end());
                finalWords.resize(finalIds.size(), -1);
            }
        }
    } else {
        finalIds = std::move(ids);
        finalWords = std::move(words);
    }
    for (std::size_t k = 0; k < finalIds.size(); ++k) {
        out.ids.push_back(finalIds[k]);
        const std::string *spelling = token(finalIds[k]);
        out.tokens.push_back(spelling ? *spelling : std::string());
        out.words.push_back(finalWords[k]);
    }
}

std::int64_t HfTokenizer::vocabularySize() const
{
    return std::int64_t(m_data->tokens.size());
}

const std::string *HfTokenizer::token(std::int32_t id) const
{
    if (id < 0 || std::size_t(id) >= m_data->tokens.size() || m_data->tokens[std::size_t(id)].empty())
        return nullptr;
    return &m_data->tokens[std::size_t(id)];
}

std::optional<std::int32_t> HfTokenizer::tokenId(std::string_view content) const
{
    const std::string key(content);
    if (const auto it = m_data->addedRaw.ids.find(key); it != m_data->addedRaw.ids.end())
        return it->second;
    if (const auto it = m_data->vocab.find(key); it != m_data->vocab.end())
        return it->second;
    return std::nullopt;
}

std::string HfTokenizer::tokenBytes(std::int32_t id) const
{
    const Data &d = *m_data;
    const std::string *spelling = token(id);
    if (!spelling)
        return std::string();
    if (d.isAdded[std::size_t(id)])
        return *spelling;
    std::string bytes;
    if (d.byteLevel) {
        for (std::size_t i = 0; i < spelling->size();) {
            const Utf8Char c = decodeUtf8(*spelling, i);
            const int b = unicodeToByte(c.value);
            if (b < 0) {
                bytes.append(*spelling, i, c.length);
            } else {
                bytes += char(b);
            }
            i += c.length;
        }
    } else if (d.byteFallback && spelling->size() == 6 && spelling->compare(0, 3, "<0x") == 0 &&
               (*spelling)[5] == '>') {
        bytes += char(std::stoi(spelling->substr(3, 2), nullptr, 16));
    } else {
        std::string_view s = *spelling;
        if (d.wordPiece && !d.prefix.empty() && s.substr(0, d.prefix.size()) == d.prefix)
            s.remove_prefix(d.prefix.size());
        bytes = std::string(s);
        if (d.metaspace) {
            std::string replaced;
            for (std::size_t at = 0; at < bytes.size();) {
                if (bytes.compare(at, 3, kMetaspace) == 0) {
                    replaced += ' ';
                    at += 3;
                } else {
                    replaced += bytes[at++];
                }
            }
            bytes = std::move(replaced);
        }
    }
    return bytes;
}

std::string HfTokenizer::displayText(std::int32_t id) const
{
    const Data &d = *m_data;
    const std::string *spelling = token(id);
    if (spelling && d.isAdded[std::size_t(id)])
        return *spelling;
    return legibleUtf8(tokenBytes(id));
}

} // namespace attnscope
