#pragma once

#include "core/Result.h"
#include "core/tokenizers/Tokenizer.h"

#include <string>
#include <string_view>

namespace attnscope {

// One user turn with the generation prompt, exactly as transformers'
// `apply_chat_template([{"role": "user", "content": TEXT}], add_generation_prompt=True)`
// renders it with the model's own template, written out per family instead of running Jinja:
//   ChatMl (Qwen2, Qwen2.5, Qwen3):
//     [<|im_start|>system\n{default system prompt}<|im_end|>\n]   (only when the template
//                                   writes one: Qwen2's "You are a helpful assistant.", Qwen2.5's
//                                   "You are Qwen, created by Alibaba Cloud. ...")
//     <|im_start|>user\n{TEXT}<|im_end|>\n<|im_start|>assistant\n
//     and with thinking off (Qwen3's enable_thinking=False): <think>\n\n</think>\n\n
//   Llama3: <|begin_of_text|>[system header]<|start_header_id|>user<|end_header_id|>\n\n
//     {TEXT trimmed}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
//     The system header is written only when the template has Llama 3.1's default one:
//     <|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n
//     Today Date: {date}\n\n<|eot_id|>, the date being Llama 3.1's default "26 Jul 2024", or
//     today's date in UTC ("28 Nov 2026") for templates that call strftime_now (Llama 3.2's),
//     as transformers renders them: such a rendering changes from day to day.
//   Gemma (Gemma 2, Gemma 3):
//     <bos><start_of_turn>user\n{TEXT trimmed}<end_of_turn>\n<start_of_turn>model\n
// "trimmed" is Jinja's trim (Python's str.strip()).
enum class ChatPreset { ChatMl, Llama3, Gemma };

struct ChatOptions {
    bool thinking = true; // false: Qwen3's enable_thinking=False
};

// The preset for a model_type: qwen2, qwen3 -> ChatMl; llama -> Llama3 when the tokenizer has
// <|start_header_id|>; gemma, gemma2, gemma3, gemma3_text -> Gemma. Anything else is one line:
// "m: model_type "gpt2" has no chat preset (Qwen, Llama 3 and Gemma have)". Thinking off is
// refused for presets without Qwen3's switch.
Result<ChatPreset> chatPreset(const std::string &modelType, const Tokenizer &tokenizer, const ChatOptions &options);

// `chatTemplate` is tokenizer_config.json's chat_template (empty when there is none): it
// decides the optional default system turns above.
std::string renderChat(ChatPreset preset, std::string_view text, const ChatOptions &options,
                       std::string_view chatTemplate);

// Renders and encodes as apply_chat_template(..., tokenize=True) does: the rendered text
// already holds its BOS, so it is encoded with add_special_tokens=False and no second BOS is
// added by the post-processor.
Encoding encodeChat(const Tokenizer &tokenizer, ChatPreset preset, std::string_view text, const ChatOptions &options,
                    std::string_view chatTemplate);

// Reads a model folder's tokenizer_config.json chat_template: empty when the file or the key is
// missing (a list of named templates gives the one named "default").
Result<std::string> readChatTemplate(const std::string &modelDir);

} // namespace attnscope
