#include "core/tokenizers/ChatTemplate.h"

#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/tokenizers/UnicodeText.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <filesystem>

namespace attnscope {

namespace {

// Python's str.strip(): whitespace as str.isspace() sees it (White_Space plus the
// information separators U+001C..U+001F).
std::string_view trimmed(std::string_view text)
{
    const auto space = [](char32_t c) { return isWhiteSpace(c) || (c >= 0x1c && c <= 0x1f); };
    std::size_t begin = 0;
    while (begin < text.size()) {
        const Utf8Char c = decodeUtf8(text, begin);
        if (!c.valid || !space(c.value))
            break;
        begin += c.length;
    }
    std::size_t end = begin, lastKept = begin;
    while (end < text.size()) {
        const Utf8Char c = decodeUtf8(text, end);
        end += c.length;
        if (!c.valid || !space(c.value))
            lastKept = end;
    }
    return text.substr(begin, lastKept - begin);
}

constexpr const char *kQwen25System = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
constexpr const char *kQwen2System = "You are a helpful assistant.";

} // namespace

Result<ChatPreset> chatPreset(const std::string &modelType, const Tokenizer &tokenizer, const ChatOptions &options)
{
    const auto noPreset =
        Error{"model_type " + quotedText(modelType) + " has no chat preset (Qwen, Llama 3 and Gemma have)",
              ErrorKind::Unsupported};
    ChatPreset preset;
    if (modelType == "qwen2" || modelType == "qwen3")
        preset = ChatPreset::ChatMl;
    else if (modelType == "llama" && tokenizer.tokenId("<|start_header_id|>"))
        preset = ChatPreset::Llama3;
    else if (modelType == "gemma" || modelType == "gemma2" || modelType == "gemma3" || modelType == "gemma3_text")
        preset = ChatPreset::Gemma;
    else
        return noPreset;
    if (!options.thinking && modelType != "qwen3")
        return Error{"--no-think: only Qwen3's chat template has a thinking switch (model_type " +
                         quotedText(modelType) + ")",
                     ErrorKind::Unsupported};
    return preset;
}

std::string renderChat(ChatPreset preset, std::string_view text, const ChatOptions &options,
                       std::string_view chatTemplate)
{
    std::string out;
    switch (preset) {
    case ChatPreset::ChatMl:
        // Qwen2/2.5 templates write a default system turn when the conversation has none.
        if (chatTemplate.find(kQwen25System) != std::string_view::npos)
            out += std::string("<|im_start|>system\n") + kQwen25System + "<|im_end|>\n";
        else if (chatTemplate.find(std::string("'<|im_start|>system\\n") + kQwen2System) != std::string_view::npos)
            out += std::string("<|im_start|>system\n") + kQwen2System + "<|im_end|>\n";
        out += "<|im_start|>user\n";
        out += text;
        out += "<|im_end|>\n<|im_start|>assistant\n";
        if (!options.thinking)
            out += "<think>\n\n</think>\n\n";
        break;
    case ChatPreset::Llama3:
        out += "<|begin_of_text|>";
        if (chatTemplate.find("Cutting Knowledge Date") != std::string_view::npos) {
            // Llama 3.1's template falls back to 26 Jul 2024; 3.2's calls strftime_now, which
            // transformers defines, so it renders today's date.
            std::string date = "26 Jul 2024";
            if (chatTemplate.find("strftime_now") != std::string_view::npos) {
                const std::time_t now = std::time(nullptr);
                std::tm utc{};
                gmtime_r(&now, &utc);
                char buffer[32];
                std::strftime(buffer, sizeof buffer, "%d %b %Y", &utc);
                date = buffer;
            }
            out += "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: " +
                   date + "\n\n<|eot_id|>";
        }
        out += "<|start_header_id|>user<|end_header_id|>\n\n";
        out += trimmed(text);
        out += "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
        break;
    case ChatPreset::Gemma:
        out += "<bos><start_of_turn>user\n";
        out += trimmed(text);
        out += "<end_of_turn>\n<start_of_turn>model\n";
        break;
    }
    return out;
}

Encoding encodeChat(const Tokenizer &tokenizer, ChatPreset preset, std::string_view text, const ChatOptions &options,
                    std::string_view chatTemplate)
{
    return tokenizer.encode(renderChat(preset, text, options, chatTemplate), false);
}

Result<std::string> readChatTemplate(const std::string &modelDir)
{
    const auto path = modelFolderFile(modelDir, "tokenizer_config.json");
    if (!path)
        return path.error();
    std::error_code ec;
    if (!std::filesystem::exists(*path, ec))
        return std::string();
    auto text = readInputFile(*path, std::min<std::int64_t>(maxInputFileBytes(), std::int64_t(64) << 20));
    if (!text)
        return text.error();
    auto document = parseJsonDocument(*text);
    if (!document)
        return Error{printableText(*path, 200) + ": " + document.message(), document.kind()};
    const nlohmann::ordered_json &config = *document;
    if (!config.is_object())
        return Error{printableText(*path, 200) + ": expected a JSON object ({...})"};
    const auto it = config.find("chat_template");
    if (it == config.end() || it->is_null())
        return std::string();
    if (it->is_string())
        return it->get<std::string>();
    if (it->is_array())
        for (const auto &named : *it)
            if (named.is_object() && named.contains("name") && named["name"] == "default" &&
                named.contains("template") && named["template"].is_string())
                return named["template"].get<std::string>();
    return std::string();
}

} // namespace attnscope
