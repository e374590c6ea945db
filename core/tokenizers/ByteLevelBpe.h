#pragma once

#include "core/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnscope {

struct Encoding;

// GPT-2's pre-tokenization: the text cut where the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// cuts it, matched by hand with the classes of core/tokenizers/UnicodeText.h. A hand-written matcher,
// not a regex library, because core/ has no Qt (whose QRegularExpression is PCRE2) and std::regex
// has no \p{..}; the pattern is short, fixed and has one look-ahead, so a direct scan is both
// simpler to verify and linear in the text. \s is the White_Space property as in Oniguruma,
// Python's `regex` and Rust, which Hugging Face's tokenizers use (JavaScript's \s differs only at
// U+0085 and U+FEFF). Bytes that are not valid UTF-8 count as neither space, letter nor number.
// The pieces are views into text and cover it exactly.
std::vector<std::string_view> gpt2PreTokenize(std::string_view text);

// GPT-2's byte-level byte-pair encoding: each piece's UTF-8 bytes become vocabulary symbols
// through GPT-2's byte-to-unicode map, and adjacent symbols merge by the rank of their pair in
// merges.txt, lowest first, every occurrence of one pair before the next pair, exactly as
// OpenAI's encoder.py does (kept linear-logarithmic with a heap, so a word of a million letters
// is no slower per letter than a short one). Nothing is added around the ids.
class ByteLevelBpe
{
public:
    // vocabJson: vocab.json's text ({"token": id, ...}); merges: merges.txt's text ("#version"
    // line, then "left right" per line, rank by order). The names are what errors call them.
    // Strict: every merge's parts and result must be in the vocabulary, and so must the 256
    // byte symbols; ids are unique and non-negative.
    static Result<ByteLevelBpe> fromText(std::string_view vocabJson, std::string_view merges,
                                         const std::string &vocabName, const std::string &mergesName);

    void encode(std::string_view text, Encoding &out) const;

    std::int64_t vocabularySize() const { return std::int64_t(m_tokens.size()); }
    // The vocabulary's spelling of an id ("Ġworld"), or nullptr when no token has it.
    const std::string *token(std::int32_t id) const;

private:
    struct Merge {
        std::int32_t rank;
        std::int32_t merged; // symbol index of the result
    };
    static std::uint64_t pairKey(std::int32_t left, std::int32_t right)
    {
        return (std::uint64_t(std::uint32_t(left)) << 32) | std::uint32_t(right);
    }
    // Symbols of one piece, merged; appended to out as symbol indices.
    void mergePiece(std::string_view piece, std::vector<std::int32_t> &out) const;

    // Symbols are numbered in vocab.json's order; m_ids maps them to the file's ids.
    std::vector<std::string> m_tokens;
    std::vector<std::int32_t> m_ids;
    std::unordered_map<std::string, std::int32_t> m_symbolOf;
    std::unordered_map<std::int32_t, std::int32_t> m_symbolOfId;
    std::unordered_map<std::uint64_t, Merge> m_merges;
    std::int32_t m_byteSymbol[256] = {};
    std::int32_t m_endOfText = -1; // "<|endoftext|>", split out of the text as transformers does
};

} // namespace attnscope
