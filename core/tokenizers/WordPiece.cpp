#include "core/tokenizers/WordPiece.h"

#include "core/io/UserText.h"
#include "core/tokenizers/UnicodeText.h"

#include <algorithm>

namespace attnscope {

namespace {

// BERT counts every ASCII symbol as punctuation ("$", "+", "^"...), not only Unicode's P*.
bool isPunctuation(char32_t c)
{
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
        return true;
    return unicodeClass(c) == UnicodeClass::Punctuation;
}

bool isValidUtf8(std::string_view text)
{
    for (std::size_t at = 0; at < text.size();) {
        const Utf8Char c = decodeUtf8(text, at);
        if (!c.valid)
            return false;
        at += c.length;
    }
    return true;
}

} // namespace

Result<WordPiece> WordPiece::fromText(std::string_view vocabTxt, const WordPieceOptions &options,
                                      const std::string &vocabName)
{
    WordPiece wp;
    wp.m_options = options;
    std::size_t lineNumber = 0;
    for (std::size_t at = 0; at < vocabTxt.size();) {
        std::size_t end = vocabTxt.find('\n', at);
        if (end == std::string_view::npos)
            end = vocabTxt.size();
        std::string_view line = vocabTxt.substr(at, end - at);
        at = end + 1;
        ++lineNumber;
        // transformers trims the end of each line (a "\r" of Windows line ends, stray spaces).
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        if (!isValidUtf8(line))
            return Error{vocabName + ":" + std::to_string(lineNumber) + ": not valid UTF-8 (" + printableText(line) +
                         ")"};
        if (wp.m_tokens.size() >= std::size_t(INT32_MAX))
            return Error{vocabName + ": more than " + std::to_string(INT32_MAX) + " tokens", ErrorKind::TooLarge};
        const auto id = std::int32_t(wp.m_tokens.size());
        wp.m_tokens.emplace_back(line);
        wp.m_idOf[std::string(line)] = id;
    }
    if (wp.m_tokens.empty())
        return Error{vocabName + ": the file is empty (expected one token per line)"};
    for (const char *name : {"[UNK]", "[CLS]", "[SEP]"})
        if (wp.idOf(name) < 0)
            return Error{vocabName + ": has no " + name + " token, which BERT's tokenizer needs"};
    wp.m_unk = wp.idOf("[UNK]");
    wp.m_cls = wp.idOf("[CLS]");
    wp.m_sep = wp.idOf("[SEP]");
    for (const char *name : {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"})
        if (const std::int32_t id = wp.idOf(name); id >= 0)
            wp.m_specials.emplace_back(name, id);
    return wp;
}

std::int32_t WordPiece::idOf(const std::string &token) const
{
    const auto it = m_idOf.find(token);
    return it == m_idOf.end() ? -1 : it->second;
}

const std::string *WordPiece::token(std::int32_t id) const
{
    return id >= 0 && std::size_t(id) < m_tokens.size() ? &m_tokens[std::size_t(id)] : nullptr;
}

void WordPiece::append(std::int32_t id, Encoding &out) const
{
    out.ids.push_back(id);
    out.tokens.push_back(m_tokens[std::size_t(id)]);
    out.words.push_back(-1);
}

void WordPiece::splitWords(std::string_view text, std::vector<std::u32string> &words) const
{
    std::u32string cleaned;
    cleaned.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const Utf8Char c = decodeUtf8(text, at);
        at += c.length;
        const char32_t v = c.value;
        if (!c.valid || v == 0 || v == 0xfffd)
            continue;
        if (v == '\t' || v == '\n' || v == '\r') {
            cleaned += U' ';
        } else if (unicodeClass(v) == UnicodeClass::Control) {
            continue;
        } else if (isWhiteSpace(v)) {
            cleaned += U' ';
        } else if (m_options.splitChineseCharacters && isChineseCharacter(v)) {
            cleaned += U' ';
            cleaned += v;
            cleaned += U' ';
        } else {
            cleaned += v;
        }
    }
    if (m_options.stripAccents.value_or(m_options.lowerCase)) {
        std::u32string stripped;
        stripped.reserve(cleaned.size());
        for (char32_t v : cleaned)
            appendWithoutAccents(v, stripped);
        cleaned.swap(stripped);
    }
    if (m_options.lowerCase) {
        std::u32string lower;
        lower.reserve(cleaned.size());
        for (char32_t v : cleaned)
            appendLowerCase(v, lower);
        cleaned.swap(lower);
    }
    std::u32string word;
    const auto flush = [&] {
        if (!word.empty())
            words.push_back(std::move(word));
        word.clear();
    };
    for (char32_t v : cleaned) {
        if (isWhiteSpace(v)) {
            flush();
        } else if (isPunctuation(v)) {
            flush();
            words.emplace_back(1, v);
        } else {
            word += v;
        }
    }
    flush();
}

void WordPiece::appendWord(const std::u32string &word, Encoding &out) const
{
    if (std::int64_t(word.size()) > m_options.maxCharactersPerWord) {
        append(m_unk, out);
        return;
    }
    // Greedy longest match first: the longest vocabulary piece at each start, "##" after the first.
    std::string utf8;
    std::vector<std::size_t> offsets; // byte offset of each character, and of the end
    for (char32_t v : word) {
        offsets.push_back(utf8.size());
        appendUtf8(v, utf8);
    }
    offsets.push_back(utf8.size());
    std::vector<std::int32_t> pieces;
    std::string candidate;
    for (std::size_t start = 0; start < word.size();) {
        std::int32_t found = -1;
        std::size_t end = word.size();
        for (; end > start; --end) {
            candidate.assign(start > 0 ? "##" : "");
            candidate.append(utf8, offsets[start], offsets[end] - offsets[start]);
            if ((found = idOf(candidate)) >= 0)
                break;
        }
        if (found < 0) {
            append(m_unk, out);
            return;
        }
        pieces.push_back(found);
        start = end;
    }
    for (std::int32_t id : pieces)
        append(id, out);
}

void WordPiece::encode(std::string_view text, Encoding &out) const
{
    append(m_cls, out);
    std::vector<std::u32string> words;
    std::int32_t wordIndex = 0; // each basic-tokenizer word's index, for Encoding::words
    const auto encodeStretch = [&](std::string_view stretch) {
        words.clear();
        splitWords(stretch, words);
        for (const std::u32string &word : words) {
            const std::size_t before = out.ids.size();
            appendWord(word, out);
            out.words.resize(out.ids.size(), -1);
            if (out.ids.size() > before) {
                std::fill(out.words.begin() + std::ptrdiff_t(before), out.words.end(), wordIndex);
                ++wordIndex;
            }
        }
    };
    // Special tokens written in the text are taken as they are, before any normalisation.
    std::size_t from = 0;
    for (std::size_t at = 0; at < text.size(); ++at) {
        if (text[at] != '[')
            continue;
        for (const auto &[name, id] : m_specials) {
            if (text.substr(at).starts_with(name)) {
                encodeStretch(text.substr(from, at - from));
                append(id, out);
                from = at + name.size();
                at = from - 1;
                break;
            }
        }
    }
    encodeStretch(text.substr(from));
    append(m_sep, out);
}

} // namespace attnscope
