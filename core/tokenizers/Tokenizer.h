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
//
// `words`: the word of each token as the tokenizer itself cuts the text (the index of the
// pre-tokenizer's piece, counted from 0 over the pieces that gave tokens, non-decreasing), and
// -1 for added and special tokens, those typed in the text and those the post-processor (or
// BERT) adds. GPT-2's pieces are its pattern's ("Ġworld", " 123"), BERT's its basic
// tokenizer's words and punctuation; a tokenizer.json without a pre-tokenizer (Llama 2's,
// Gemma's) makes each stretch of text between added tokens one word.
struct Encoding {
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;
    std::vector<std::int32_t> words;
};

enum class TokenizerKind {
    Gpt2ByteLevelBpe,    // model_type "gpt2": vocab.json + merges.txt
    BertWordPiece,       // model_type "bert": vocab.txt (+ tokenizer_config.json)
    HuggingFaceJson,     // tokenizer.json (core/tokenizers/HfTokenizer.h says what it supports)
    MarianSentencePiece, // model_type "marian": source.spm or target.spm + vocab.json
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
class HfTokenizer;
class MarianSentencePiece;
struct MarianVocabulary;

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

    // A Hugging Face tokenizer.json's contents; errors name the file as `shownName`.
    static Result<Tokenizer> fromJson(std::string_view json, const std::string &shownName);
    // One side of a Marian folder's tokenizer (MarianTokenizer.h): its SentencePiece model's
    // bytes and the shared vocab.json.
    static Result<Tokenizer> marian(std::string_view spmModel, std::shared_ptr<const MarianVocabulary> vocabulary,
                                    const std::string &shownSpmName);

    TokenizerKind kind() const;
    Encoding encode(std::string_view text) const { return encode(text, true); }
    // With addSpecialTokens false, what `tokenizer(text, add_special_tokens=False)` gives: no
    // post-processor tokens (BERT: no [CLS] and [SEP]); special tokens typed in the text stay.
    Encoding encode(std::string_view text, bool addSpecialTokens) const;
    std::int64_t vocabularySize() const;
    // The vocabulary's spelling of an id, or nothing when no token has that id (labels for
    // ids given directly).
    std::optional<std::string> token(std::int32_t id) const;
    // The id of the token spelled exactly `spelling` (an added or special token such as
    // "<|start_header_id|>", or a vocabulary entry), or nothing.
    std::optional<std::int32_t> tokenId(std::string_view spelling) const;

    // A token as a reader sees it, in UTF-8: byte-level pieces ("Ġworld", "ä½") decoded to
    // their bytes (" world"), Metaspace's "▁" as a space, a byte-fallback piece "<0xE4>" as
    // its byte, WordPiece's "##ing" without its "##"; added and special tokens as they are
    // spelled. Bytes that do not form valid UTF-8 on their own (one token holding the first
    // byte of 你) are shown each as "\xE4" (backslash, x, two upper-case hex digits), so a
    // token is always legible and never invalid text. Empty for an id no token has.
    std::string displayText(std::int32_t id) const;
    // The bytes a token stands for, as displayText reads them but not made legible: the first
    // byte of 你 alone, which the next token completes. Added tokens as spelled.
    std::string tokenBytes(std::int32_t id) const;
    // A run of ids as text: their bytes joined, then made legible as displayText does (a
    // character cut between two tokens reads whole).
    std::string decode(const std::vector<std::int32_t> &ids) const;

private:
    Tokenizer() = default; // only the factories make one, so exactly one model is set
    std::shared_ptr<const ByteLevelBpe> m_bpe;
    std::shared_ptr<const WordPiece> m_wordPiece;
    std::shared_ptr<const HfTokenizer> m_json;
    std::shared_ptr<const MarianSentencePiece> m_marian;
};

// Reads a Hugging Face model folder's tokenizer. When config.json's model_type is "gpt2" or
// "bert" and that tokenizer's own files are there (vocab.json and/or merges.txt, or vocab.txt with
// tokenizer_config.json's do_lower_case / strip_accents / tokenize_chinese_chars when that file
// exists), they are read as before; otherwise, for any model_type, tokenizer.json. Every
// failure is one line naming the file, and the line where it has lines:
//   "m/merges.txt:7: expected two tokens separated by one space, found "abc"",
//   "m/tokenizer.json: pre_tokenizer type "UnicodeScripts" is not supported" (kind Unsupported),
//   "m/tokenizer.json: no such file (a model folder as transformers saves it holds tokenizer.json, or vocab.json and
//   merges.txt for GPT-2, vocab.txt for BERT)" (Io).
// A Marian folder (model_type "marian") gives its source side.
Result<Tokenizer> loadTokenizer(const std::string &modelDir);

// A Marian folder's two sides: source.spm and target.spm, both looked up in vocab.json. A
// folder with target_vocab.json (separate vocabularies) is refused by name.
struct TranslationTokenizers {
    Tokenizer source, target;
};
Result<TranslationTokenizers> loadTranslationTokenizers(const std::string &modelDir);

// config.json's model_type, checked to be a string ("gpt2", "bert", or anything else).
Result<std::string> readModelType(const std::string &modelDir);

} // namespace attnscope
