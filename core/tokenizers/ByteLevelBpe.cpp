#include "core/tokenizers/ByteLevelBpe.h"

#include "core/tokenizers/ByteLevelText.h"

#include "core/io/JsonDocument.h"
#include "core/io/UserText.h"
#include "core/tokenizers/Tokenizer.h"
#include "core/tokenizers/UnicodeText.h"

#include <cstdio>
#include <queue>

namespace attnscope {

namespace {

enum class CharKind : std::uint8_t { Space, Letter, Number, Other };

struct Char {
    std::uint32_t offset;
    CharKind kind;
};

CharKind charKind(const Utf8Char &c)
{
    if (!c.valid)
        return CharKind::Other;
    if (isWhiteSpace(c.value))
        return CharKind::Space;
    switch (unicodeClass(c.value)) {
    case UnicodeClass::Letter:
        return CharKind::Letter;
    case UnicodeClass::Number:
        return CharKind::Number;
    default:
        return CharKind::Other;
    }
}

// The length of the contraction ('s 't 're 've 'm 'll 'd) at text[at], or 0.
std::size_t contraction(std::string_view text, std::size_t at)
{
    if (text[at] != '\'' || at + 1 >= text.size())
        return 0;
    const char c = text[at + 1];
    if (c == 's' || c == 't' || c == 'm' || c == 'd')
        return 2;
    if (at + 2 < text.size()) {
        const std::string_view two = text.substr(at + 1, 2);
        if (two == "re" || two == "ve" || two == "ll")
            return 3;
    }
    return 0;
}

} // namespace

std::vector<std::string_view> gpt2PreTokenize(std::string_view text)
{
    std::vector<Char> chars;
    chars.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const Utf8Char c = decodeUtf8(text, at);
        chars.push_back({std::uint32_t(at), charKind(c)});
        at += c.length;
    }
    const std::size_t n = chars.size();
    const auto offset = [&](std::size_t i) { return i < n ? std::size_t(chars[i].offset) : text.size(); };
    std::vector<std::string_view> pieces;
    std::size_t i = 0;
    const auto emit = [&](std::size_t end) {
        pieces.push_back(text.substr(offset(i), offset(end) - offset(i)));
        i = end;
    };
    while (i < n) {
        if (const std::size_t length = contraction(text, offset(i))) { // all ASCII: bytes are chars
            emit(i + length);
            continue;
        }
        // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional U+0020, then a run of one kind.
        const std::size_t start = (text[offset(i)] == ' ' && i + 1 < n) ? i + 1 : i;
        const CharKind kind = chars[start].kind;
        if (kind != CharKind::Space) {
            std::size_t end = start + 1;
            while (end < n && chars[end].kind == kind)
                ++end;
            emit(end);
            continue;
        }
        // "\s+(?!\S)" takes a run of spaces but leaves its last one to the word after it;
        // "\s+" takes a lone space before a word.
        std::size_t end = i + 1;
        while (end < n && chars[end].kind == CharKind::Space)
            ++end;
        emit(end == n || end - i == 1 ? end : end - 1);
    }
    return pieces;
}

Result<ByteLevelBpe> ByteLevelBpe::fromText(std::string_view vocabJson, std::string_view merges,
                                            const std::string &vocabName, const std::string &mergesName)
{
    auto document = parseJsonDocument(vocabJson, JsonLimits{4, 1 << 24});
    if (!document)
        return Error{vocabName + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{vocabName + ": expected an object of tokens and their ids ({\"token\": id, ...})"};
    ByteLevelBpe bpe;
    bpe.m_tokens.reserve(document->size());
    bpe.m_ids.reserve(document->size());
    for (auto &[token, id] : document->items()) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX)
            return Error{vocabName + ": " + quotedText(token) + ": expected an id from 0 to " +
                         std::to_string(INT32_MAX) + ", found " + printableText(id.dump(), 40)};
        const auto symbol = std::int32_t(bpe.m_tokens.size());
        const auto value = std::int32_t(id.get<std::int64_t>());
        if (auto [at, fresh] = bpe.m_symbolOfId.emplace(value, symbol); !fresh)
            return Error{vocabName + ": the id " + std::to_string(value) + " is given to both " +
                         quotedText(bpe.m_tokens[std::size_t(at->second)]) + " and " + quotedText(token)};
        bpe.m_symbolOf.emplace(token, symbol); // keys are unique: the parser refuses duplicates
        bpe.m_tokens.push_back(token);
        bpe.m_ids.push_back(value);
    }
    for (unsigned b = 0; b < 256; ++b) {
        std::string spelling;
        appendUtf8(byteToUnicode(b), spelling);
        const auto it = bpe.m_symbolOf.find(spelling);
        if (it == bpe.m_symbolOf.end()) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", b);
            return Error{vocabName + ": no token " + quotedText(spelling) + " for the byte " + hex +
                         " (byte-level BPE needs all 256)"};
        }
        bpe.m_byteSymbol[b] = it->second;
    }
    if (const auto it = bpe.m_symbolOf.find("<|endoftext|>"); it != bpe.m_symbolOf.end())
        bpe.m_endOfText = it->second;

    std::int32_t rank = 0;
    std::size_t lineNumber = 0;
    for (std::size_t at = 0; at < merges.size();) {
        std::size_t end = merges.find('\n', at);
        if (end == std::string_view::npos)
            end = merges.size();
        std::string_view line = merges.substr(at, end - at);
        at = end + 1;
        ++lineNumber;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        const std::string where = mergesName + ":" + std::to_string(lineNumber) + ": ";
        if (line.starts_with("#version"))
            continue;
        const std::size_t space = line.find(' ');
        if (line.empty() || space == 0 || space == std::string_view::npos || space + 1 == line.size() ||
            line.find(' ', space + 1) != std::string_view::npos)
            return Error{where + "expected two tokens separated by one space, found " +
                         (line.empty() ? std::string("an empty line") : quotedText(line))};
        const std::string left(line.substr(0, space)), right(line.substr(space + 1));
        std::int32_t symbols[3];
        const std::string parts[3] = {left, right, left + right};
        for (int k = 0; k < 3; ++k) {
            const auto it = bpe.m_symbolOf.find(parts[k]);
            if (it == bpe.m_symbolOf.end())
                return Error{where + quotedText(parts[k]) + " is not in " + vocabName};
            symbols[k] = it->second;
        }
        // A pair listed twice keeps its last rank, as transformers' dictionary does.
        bpe.m_merges[pairKey(symbols[0], symbols[1])] = Merge{rank++, symbols[2]};
    }
    return bpe;
}

