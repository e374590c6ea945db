#pragma once

#include "core/Result.h"
#include "core/tokenizers/Tokenizer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnscope {

// BERT's tokenizer: the basic tokenizer's normalisation and splitting, then greedy
// longest-match-first WordPiece with "##" continuation pieces, wrapped in [CLS] ... [SEP].
//
// Normalisation follows Hugging Face's fast BertNormalizer, which AutoTokenizer loads, in its
// order: drop U+0000, U+FFFD and controls (C*, but tab, newline and return are spaces), turn
// White_Space into spaces, put spaces around CJK ideographs (transformers' _is_chinese_char
// blocks), strip accents (NFD, then drop Mn) when stripAccents says so (unset: as lowerCase),
// lower-case per character. Then split at spaces and isolate each punctuation character (P*, and
// every ASCII symbol such as $ + < = > ^ ` | ~). A word longer than maxCharactersPerWord, or one
// WordPiece cannot cover from the vocabulary, becomes [UNK] whole. (The slow Python tokenizer
// differs only on exotic characters: it keeps unassigned and private-use code points and U+2028,
// and removes U+000B, U+000C and U+0085 instead of splitting at them.)
class WordPiece
{
public:
    // vocabTxt: vocab.txt's text, one token per line, the id being the line's index. Needs
    // [UNK], [CLS] and [SEP]; a token listed twice keeps its last id, as transformers does.
    static Result<WordPiece> fromText(std::string_view vocabTxt, const WordPieceOptions &options,
                                      const std::string &vocabName);

    void encode(std::string_view text, Encoding &out) const;

    std::int64_t vocabularySize() const { return std::int64_t(m_tokens.size()); }
    const std::string *token(std::int32_t id) const;

private:
    std::int32_t idOf(const std::string &token) const;
    // Normalises and splits one stretch of text between special tokens, appending words.
    void splitWords(std::string_view text, std::vector<std::u32string> &words) const;
    void appendWord(const std::u32string &word, Encoding &out) const;
    void append(std::int32_t id, Encoding &out) const;

    std::vector<std::string> m_tokens; // by id (line index)
    std::unordered_map<std::string, std::int32_t> m_idOf;
    std::vector<std::pair<std::string, std::int32_t>> m_specials; // matched in the raw text
    WordPieceOptions m_options;
    std::int32_t m_unk = -1, m_cls = -1, m_sep = -1;
};

} // namespace attnscope
