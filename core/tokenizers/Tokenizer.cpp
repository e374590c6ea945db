#include "core/tokenizers/Tokenizer.h"

#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/tokenizers/ByteLevelBpe.h"
#include "core/tokenizers/ByteLevelText.h"
#include "core/tokenizers/HfTokenizer.h"
#include "core/tokenizers/MarianTokenizer.h"
#include "core/tokenizers/UnicodeText.h"
#include "core/tokenizers/WordPiece.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace attnscope {

namespace {

// Vocabularies run to a few MB (GPT-2's vocab.json is 1 MB, multilingual ones 10 MB); a
// configuration file to a few KB.
constexpr std::int64_t kMaxVocabularyBytes = std::int64_t(256) << 20;
constexpr std::int64_t kMaxConfigBytes = std::int64_t(16) << 20;

// A path as messages show it: control characters escaped, a very long one cut.
std::string shownPath(const std::string &path)
{
    return printableText(path, 200);
}

// A file the model folder must have; `needs` completes "... holds" in the message when it is
// missing ("vocab.json and merges.txt beside config.json").
Result<std::string> readModelFile(const std::string &path, std::int64_t maxBytes, const char *needs, bool text = true)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Error{shownPath(path) + ": no such file (a model folder as transformers saves it holds " + needs + ")",
                     ErrorKind::Io};
    return readInputFile(path, maxBytes, text);
}

Result<nlohmann::ordered_json> readJsonObject(const std::string &path, const char *needs)
{
    auto text = readModelFile(path, std::min(maxInputFileBytes(), kMaxConfigBytes), needs);
    if (!text)
        return text.error();
    auto document = parseJsonDocument(*text);
    if (!document)
        return Error{shownPath(path) + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shownPath(path) + ": expected a JSON object ({...})"};
    return std::move(*document);
}

// tokenizer_config.json's switches; a missing file leaves transformers' defaults.
Result<WordPieceOptions> readWordPieceOptions(const std::string &modelDir)
{
    WordPieceOptions options;
    const auto inside = modelFolderFile(modelDir, "tokenizer_config.json");
    if (!inside)
        return inside.error();
    const std::string &path = *inside;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return options;
    auto config = readJsonObject(path, "tokenizer_config.json");
    if (!config)
        return config.error();
    const auto flag = [&](const char *key, bool &value, bool nullable, bool &isNull) -> Status {
        const auto it = config->find(key);
        if (it == config->end())
            return Ok{};
        if (nullable && it->is_null()) {
            isNull = true;
            return Ok{};
        }
        if (!it->is_boolean())
            return Error{shownPath(path) + ": " + key + ": expected true or false" + (nullable ? " or null" : "") +
                         ", found " + printableText(it->dump(), 40)};
        value = it->get<bool>();
        return Ok{};
    };
    bool unusedNull = false, stripNull = false, strip = false;
    if (Status s = flag("do_lower_case", options.lowerCase, false, unusedNull); !s)
        return s.error();
    if (Status s = flag("tokenize_chinese_chars", options.splitChineseCharacters, false, unusedNull); !s)
        return s.error();
    if (config->contains("strip_accents")) {
        if (Status s = flag("strip_accents", strip, true, stripNull); !s)
            return s.error();
        if (!stripNull)
            options.stripAccents = strip;
    }
    return options;
}

} // namespace

Result<Tokenizer> Tokenizer::gpt2(std::string_view vocabJson, std::string_view merges, const std::string &vocabName,
                                  const std::string &mergesName)
{
    auto bpe = ByteLevelBpe::fromText(vocabJson, merges, vocabName, mergesName);
    if (!bpe)
        return bpe.error();
    Tokenizer t;
    t.m_bpe = std::make_shared<const ByteLevelBpe>(std::move(*bpe));
    return t;
}

Result<Tokenizer> Tokenizer::bert(std::string_view vocabTxt, const WordPieceOptions &options,
                                  const std::string &vocabName)
{
    auto wordPiece = WordPiece::fromText(vocabTxt, options, vocabName);
    if (!wordPiece)
        return wordPiece.error();
    Tokenizer t;
    t.m_wordPiece = std::make_shared<const WordPiece>(std::move(*wordPiece));
    return t;
}

Result<Tokenizer> Tokenizer::fromJson(std::string_view json, const std::string &shownName)
{
    auto parsed = HfTokenizer::fromJson(json, shownName);
    if (!parsed)
        return parsed.error();
    Tokenizer t;
    t.m_json = std::make_shared<const HfTokenizer>(std::move(*parsed));
    return t;
}

