#pragma once

#include "core/Result.h"
#include "core/tokenizers/Tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attnscope {

// A Marian folder's vocab.json: the one vocabulary both languages' pieces are looked up in
// (design.md, "encoder–decoder translation models"). Every id from 0 to N-1 is given to
// exactly one token; "</s>", "<unk>" and "<pad>" must be there.
struct MarianVocabulary {
    std::vector<std::string> tokens; // by id
    std::unordered_map<std::string, std::int32_t> ids;
    std::int32_t eos = -1, unk = -1, pad = -1;

    // Errors are one line naming the file as `shownName`:
    //   "m/vocab.json: the id 70 is given to both "▁a" and "▁b"".
    static Result<std::shared_ptr<const MarianVocabulary>> fromJson(std::string_view json,
                                                                    const std::string &shownName);
};

// MarianTokenizer of transformers, one language side of it: a leading ">>lang<<" code kept as
// one token (the regex ">>.+<<" matched at the start; every match of it is removed from the
// text), the rest split by that side's SentencePiece model (source.spm or target.spm, with its
// own normaliser, through Debian's libsentencepiece), each piece looked up in vocab.json
// (missing: "<unk>"), then "</s>". "</s>", "<unk>" and "<pad>" typed in the text are split out
// first and kept as themselves, as transformers' tokenize() does. SentencePiece's own ids are
// never used.
class MarianSentencePiece
{
public:
    // spmModel: the .spm file's bytes (a serialized SentencePiece ModelProto).
    static Result<MarianSentencePiece> create(std::string_view spmModel,
                                              std::shared_ptr<const MarianVocabulary> vocabulary,
                                              const std::string &shownSpmName);

    void encode(std::string_view text, bool addSpecialTokens, Encoding &out) const;
    std::int64_t vocabularySize() const { return std::int64_t(m_vocabulary->tokens.size()); }
    const std::string *token(std::int32_t id) const;
    std::optional<std::int32_t> tokenId(std::string_view spelling) const;
    // The text a token stands for: "▁" read as a space; special tokens and codes as spelled.
    std::string tokenBytes(std::int32_t id) const;
    const MarianVocabulary &vocabulary() const { return *m_vocabulary; }

private:
    MarianSentencePiece() = default;
    // transformers' _tokenize of one stretch between special tokens.
    void encodePiece(std::string_view text, int &word, Encoding &out) const;

    std::shared_ptr<const sentencepiece::SentencePieceProcessor> m_processor;
    std::shared_ptr<const MarianVocabulary> m_vocabulary;
};

// The language code at the start of text (">>fra<<", as the regex ">>.+<<" matches it there:
// greedily, up to the last "<<" of the first line), or empty; and text with every match of the
// regex removed, as re.sub does. Exposed for tests.
std::string_view marianLanguageCode(std::string_view text);
std::string withoutMarianLanguageCodes(std::string_view text);

} // namespace attnscope