const std::string *ByteLevelBpe::token(std::int32_t id) const
{
    const auto it = m_symbolOfId.find(id);
    return it == m_symbolOfId.end() ? nullptr : &m_tokens[std::size_t(it->second)];
}

void ByteLevelBpe::mergePiece(std::string_view piece, std::vector<std::int32_t> &out) const
{
    const auto n = std::int32_t(piece.size());
    if (n == 1) {
        out.push_back(m_byteSymbol[static_cast<unsigned char>(piece[0])]);
        return;
    }
    struct Symbol {
        std::int32_t token, prev, next; // token -1: merged into the symbol before it
    };
    std::vector<Symbol> s(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i)
        s[std::size_t(i)] = {m_byteSymbol[static_cast<unsigned char>(piece[std::size_t(i)])], i - 1,
                             i + 1 < n ? i + 1 : -1};
    struct Candidate {
        std::int32_t rank, left, right, leftToken, rightToken, merged;
        // The heap's top is the lowest rank, and within a rank the leftmost pair.
        bool operator<(const Candidate &o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::priority_queue<Candidate> heap;
    const auto consider = [&](std::int32_t l, std::int32_t r) {
        if (l < 0 || r < 0 || s[std::size_t(l)].token < 0 || s[std::size_t(l)].next != r)
            return;
        const auto it = m_merges.find(pairKey(s[std::size_t(l)].token, s[std::size_t(r)].token));
        if (it != m_merges.end())
            heap.push({it->second.rank, l, r, s[std::size_t(l)].token, s[std::size_t(r)].token, it->second.merged});
    };
    for (std::int32_t i = 0; i + 1 < n; ++i)
        consider(i, i + 1);
    std::vector<std::pair<std::int32_t, std::int32_t>> formed;
    while (!heap.empty()) {
        // One rank at a time, left to right, and the pairs this forms only afterwards: as the
        // reference merges every occurrence of the best pair in one pass before looking again.
        const std::int32_t rank = heap.top().rank;
        formed.clear();
        while (!heap.empty() && heap.top().rank == rank) {
            const Candidate c = heap.top();
            heap.pop();
            Symbol &left = s[std::size_t(c.left)];
            Symbol &right = s[std::size_t(c.right)];
            if (left.token != c.leftToken || left.next != c.right || right.token != c.rightToken)
                continue; // stale: a neighbour merged first
            left.token = c.merged;
            left.next = right.next;
            if (right.next >= 0)
                s[std::size_t(right.next)].prev = c.left;
            right.token = -1;
            formed.emplace_back(left.prev, c.left);
            formed.emplace_back(c.left, left.next);
        }
        for (const auto &[l, r] : formed)
            consider(l, r);
    }
    for (std::int32_t i = 0; i >= 0; i = s[std::size_t(i)].next)
        out.push_back(s[std::size_t(i)].token);
}

void ByteLevelBpe::encode(std::string_view text, Encoding &out) const
{
    // Pieces repeat (words, spaces); each distinct one is merged once per call.
    std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> seen;
    std::vector<std::int32_t> symbols, words; // words: each symbol's pre-tokenizer piece, -1 for <|endoftext|>
    symbols.reserve(text.size() / 3 + 1);
    std::int32_t word = 0;
    const auto encodeSegment = [&](std::string_view segment) {
        for (std::string_view piece : gpt2PreTokenize(segment)) {
            auto [it, fresh] = seen.try_emplace(piece);
            if (!fresh) {
                for (std::size_t k = 0; k < it->second.second; ++k) {
                    const std::int32_t symbol = symbols[it->second.first + k];
                    symbols.push_back(symbol);
                }
            } else {
                const std::size_t start = symbols.size();
                mergePiece(piece, symbols);
                it->second = {start, symbols.size() - start};
            }
            if (symbols.size() > words.size()) {
                words.resize(symbols.size(), word);
                ++word;
            }
        }
    };
    const std::string_view endOfText = "<|endoftext|>";
    std::size_t at = 0;
    while (m_endOfText >= 0) {
        const std::size_t found = text.find(endOfText, at);
        if (found == std::string_view::npos)
            break;
        encodeSegment(text.substr(at, found - at));
        symbols.push_back(m_endOfText);
        words.push_back(-1);
        at = found + endOfText.size();
    }
    encodeSegment(text.substr(at));
    out.ids.reserve(out.ids.size() + symbols.size());
    out.tokens.reserve(out.tokens.size() + symbols.size());
    for (std::int32_t symbol : symbols) {
        out.ids.push_back(m_ids[std::size_t(symbol)]);
        out.tokens.push_back(m_tokens[std::size_t(symbol)]);
    }
    out.words.insert(out.words.end(), words.begin(), words.end());
}

} // namespace attnscope