Result<Tokenizer> Tokenizer::marian(std::string_view spmModel, std::shared_ptr<const MarianVocabulary> vocabulary,
                                    const std::string &shownSpmName)
{
    auto side = MarianSentencePiece::create(spmModel, std::move(vocabulary), shownSpmName);
    if (!side)
        return side.error();
    Tokenizer t;
    t.m_marian = std::make_shared<const MarianSentencePiece>(std::move(*side));
    return t;
}

TokenizerKind Tokenizer::kind() const
{
    return m_json     ? TokenizerKind::HuggingFaceJson
           : m_bpe    ? TokenizerKind::Gpt2ByteLevelBpe
           : m_marian ? TokenizerKind::MarianSentencePiece
                      : TokenizerKind::BertWordPiece;
}

Encoding Tokenizer::encode(std::string_view text, bool addSpecialTokens) const
{
    Encoding out;
    if (m_json) {
        m_json->encode(text, addSpecialTokens, out);
    } else if (m_marian) {
        m_marian->encode(text, addSpecialTokens, out);
    } else if (m_bpe) {
        m_bpe->encode(text, out);
    } else if (m_wordPiece) {
        m_wordPiece->encode(text, out);
        // BERT's [CLS] ... [SEP] are always first and last.
        if (!addSpecialTokens && out.ids.size() >= 2) {
            out.ids.erase(out.ids.begin()), out.ids.pop_back();
            out.tokens.erase(out.tokens.begin()), out.tokens.pop_back();
            out.words.erase(out.words.begin()), out.words.pop_back();
        }
    }
    return out;
}

std::int64_t Tokenizer::vocabularySize() const
{
    return m_json        ? m_json->vocabularySize()
           : m_marian    ? m_marian->vocabularySize()
           : m_bpe       ? m_bpe->vocabularySize()
           : m_wordPiece ? m_wordPiece->vocabularySize()
                         : 0;
}

std::optional<std::string> Tokenizer::token(std::int32_t id) const
{
    const std::string *spelling = m_json        ? m_json->token(id)
                                  : m_marian    ? m_marian->token(id)
                                  : m_bpe       ? m_bpe->token(id)
                                  : m_wordPiece ? m_wordPiece->token(id)
                                                : nullptr;
    if (!spelling)
        return std::nullopt;
    return *spelling;
}

std::optional<std::int32_t> Tokenizer::tokenId(std::string_view spelling) const
{
    if (m_json)
        return m_json->tokenId(spelling);
    if (m_marian)
        return m_marian->tokenId(spelling);
    for (std::int32_t id = 0; id < vocabularySize(); ++id)
        if (const auto t = token(id); t && *t == spelling)
            return id;
    return std::nullopt;
}

std::string Tokenizer::displayText(std::int32_t id) const
{
    if (m_json)
        return m_json->displayText(id);
    return legibleUtf8(tokenBytes(id));
}

std::string Tokenizer::decode(const std::vector<std::int32_t> &ids) const
{
    std::string bytes;
    for (std::int32_t id : ids)
        bytes += tokenBytes(id);
    if (m_marian && bytes.starts_with(' ')) // SentencePiece drops the first word's space
        bytes.erase(0, 1);
    return legibleUtf8(bytes);
}

std::string Tokenizer::tokenBytes(std::int32_t id) const
{
    if (m_json)
        return m_json->tokenBytes(id);
    if (m_marian)
        return m_marian->tokenBytes(id);
    const auto spelling = token(id);
    if (!spelling)
        return std::string();
    std::string bytes;
    if (m_bpe) {
        for (std::size_t i = 0; i < spelling->size();) {
            const Utf8Char c = decodeUtf8(*spelling, i);
            const int b = unicodeToByte(c.value);
            if (b < 0)
                bytes.append(*spelling, i, c.length);
            else
                bytes += char(b);
            i += c.length;
        }
    } else {
        bytes = spelling->compare(0, 2, "##") == 0 && spelling->size() > 2 ? spelling->substr(2) : *spelling;
    }
    return bytes;
}

Result<std::string> readModelType(const std::string &modelDir)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(modelDir, ec))
        return Error{shownPath(modelDir) + ": not a folder (a model folder holds config.json and its " +
                         "tokenizer files)",
                     ErrorKind::Io};
    const auto inside = modelFolderFile(modelDir, "config.json");
    if (!inside)
        return inside.error();
    const std::string &path = *inside;
    auto config = readJsonObject(path, "config.json");
    if (!config)
        return config.error();
    const auto it = config->find("model_type");
    if (it == config->end())
        return Error{shownPath(path) + ": no \"model_type\" (expected \"gpt2\" or \"bert\")"};
    if (!it->is_string())
        return Error{shownPath(path) + ": model_type: expected a string, found " + printableText(it->dump(), 40)};
    return it->get<std::string>();
}

