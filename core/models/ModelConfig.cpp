#include "core/models/ModelConfig.h"

#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <system_error>

namespace attnscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kMaxConfigBytes = std::int64_t(16) << 20;
// Bounds that keep every product of two sizes far from overflow; real models are far below
// (GPT-2 XL: 1600 wide, 48 layers, 50257 tokens).
constexpr std::int64_t kMaxSize = std::int64_t(1) << 24;
constexpr std::int64_t kMaxCount = 65536;

class ConfigReader
{
public:
    ConfigReader(const Json &root, const std::string &shown) : m_root(root), m_shown(shown) {}

    // The first of `keys` present; nullptr when none is.
    const Json *find(std::initializer_list<const char *> keys, const char *&found) const
    {
        for (const char *key : keys) {
            const auto it = m_root.find(key);
            if (it != m_root.end()) {
                found = key;
                return &*it;
            }
        }
        return nullptr;
    }

    Status integer(std::initializer_list<const char *> keys, std::int64_t max, int fallback, int &out) const
    {
        const char *key = *keys.begin();
        const Json *v = find(keys, key);
        if (!v) {
            out = fallback;
            return Ok{};
        }
        if (!v->is_number_integer() || v->get<std::int64_t>() < 1 || v->get<std::int64_t>() > max)
            return Error{m_shown + ": " + key + ": expected a whole number from 1 to " + std::to_string(max) +
                         ", found " + printableText(v->dump(), 40)};
        out = int(v->get<std::int64_t>());
        return Ok{};
    }

    Status positive(std::initializer_list<const char *> keys, double fallback, double &out) const
    {
        const char *key = *keys.begin();
        const Json *v = find(keys, key);
        if (!v) {
            out = fallback;
            return Ok{};
        }
        if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() > 1)
            return Error{m_shown + ": " + key + ": expected a number above 0 and at most 1, found " +
                         printableText(v->dump(), 40)};
        out = v->get<double>();
        return Ok{};
    }

    Status flag(const char *key, bool fallback, bool &out) const
    {
        const auto it = m_root.find(key);
        if (it == m_root.end()) {
            out = fallback;
            return Ok{};
        }
        if (!it->is_boolean())
            return Error{m_shown + ": " + key + ": expected true or false, found " + printableText(it->dump(), 40)};
        out = it->get<bool>();
        return Ok{};
    }

    // A string setting that must be one of the values this forward implements.
    Status choice(const char *key, const char *fallback, std::initializer_list<const char *> supported,
                  std::string &out) const
    {
        const auto it = m_root.find(key);
        if (it == m_root.end()) {
            out = fallback;
            return Ok{};
        }
        if (!it->is_string())
            return Error{m_shown + ": " + key + ": expected a string, found " + printableText(it->dump(), 40)};
        out = it->get<std::string>();
        if (std::find(supported.begin(), supported.end(), out) != supported.end())
            return Ok{};
        std::string names;
        for (const char *s : supported)
            names.append(names.empty() ? "" : " or ").append(s);
        return Error{m_shown + ": " + key + " " + quotedText(out) + " is not supported (" + names + ")",
                     ErrorKind::Unsupported};
    }

private:
    const Json &m_root;
    const std::string &m_shown;
};

Status checkHeads(const ModelConfig &c, const std::string &shown, const char *widthKey, const char *headsKey)
{
    if (c.width % c.heads != 0)
        return Error{shown + ": " + widthKey + " " + std::to_string(c.width) + " is not divisible by " + headsKey +
                     " " + std::to_string(c.heads)};
    return Ok{};
}

