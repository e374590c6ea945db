#include "core/Tokenizer.h"

#include "core/ByteLevelBpe.h"
#include "core/FileIo.h"
#include "core/JsonDocument.h"
#include "core/MemoryLimits.h"
#include "core/UserText.h"
#include "core/WordPiece.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace attnscope {

namespace {

// Vocabularies run to a few MB (GPT-2's vocab.json is 1 MB, multilingual ones 10 MB); a
// configuration file to a few KB.
constexpr std::int64_t kMaxVocabularyBytes = std::int64_t(256) << 20;
constexpr std::int64_t kMaxConfigBytes = std::int64_t(16) << 20;

std::string inFolder(const std::string &folder, const char *name)
{
    return (std::filesystem::path(folder) / name).string();
}

Result<nlohmann::ordered_json> readJsonObject(const std::string &path)
{
    auto text = readInputFile(path, std::min(maxInputFileBytes(), kMaxConfigBytes));
    if (!text)
        return text.error();
    auto document = parseJsonDocument(*text);
    if (!document)
        return Error{path + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{path + ": expected a JSON object ({...})"};
    return std::move(*document);
}

// tokenizer_config.json's switches; a missing file leaves transformers' defaults.
Result<WordPieceOptions> readWordPieceOptions(const std::string &modelDir)
{
    WordPieceOptions options;
    const std::string path = inFolder(modelDir, "tokenizer_config.json");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return options;
    auto config = readJsonObject(path);
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
            return Error{path + ": " + key + ": expected true or false" + (nullable ? " or null" : "") + ", found " +
                         printableText(it->dump(), 40)};
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

Encoding Tokenizer::encode(std::string_view text) const
{
    Encoding out;
    if (m_bpe)
        m_bpe->encode(text, out);
    else if (m_wordPiece)
        m_wordPiece->encode(text, out);
    return out;
}

std::int64_t Tokenizer::vocabularySize() const
{
    return m_bpe ? m_bpe->vocabularySize() : m_wordPiece ? m_wordPiece->vocabularySize() : 0;
}

std::optional<std::string> Tokenizer::token(std::int32_t id) const
{
    const std::string *spelling = m_bpe ? m_bpe->token(id) : m_wordPiece ? m_wordPiece->token(id) : nullptr;
    if (!spelling)
        return std::nullopt;
    return *spelling;
}

Result<std::string> readModelType(const std::string &modelDir)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(modelDir, ec))
        return Error{printableText(modelDir, 200) + ": not a folder (a model folder holds config.json and its " +
                         "tokenizer files)",
                     ErrorKind::Io};
    const std::string path = inFolder(modelDir, "config.json");
    auto config = readJsonObject(path);
    if (!config)
        return config.error();
    const auto it = config->find("model_type");
    if (it == config->end())
        return Error{path + ": no \"model_type\" (expected \"gpt2\" or \"bert\")"};
    if (!it->is_string())
        return Error{path + ": model_type: expected a string, found " + printableText(it->dump(), 40)};
    return it->get<std::string>();
}

Result<Tokenizer> loadTokenizer(const std::string &modelDir)
{
    auto modelType = readModelType(modelDir);
    if (!modelType)
        return modelType.error();
    const std::int64_t limit = std::min(maxInputFileBytes(), kMaxVocabularyBytes);
    if (*modelType == "gpt2") {
        const std::string vocabPath = inFolder(modelDir, "vocab.json"), mergesPath = inFolder(modelDir, "merges.txt");
        auto vocab = readInputFile(vocabPath, limit);
        if (!vocab)
            return vocab.error();
        auto merges = readInputFile(mergesPath, limit);
        if (!merges)
            return merges.error();
        return Tokenizer::gpt2(*vocab, *merges, vocabPath, mergesPath);
    }
    if (*modelType == "bert") {
        auto options = readWordPieceOptions(modelDir);
        if (!options)
            return options.error();
        const std::string vocabPath = inFolder(modelDir, "vocab.txt");
        auto vocab = readInputFile(vocabPath, limit);
        if (!vocab)
            return vocab.error();
        return Tokenizer::bert(*vocab, *options, vocabPath);
    }
    return Error{inFolder(modelDir, "config.json") + ": model_type " + quotedText(*modelType) +
                     " is not supported (gpt2 or bert)",
                 ErrorKind::Unsupported};
}

} // namespace attnscope
