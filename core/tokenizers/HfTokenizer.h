#pragma once

#include "core/Result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

struct Encoding;

// A Hugging Face `tokenizer.json` (the `tokenizers` library's file), read natively and encoded
// as `Tokenizer.from_file(p).encode(text)` does. Supported, as today's Qwen, Llama, Gemma,
// Mistral, GPT-2 and BERT files use them:
//   normalizer:     Sequence, NFC, NFD, NFKC, NFKD, Lowercase, Replace (String or Regex), Prepend,
//                   Strip, BertNormalizer, or null;
//   pre_tokenizer:  Sequence, ByteLevel (add_prefix_space, use_regex: GPT-2's pattern), Split
//                   (String or Regex pattern, behavior Removed, Isolated, MergedWithPrevious,
//                   MergedWithNext or Contiguous, invert), Metaspace (replacement,
//                   prepend_scheme always/first/never or the older add_prefix_space, split),
//                   BertPreTokenizer, Whitespace, WhitespaceSplit, Digits, or null;
//   model:          BPE (vocab, merges as "a b" strings or ["a", "b"] pairs, ignore_merges,
//                   byte_fallback, unk_token, fuse_unk, continuing_subword_prefix,
//                   end_of_word_suffix; dropout null or 0 only) and WordPiece;
//   added_tokens:   split out of the text first, leftmost-longest, honouring lstrip, rstrip,
//                   single_word and normalized (normalized tokens are matched in the normalized
//                   text);
//   post_processor: TemplateProcessing (its single template), ByteLevel (changes no ids),
//                   BertProcessing, RobertaProcessing, Sequence, or null.
// The decoder is read only to know how tokens read (displayText). Anything else is refused in
// one line naming the field and its type ("m/tokenizer.json: pre_tokenizer type
// "UnicodeScripts" is not supported"), never approximated.
class HfTokenizer
{
public:
    // `shownName` is what errors call the file.
    static Result<HfTokenizer> fromJson(std::string_view json, const std::string &shownName);

    // Appends the text's tokens to `out` (ids, tokens, words); with addSpecialTokens the
    // post-processor's tokens too (transformers' add_special_tokens).
    void encode(std::string_view text, bool addSpecialTokens, Encoding &out) const;

    std::int64_t vocabularySize() const;
    const std::string *token(std::int32_t id) const;
    // See Tokenizer::displayText.
    std::string displayText(std::int32_t id) const;
    // The bytes a token stands for (Tokenizer::tokenBytes).
    std::string tokenBytes(std::int32_t id) const;
    // The id of an added or vocabulary token spelled exactly `content`.
    std::optional<std::int32_t> tokenId(std::string_view content) const;

    struct Data;

private:
    std::shared_ptr<const Data> m_data;
};

} // namespace attnscope
