#pragma once

// Internal to core/tokenizers/HfTokenizer*.cpp: the parsed components of a tokenizer.json.

#include "core/tokenizers/HfTokenizer.h"
#include "core/tokenizers/TokenRegex.h"
#include "core/tokenizers/UnicodeText.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attnscope {

// The parts of a tokenizer.json, shared by the reader (HfTokenizerReader.cpp) and the encoder
// (HfTokenizer.cpp); nothing outside those two files includes this header.
namespace hfjson {

using Json = nlohmann::json;

// GPT-2's pre-tokenizer pattern, which ByteLevel's use_regex applies.
constexpr const char *kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char *kMetaspace = "\xe2\x96\x81"; // U+2581 LOWER ONE EIGHTH BLOCK

inline std::u32string toChars(std::string_view text)
{
    std::u32string chars;
    chars.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const Utf8Char c = decodeUtf8(text, i);
        chars.push_back(c.value);
        i += c.length;
    }
    return chars;
}

inline std::string toUtf8(std::u32string_view chars)
{
    std::string out;
    appendUtf8(chars, out);
    return out;
}

// A literal or regex pattern (Split, Replace): {"String": "..."} or {"Regex": "..."}.
struct Pattern {
    std::string literal;
    std::optional<TokenRegex> regex;

    std::vector<TokenRegex::Match> findAll(std::string_view text) const
    {
        if (regex)
            return regex->findAll(text);
        std::vector<TokenRegex::Match> out;
        if (literal.empty())
            return out;
        for (std::size_t at = text.find(literal); at != std::string_view::npos;
             at = text.find(literal, at + literal.size()))
            out.push_back({at, at + literal.size()});
        return out;
    }
};

enum class NormalizerKind { Sequence, Nfc, Nfd, Nfkc, Nfkd, Lowercase, Replace, Prepend, Strip, Bert };

struct Normalizer {
    NormalizerKind kind = NormalizerKind::Sequence;
    std::vector<Normalizer> children;
    Pattern pattern;
    std::string content;              // Replace's content, Prepend's prepend
    bool left = false, right = false; // Strip
    bool cleanText = true, chineseChars = true, lowercase = true;
    std::optional<bool> stripAccents;
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
enum class PreTokenizerKind { Sequence, ByteLevel, Split, Metaspace, Bert, Whitespace, WhitespaceSplit, Digits };
enum class PrependScheme { Always, First, Never };

struct PreTokenizer {
    PreTokenizerKind kind = PreTokenizerKind::Sequence;
    std::vector<PreTokenizer> children;
    Pattern pattern;
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool addPrefixSpace = false, useRegex = true; // ByteLevel
    std::string replacement = kMetaspace;         // Metaspace
    PrependScheme prepend = PrependScheme::Always;
    bool split = true;
    bool individualDigits = false;
};

enum class PostKind { None, Template, ByteLevel, Bert, Sequence };

struct PostProcessor {
    PostKind kind = PostKind::None;
    std::vector<PostProcessor> children;
    // Template (single) and Bert/Roberta as a template: each item a list of ids, or the sequence.
    std::vector<std::optional<std::vector<std::int32_t>>> single;
};

struct AddedToken {
    std::string content;
    std::int32_t id = 0;
    bool special = false, lstrip = false, rstrip = false, normalized = false, singleWord = false;
};

// A stretch of text after pre-tokenization; `first` when it starts the original text
// (Metaspace's prepend_scheme "first").
struct Piece {
    std::string text;
    bool first = false;
};

// Added tokens matched in one pass over the text: by content (looked up without copying the
// text), with the lengths to try (longest first) and the bytes a token can start with.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct AddedSet {
    std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> ids;
    std::vector<std::size_t> lengths; // distinct, longest first
    bool firstByte[256] = {};

    void add(const std::string &content, std::int32_t id)
    {
        ids.emplace(content, id);
        firstByte[std::uint8_t(content[0])] = true;
        if (std::find(lengths.begin(), lengths.end(), content.size()) == lengths.end()) {
            lengths.push_back(content.size());
            std::sort(lengths.begin(), lengths.end(), std::greater<>());
        }
    }
};

} // namespace hfjson

struct HfTokenizer::Data {
    using Normalizer = hfjson::Normalizer;
    using PreTokenizer = hfjson::PreTokenizer;
    using PostProcessor = hfjson::PostProcessor;
    using AddedToken = hfjson::AddedToken;
    using AddedSet = hfjson::AddedSet;
    using Piece = hfjson::Piece;

    std::string shownName;
    std::optional<Normalizer> normalizer;
    std::optional<PreTokenizer> preTokenizer;
    PostProcessor post;
    std::vector<AddedToken> added;
    AddedSet addedRaw;        // matched in the text as typed (normalized: false)
    AddedSet addedNormalized; // matched in the normalized text, by their normalized content

    // The model.
    bool wordPiece = false;
    std::unordered_map<std::string, std::int32_t> vocab;
    std::unordered_map<std::uint64_t, std::pair<std::int32_t, std::int32_t>> merges; // (a,b) -> (rank, id)
    std::optional<std::int32_t> unk;
    bool byteFallback = false, fuseUnk = false, ignoreMerges = false;
    std::string prefix, suffix; // continuing_subword_prefix, end_of_word_suffix
    std::int64_t maxCharsPerWord = 100;
    std::int32_t byteIds[256] = {}; // <0x00>..<0xFF>, -1 where the vocabulary lacks one

    std::vector<std::string> tokens; // by id; empty for ids no token has
    std::vector<bool> isAdded;
    std::vector<std::int32_t> addedIndex; // by id: the added token's index in `added`, or -1
    bool byteLevel = false, metaspace = false;

    std::string normalize(std::string text) const;
    std::vector<Piece> preTokenize(const PreTokenizer &p, std::vector<Piece> pieces) const;
    void model(const std::string &piece, std::vector<std::int32_t> &ids) const;
    void bpe(const std::string &piece, std::vector<std::int32_t> &ids) const;
    void wordPieceModel(const std::string &piece, std::vector<std::int32_t> &ids) const;
};

} // namespace attnscope
