#pragma once

#include "core/Result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// Text as a model reads it: the ids, and each id's token as the vocabulary spells it
// ("Ġworld" for GPT-2, "##ing" for BERT).
struct Encoding {
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;
};

enum class TokenizerKind {
    Gpt2ByteLevelBpe, // model_type "gpt2": vocab.json + merges.txt
    BertWordPiece,    // model_type "bert": vocab.txt (+ tokenizer_config.json)
};

// BERT's normalisation switches, as tokenizer_config.json names them (these defaults are
// transformers' when the file or a key is missing).
struct WordPieceOptions {
    bool lowerCase = true;                   // do_lower_case
    std::optional<bool> stripAccents;        // strip_accents; unset (null) follows lowerCase
    bool splitChineseCharacters = true;      // tokenize_chinese_chars
    std::int64_t maxCharactersPerWord = 100; // longer words become [UNK]
};

class ByteLevelBpe;
class WordPiece;

// A loaded tokenizer; cheap to copy (the vocabulary is shared) and safe to use from several
// threads at once (encode() changes nothing).
//
// encode() gives what Hugging Face's `tokenizer(text).input_ids` gives (the fast tokenizer,
// which AutoTokenizer loads): GPT-2 adds nothing, BERT wraps the text in [CLS] ... [SEP]. The
// special tokens of the vocabulary ("<|endoftext|>"; [CLS], [SEP], [PAD], [MASK], [UNK]) written
// in the text are recognised as such, as transformers does. encode() never fails: text that is
// not valid UTF-8 is tokenized byte by byte where it is invalid (GPT-2 keeps every byte; BERT
// drops them as it drops U+FFFD).
class Tokenizer
{
public:
    // From file contents; `names` are what errors call the files (paths, usually).
    static Result<Tokenizer> gpt2(std::string_view vocabJson, std::string_view merges, const std::string &vocabName,
                                  const std::string &mergesName);
    static Result<Tokenizer> bert(std::string_view vocabTxt, const WordPieceOptions &options,
                                  const std::string &vocabName);

    TokenizerKind kind() const { return m_bpe ? TokenizerKind::Gpt2ByteLevelBpe : TokenizerKind::BertWordPiece; }
    Encoding encode(std::string_view text) const;
    std::int64_t vocabularySize() const;
    // The vocabulary's spelling of an id, or nothing when no token has that id (labels for
    // ids given directly).
    std::optional<std::string> token(std::int32_t id) const;

private:
    Tokenizer() = default; // only the factories make one, so exactly one model is set
    std::shared_ptr<const ByteLevelBpe> m_bpe;
    std::shared_ptr<const WordPiece> m_wordPiece;
};

// Reads a Hugging Face model folder's tokenizer: config.json's model_type ("gpt2" or "bert")
// says which files follow (vocab.json + merges.txt, or vocab.txt and tokenizer_config.json's
// do_lower_case / strip_accents / tokenize_chinese_chars when that file exists). Every failure
// is one line naming the file, and the line where it has lines:
//   "m/merges.txt:7: expected two tokens separated by one space, found "abc"",
//   "m/config.json: model_type "llama" is not supported (gpt2 or bert)" (kind Unsupported),
//   "m/vocab.txt: no such file (a model folder as transformers saves it holds a BERT tokenizer's vocab.txt)" (Io).
Result<Tokenizer> loadTokenizer(const std::string &modelDir);

// config.json's model_type, checked to be a string ("gpt2", "bert", or anything else).
Result<std::string> readModelType(const std::string &modelDir);

} // namespace attnscope