Result<TranslationTokenizers> loadTranslationTokenizers(const std::string &modelDir)
{
    const std::int64_t limit = std::min(maxInputFileBytes(), kMaxVocabularyBytes);
    const char *needs = "source.spm, target.spm and vocab.json for a Marian model";
    const auto separate = modelFolderFile(modelDir, "target_vocab.json");
    if (!separate)
        return separate.error();
    if (std::error_code ec; std::filesystem::exists(*separate, ec))
        return Error{shownPath(*separate) + ": separate source and target vocabularies are not supported",
                     ErrorKind::Unsupported};
    const auto vocabPath = modelFolderFile(modelDir, "vocab.json");
    if (!vocabPath)
        return vocabPath.error();
    auto vocabText = readModelFile(*vocabPath, limit, needs);
    if (!vocabText)
        return vocabText.error();
    auto vocabulary = MarianVocabulary::fromJson(*vocabText, shownPath(*vocabPath));
    if (!vocabulary)
        return vocabulary.error();
    std::optional<Tokenizer> sides[2];
    const char *files[2] = {"source.spm", "target.spm"};
    for (int i = 0; i < 2; ++i) {
        const auto path = modelFolderFile(modelDir, files[i]);
        if (!path)
            return path.error();
        auto bytes = readModelFile(*path, limit, needs, false); // a serialized protocol buffer
        if (!bytes)
            return bytes.error();
        auto side = Tokenizer::marian(*bytes, *vocabulary, shownPath(*path));
        if (!side)
            return side.error();
        sides[i] = std::move(*side);
    }
    return TranslationTokenizers{std::move(*sides[0]), std::move(*sides[1])};
}

Result<Tokenizer> loadTokenizer(const std::string &modelDir)
{
    auto modelType = readModelType(modelDir);
    if (!modelType)
        return modelType.error();
    if (*modelType == "marian") {
        auto sides = loadTranslationTokenizers(modelDir);
        if (!sides)
            return sides.error();
        return std::move(sides->source);
    }
    const std::int64_t limit = std::min(maxInputFileBytes(), kMaxVocabularyBytes);
    const auto exists = [](const Result<std::string> &path) {
        std::error_code ec;
        return path && std::filesystem::exists(*path, ec);
    };
    if (*modelType == "gpt2") {
        const auto vocabPath = modelFolderFile(modelDir, "vocab.json");
        if (!vocabPath)
            return vocabPath.error();
        const auto mergesPath = modelFolderFile(modelDir, "merges.txt");
        if (!mergesPath)
            return mergesPath.error();
        // Either legacy file present: that tokenizer, and an error naming the other if it is missing.
        if (exists(vocabPath) || exists(mergesPath)) {
            const char *needs = "a GPT-2 tokenizer's vocab.json and merges.txt";
            auto vocab = readModelFile(*vocabPath, limit, needs);
            if (!vocab)
                return vocab.error();
            auto merges = readModelFile(*mergesPath, limit, needs);
            if (!merges)
                return merges.error();
            return Tokenizer::gpt2(*vocab, *merges, shownPath(*vocabPath), shownPath(*mergesPath));
        }
    }
    if (*modelType == "bert") {
        const auto vocabPath = modelFolderFile(modelDir, "vocab.txt");
        if (!vocabPath)
            return vocabPath.error();
        if (exists(vocabPath)) {
            auto options = readWordPieceOptions(modelDir);
            if (!options)
                return options.error();
            auto vocab = readModelFile(*vocabPath, limit, "a BERT tokenizer's vocab.txt");
            if (!vocab)
                return vocab.error();
            return Tokenizer::bert(*vocab, *options, shownPath(*vocabPath));
        }
    }
    const auto jsonPath = modelFolderFile(modelDir, "tokenizer.json");
    if (!jsonPath)
        return jsonPath.error();
    auto json =
        readModelFile(*jsonPath, limit, "tokenizer.json, or vocab.json and merges.txt for GPT-2, vocab.txt for BERT");
    if (!json)
        return json.error();
    return Tokenizer::fromJson(*json, shownPath(*jsonPath));
}

} // namespace attnscope