Result<ModelConfig> parseGpt2(const ConfigReader &r, const std::string &shown)
{
    // GPT2Config's defaults (GPT-2 small).
    ModelConfig c;
    c.type = ModelType::Gpt2;
    std::string activation;
    for (Status s : {r.integer({"n_layer"}, kMaxCount, 12, c.layers), r.integer({"n_head"}, kMaxCount, 12, c.heads),
                     r.integer({"n_embd"}, kMaxSize, 768, c.width),
                     r.integer({"n_positions", "n_ctx"}, kMaxSize, 1024, c.positions),
                     r.integer({"vocab_size"}, kMaxSize, 50257, c.vocabSize),
                     r.positive({"layer_norm_epsilon"}, 1e-5, c.layerNormEps),
                     r.choice("activation_function", "gelu_new", {"gelu_new"}, activation),
                     r.flag("scale_attn_weights", true, c.scaleAttnWeights),
                     r.flag("scale_attn_by_inverse_layer_idx", false, c.scaleByInverseLayerIdx)})
        if (!s)
            return s.error();
    c.activation = Activation::GeluTanh;
    c.intermediate = 4 * c.width;
    const char *key = "n_inner";
    if (const Json *inner = r.find({"n_inner"}, key); inner && !inner->is_null())
        if (Status s = r.integer({"n_inner"}, kMaxSize, 0, c.intermediate); !s)
            return s.error();
    if (Status s = checkHeads(c, shown, "n_embd", "n_head"); !s)
        return s.error();
    return c;
}

Result<ModelConfig> parseBert(const ConfigReader &r, const std::string &shown)
{
    // BertConfig's defaults (BERT base).
    ModelConfig c;
    c.type = ModelType::Bert;
    std::string activation, positions;
    bool decoder = false;
    for (Status s :
         {r.integer({"num_hidden_layers"}, kMaxCount, 12, c.layers),
          r.integer({"num_attention_heads"}, kMaxCount, 12, c.heads),
          r.integer({"hidden_size"}, kMaxSize, 768, c.width),
          r.integer({"intermediate_size"}, kMaxSize, 3072, c.intermediate),
          r.integer({"max_position_embeddings"}, kMaxSize, 512, c.positions),
          r.integer({"vocab_size"}, kMaxSize, 30522, c.vocabSize),
          r.integer({"type_vocab_size"}, kMaxSize, 2, c.typeVocabSize),
          r.positive({"layer_norm_eps"}, 1e-12, c.layerNormEps), r.choice("hidden_act", "gelu", {"gelu"}, activation),
          r.choice("position_embedding_type", "absolute", {"absolute"}, positions),
          r.flag("is_decoder", false, decoder)})
        if (!s)
            return s.error();
    if (decoder)
        return Error{shown + ": is_decoder: true is not supported (BERT is read as an encoder)",
                     ErrorKind::Unsupported};
    c.activation = Activation::GeluErf;
    if (Status s = checkHeads(c, shown, "hidden_size", "num_attention_heads"); !s)
        return s.error();
    return c;
}

} // namespace

Result<ModelConfig> parseModelConfig(std::string_view json, const std::string &shownName)
{
    auto document = parseJsonDocument(json);
    if (!document)
        return Error{shownName + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shownName + ": expected a JSON object ({...})"};
    const auto type = document->find("model_type");
    if (type == document->end())
        return Error{shownName + ": no \"model_type\" (expected \"gpt2\" or \"bert\")"};
    if (!type->is_string())
        return Error{shownName + ": model_type: expected a string, found " + printableText(type->dump(), 40)};
    const ConfigReader reader(*document, shownName);
    if (*type == "gpt2")
        return parseGpt2(reader, shownName);
    if (*type == "bert")
        return parseBert(reader, shownName);
    return Error{shownName + ": model_type " + quotedText(type->get<std::string>()) +
                     " is not supported (gpt2 or bert)",
                 ErrorKind::Unsupported};
}

Result<ModelConfig> readModelConfig(const std::string &modelDir)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(modelDir, ec))
        return Error{printableText(modelDir, 200) + ": not a folder (a model folder holds config.json, " +
                         "model.safetensors and its tokenizer files)",
                     ErrorKind::Io};
    const auto inside = modelFolderFile(modelDir, "config.json");
    if (!inside)
        return inside.error();
    const std::string &path = *inside;
    const std::string shown = printableText(path, 200);
    if (!std::filesystem::exists(path, ec))
        return Error{shown + ": no such file (a model folder as transformers saves it holds config.json)",
                     ErrorKind::Io};
    auto text = readInputFile(path, std::min(maxInputFileBytes(), kMaxConfigBytes));
    if (!text)
        return text.error();
    return parseModelConfig(*text, shown);
}

} // namespace attnscope
