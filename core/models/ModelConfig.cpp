#include "core/models/ModelConfig.h"

#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <algorithm>
#include <cmath>
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

    // A number above 0 (no upper bound); null or absent: the fallback.
    Status number(const char *key, std::optional<double> fallback, std::optional<double> &out) const
    {
        const auto it = m_root.find(key);
        if (it == m_root.end() || it->is_null()) {
            out = fallback;
            return Ok{};
        }
        if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>()))
            return Error{m_shown + ": " + key + ": expected a number above 0, found " + printableText(it->dump(), 40)};
        out = it->get<double>();
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

    const Json &root() const { return m_root; }
    const std::string &shown() const { return m_shown; }

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
    c.qkvBias = c.oBias = c.mlpBias = true;
    if (Status s = r.flag("tie_word_embeddings", true, c.tieWordEmbeddings); !s)
        return s.error();
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
    c.qkvBias = c.oBias = c.mlpBias = true;
    if (Status s = checkHeads(c, shown, "hidden_size", "num_attention_heads"); !s)
        return s.error();
    return c;
}

// transformers' defaults of one decoder family (LlamaConfig, MistralConfig, Qwen2Config,
// Qwen3Config, Gemma2Config, Gemma3TextConfig).
struct DecoderDefaults {
    int vocab, hidden, intermediate, layers, heads, kvHeads; // kvHeads 0: as many as heads
    int headDim;                                             // 0: hidden / heads
    int positions;
    double ropeTheta;
    bool tie;
    const char *activationKey;
    const char *activation;
};

DecoderDefaults decoderDefaults(ModelType t)
{
    switch (t) {
    case ModelType::Mistral:
        return {32000, 4096, 14336, 32, 32, 8, 0, 4096 * 32, 10000.0, false, "hidden_act", "silu"};
    case ModelType::Qwen2:
        return {151936, 4096, 22016, 32, 32, 32, 0, 32768, 10000.0, false, "hidden_act", "silu"};
    case ModelType::Qwen3:
        return {151936, 4096, 22016, 32, 32, 32, 128, 32768, 10000.0, false, "hidden_act", "silu"};
    case ModelType::Gemma2:
        return {256000, 2304, 9216, 26, 8, 4, 256, 8192, 10000.0, true, "hidden_activation", "gelu_pytorch_tanh"};
    case ModelType::Gemma3:
        return {262208, 2304, 9216, 26, 8, 4, 256, 131072, 1000000.0, true, "hidden_activation", "gelu_pytorch_tanh"};
    default: // Llama
        return {32000, 4096, 11008, 32, 32, 0, 0, 2048, 10000.0, false, "hidden_act", "silu"};
    }
}

// rope_scaling (transformers 4) or one rope_parameters object (transformers 5).
Status parseRopeScaling(const Json &r, const std::string &field, const std::string &shown, RopeScaling &out)
{
    const std::string at = shown + ": " + field;
    if (!r.is_object())
        return Error{at + ": expected an object or null, found " + printableText(r.dump(), 40)};
    const ConfigReader reader(r, shown);
    std::string type = "default";
    const auto named = r.contains("rope_type") ? r.find("rope_type") : r.find("type");
    if (named != r.end() && !named->is_null()) {
        if (!named->is_string())
            return Error{at + ".rope_type: expected a string, found " + printableText(named->dump(), 40)};
        type = named->get<std::string>();
    }
    static const std::pair<const char *, RopeScaling::Type> kTypes[] = {{"default", RopeScaling::Type::Default},
                                                                        {"linear", RopeScaling::Type::Linear},
                                                                        {"dynamic", RopeScaling::Type::Dynamic},
                                                                        {"yarn", RopeScaling::Type::Yarn},
                                                                        {"llama3", RopeScaling::Type::Llama3}};
    const auto known = std::find_if(std::begin(kTypes), std::end(kTypes), [&](auto &k) { return type == k.first; });
    if (known == std::end(kTypes))
        return Error{at + ".rope_type " + quotedText(type) +
                         " is not supported (default, linear, dynamic, yarn or llama3); AttnScope does not "
                         "approximate it",
                     ErrorKind::Unsupported};
    out.type = known->second;
    std::optional<double> factor, low, high, betaFast, betaSlow, original;
    for (Status s : {reader.number("factor", std::nullopt, factor), reader.number("low_freq_factor", 1.0, low),
                     reader.number("high_freq_factor", 4.0, high),
                     reader.number("attention_factor", std::nullopt, out.attentionFactor),
                     reader.number("mscale", std::nullopt, out.mscale),
                     reader.number("mscale_all_dim", std::nullopt, out.mscaleAllDim),
                     reader.number("beta_fast", 32.0, betaFast), reader.number("beta_slow", 1.0, betaSlow),
                     reader.number("original_max_position_embeddings", std::nullopt, original),
                     reader.flag("truncate", true, out.truncate)})
        if (!s)
            return Error{shown + ": " + field + "." + s.message().substr(shown.size() + 2), s.kind()};
    if (!factor && out.type != RopeScaling::Type::Default)
        return Error{at + ".factor: missing (rope_type " + quotedText(type) + " needs it)"};
    out.factor = factor.value_or(1.0);
    out.lowFreqFactor = *low;
    out.highFreqFactor = *high;
    out.betaFast = *betaFast;
    out.betaSlow = *betaSlow;
    out.originalMaxPositions = original ? std::int64_t(*original) : 0;
    if (out.type == RopeScaling::Type::Llama3 && (!original || out.lowFreqFactor == out.highFreqFactor))
        return Error{at + ": llama3 needs original_max_position_embeddings and low_freq_factor != high_freq_factor"};
    return Ok{};
}

// The attention of each layer: full or a sliding window (layer_types, or the family's rule).
Status parseLayerTypes(const ConfigReader &r, ModelConfig &c)
{
    const std::string &shown = r.shown();
    const Json &root = r.root();
    std::optional<double> window;
    const bool familyWindow = c.type != ModelType::Llama;
    if (Status s = r.number("sliding_window", familyWindow ? std::optional<double>(4096) : std::nullopt, window); !s)
        return s;
    bool useSliding = false;
    if (Status s = r.flag("use_sliding_window", false, useSliding); !s)
        return s;
    if ((c.type == ModelType::Qwen2 || c.type == ModelType::Qwen3) && !useSliding)
        window.reset();
    // A present null sliding_window turns windows off in every family.
    if (const auto it = root.find("sliding_window"); it != root.end() && it->is_null())
        window.reset();
    int maxWindowLayers = 28;
    if (Status s = r.integer({"max_window_layers"}, kMaxCount, 28, maxWindowLayers); !s)
        return s;
    int pattern = 6;
    if (Status s = r.integer({"sliding_window_pattern"}, kMaxCount, 6, pattern); !s)
        return s;
    const std::int64_t w = window ? std::int64_t(*window) : 0;
    c.windows.assign(std::size_t(c.layers), 0);
    const auto types = root.find("layer_types");
    if (types != root.end() && !types->is_null()) {
        if (!types->is_array() || std::int64_t(types->size()) != c.layers)
            return Error{shown + ": layer_types: expected " + std::to_string(c.layers) +
                         " entries (one per layer), found " + printableText(types->dump(), 60)};
        for (int l = 0; l < c.layers; ++l) {
            const Json &t = (*types)[std::size_t(l)];
            const std::string name = t.is_string() ? t.get<std::string>() : t.dump();
            if (name == "sliding_attention") {
                if (w <= 0)
                    return Error{shown + ": layer_types[" + std::to_string(l) +
                                 "] is sliding_attention but sliding_window is not set"};
                c.windows[std::size_t(l)] = w;
            } else if (name != "full_attention") {
                return Error{shown + ": layer_types[" + std::to_string(l) + "] " + quotedText(name) +
                                 " is not supported (full_attention or sliding_attention)",
                             ErrorKind::Unsupported};
            }
        }
        return Ok{};
    }
    for (int l = 0; l < c.layers; ++l) {
        bool sliding = false;
        switch (c.type) {
        case ModelType::Mistral:
            sliding = true;
            break;
        case ModelType::Qwen2:
        case ModelType::Qwen3:
            sliding = l >= maxWindowLayers;
            break;
        case ModelType::Gemma2:
            sliding = (l + 1) % 2 != 0;
            break;
        case ModelType::Gemma3:
            sliding = (l + 1) % pattern != 0;
            break;
        default:
            break;
        }
        c.windows[std::size_t(l)] = sliding ? w : 0;
    }
    return Ok{};
}

Status parseRope(const ConfigReader &r, ModelConfig &c, double defaultTheta)
{
    const std::string &shown = r.shown();
    const Json &root = r.root();
    std::optional<double> theta, local;
    if (Status s = r.number("rope_theta", defaultTheta, theta); !s)
        return s;
    if (c.type == ModelType::Gemma3)
        if (Status s = r.number("rope_local_base_freq", 10000.0, local); !s)
            return s;
    c.ropeTheta = *theta;
    c.ropeLocalTheta = local;
    const auto params = root.find("rope_parameters");
    if (params != root.end() && !params->is_null()) {
        // transformers 5: rope_theta inside; Gemma 3 keys one object per layer type.
        if (!params->is_object())
            return Error{shown + ": rope_parameters: expected an object, found " + printableText(params->dump(), 40)};
        const bool perType = params->contains("full_attention") || params->contains("sliding_attention");
        const Json &global = perType && params->contains("full_attention") ? (*params)["full_attention"] : *params;
        const ConfigReader g(global, shown);
        if (Status s = g.number("rope_theta", c.ropeTheta, theta); !s)
            return s;
        c.ropeTheta = *theta;
        if (perType && params->contains("sliding_attention")) {
            const ConfigReader l((*params)["sliding_attention"], shown);
            if (Status s = l.number("rope_theta", c.ropeLocalTheta.value_or(c.ropeTheta), local); !s)
                return s;
            c.ropeLocalTheta = local;
            RopeScaling slidingScaling;
            if (Status s = parseRopeScaling((*params)["sliding_attention"], "rope_parameters.sliding_attention", shown,
                                            slidingScaling);
                !s)
                return s;
            if (slidingScaling.type != RopeScaling::Type::Default)
                return Error{shown + ": rope_parameters.sliding_attention: only the default rope_type is supported",
                             ErrorKind::Unsupported};
        }
        return parseRopeScaling(global, perType ? "rope_parameters.full_attention" : "rope_parameters", shown,
                                c.ropeScaling);
    }
    const auto scaling = root.find("rope_scaling");
    if (scaling == root.end() || scaling->is_null())
        return Ok{};
    return parseRopeScaling(*scaling, "rope_scaling", shown, c.ropeScaling);
}

Result<ModelConfig> parseDecoder(const ConfigReader &r, ModelType type)
{
    const std::string &shown = r.shown();
    const Json &root = r.root();
    const DecoderDefaults d = decoderDefaults(type);
    ModelConfig c;
    c.type = type;
    std::string activation;
    std::optional<double> eps;
    for (Status s :
         {r.integer({"num_hidden_layers"}, kMaxCount, d.layers, c.layers),
          r.integer({"num_attention_heads"}, kMaxCount, d.heads, c.heads),
          r.integer({"hidden_size"}, kMaxSize, d.hidden, c.width),
          r.integer({"intermediate_size"}, kMaxSize, d.intermediate, c.intermediate),
          r.integer({"max_position_embeddings"}, kMaxSize, d.positions, c.positions),
          r.integer({"vocab_size"}, kMaxSize, d.vocab, c.vocabSize), r.number("rms_norm_eps", 1e-6, eps),
          r.choice(d.activationKey, d.activation, {"silu", "gelu_pytorch_tanh", "gelu_new", "gelu"}, activation),
          r.flag("tie_word_embeddings", d.tie, c.tieWordEmbeddings)})
        if (!s)
            return s.error();
    if (*eps > 1)
        return Error{shown + ": rms_norm_eps: expected a number above 0 and at most 1, found " +
                     printableText(root["rms_norm_eps"].dump(), 40)};
    c.layerNormEps = *eps;
    c.activation = activation == "silu"   ? Activation::Silu
                   : activation == "gelu" ? Activation::GeluErf
                                          : Activation::GeluTanh;
    // num_key_value_heads and head_dim may be written as null, which means the default.
    const char *key = "num_key_value_heads";
    if (const Json *kv = r.find({"num_key_value_heads"}, key); kv && !kv->is_null()) {
        if (Status s = r.integer({"num_key_value_heads"}, kMaxCount, 0, c.kvHeads); !s)
            return s.error();
    } else {
        c.kvHeads = d.kvHeads;
    }
    if (c.kvHeads == 0)
        c.kvHeads = c.heads;
    if (c.heads % c.kvHeads != 0)
        return Error{shown + ": num_attention_heads " + std::to_string(c.heads) +
                     " is not divisible by num_key_value_heads " + std::to_string(c.kvHeads)};
    key = "head_dim";
    if (const Json *hd = r.find({"head_dim"}, key); hd && !hd->is_null()) {
        if (Status s = r.integer({"head_dim"}, kMaxSize, 0, c.headDimension); !s)
            return s.error();
    } else if (d.headDim > 0) {
        c.headDimension = d.headDim;
    } else if (c.width % c.heads != 0) {
        return Error{shown + ": hidden_size " + std::to_string(c.width) + " is not divisible by num_attention_heads " +
                     std::to_string(c.heads) + " (and head_dim is not given)"};
    }
    if (c.headDim() % 2 != 0)
        return Error{shown + ": head_dim " + std::to_string(c.headDim()) + " is odd; RoPE pairs its dimensions"};
    for (const char *moe : {"num_experts", "num_local_experts", "n_routed_experts"})
        if (const auto it = root.find(moe); it != root.end() && it->is_number() && it->get<double>() > 0)
            return Error{shown + ": " + moe + ": mixture-of-experts layers are not supported", ErrorKind::Unsupported};
    bool attentionBias = false;
    if (Status s = r.flag("attention_bias", false, attentionBias); !s)
        return s.error();
    if (Status s = r.flag("mlp_bias", false, c.mlpBias); !s)
        return s.error();
    c.qkvBias = type == ModelType::Qwen2 || (type != ModelType::Mistral && attentionBias);
    c.oBias = type != ModelType::Qwen2 && type != ModelType::Mistral && attentionBias;
    if (type != ModelType::Llama)
        c.mlpBias = false; // only LlamaMLP reads mlp_bias
    if (type == ModelType::Gemma2 || type == ModelType::Gemma3) {
        std::optional<double> scalar;
        if (Status s = r.number("query_pre_attn_scalar", 256.0, scalar); !s)
            return s.error();
        c.queryPreAttnScalar = scalar;
        const std::optional<double> attnCap = type == ModelType::Gemma2 ? std::optional<double>(50.0) : std::nullopt;
        const std::optional<double> finalCap = type == ModelType::Gemma2 ? std::optional<double>(30.0) : std::nullopt;
        if (Status s = r.number("attn_logit_softcapping", attnCap, c.attnSoftcap); !s)
            return s.error();
        if (Status s = r.number("final_logit_softcapping", finalCap, c.finalSoftcap); !s)
            return s.error();
        if (type == ModelType::Gemma3 && c.attnSoftcap)
            return Error{shown + ": attn_logit_softcapping: Gemma 3 does not soft-cap attention; a value here is "
                                 "not reproduced, so it is refused",
                         ErrorKind::Unsupported};
    }
    if (Status s = parseLayerTypes(r, c); !s)
        return s.error();
    if (Status s = parseRope(r, c, d.ropeTheta); !s)
        return s.error();
    return c;
}

// A token id setting: a whole number from 0 below the vocabulary; null: none.
Status tokenId(const Json &root, const std::string &shown, const char *key, int vocabSize,
               std::optional<std::int32_t> &out)
{
    const auto it = root.find(key);
    if (it == root.end())
        return Ok{};
    if (it->is_null()) {
        out.reset();
        return Ok{};
    }
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() >= vocabSize)
        return Error{shown + ": " + key + ": expected an id from 0 to " + std::to_string(vocabSize - 1) + ", found " +
                     printableText(it->dump(), 40)};
    out = std::int32_t(it->get<std::int64_t>());
    return Ok{};
}

// The keys generate() reads for the greedy search, from config.json or generation_config.json.
Status readSearchSettings(const Json &root, const std::string &shown, TranslationConfig &c)
{
    std::optional<std::int32_t> pad = c.padId, eos = c.eosId, start = c.decoderStartId;
    for (Status s : {tokenId(root, shown, "pad_token_id", c.vocabSize, pad),
                     tokenId(root, shown, "eos_token_id", c.vocabSize, eos),
                     tokenId(root, shown, "decoder_start_token_id", c.vocabSize, start),
                     tokenId(root, shown, "forced_eos_token_id", c.vocabSize, c.forcedEosId)})
        if (!s)
            return s;
    for (const auto &[key, value] :
         {std::pair{"pad_token_id", pad}, std::pair{"eos_token_id", eos}, std::pair{"decoder_start_token_id", start}})
        if (!value)
            return Error{shown + ": " + key + ": expected an id, found null"};
    c.padId = *pad, c.eosId = *eos, c.decoderStartId = *start;
    if (const auto it = root.find("max_length"); it != root.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 2 || it->get<std::int64_t>() > kMaxSize)
            return Error{shown + ": max_length: expected a whole number from 2 to " + std::to_string(kMaxSize) +
                         ", found " + printableText(it->dump(), 40)};
        c.maxLength = int(it->get<std::int64_t>());
    }
    const auto beams = root.find("num_beams");
    (void)beams; // the contract's search is greedy (num_beams = 1) whatever the file suggests
    return Ok{};
}

} // namespace

Result<TranslationConfig> parseTranslationConfig(std::string_view json, const std::string &shownName)
{
    auto document = parseJsonDocument(json);
    if (!document)
        return Error{shownName + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shownName + ": expected a JSON object ({...})"};
    const Json &root = *document;
    const auto type = root.find("model_type");
    if (type == root.end() || !type->is_string() || type->get<std::string>() != "marian")
        return Error{shownName + ": model_type: expected \"marian\" (a translation model), found " +
                         (type == root.end() ? std::string("none") : printableText(type->dump(), 40)),
                     ErrorKind::Unsupported};
    // MarianConfig's defaults (opus-mt's sizes are in each model's config.json).
    const ConfigReader r(root, shownName);
    TranslationConfig c;
    std::string activation;
    int decoderVocab = 0;
    bool shared = true;
    for (Status s :
         {r.integer({"d_model"}, kMaxSize, 1024, c.width),
          r.integer({"encoder_layers"}, kMaxCount, 12, c.encoder.layers),
          r.integer({"decoder_layers"}, kMaxCount, 12, c.decoder.layers),
          r.integer({"encoder_attention_heads"}, kMaxCount, 16, c.encoder.heads),
          r.integer({"decoder_attention_heads"}, kMaxCount, 16, c.decoder.heads),
          r.integer({"encoder_ffn_dim"}, kMaxSize, 4096, c.encoder.ffn),
          r.integer({"decoder_ffn_dim"}, kMaxSize, 4096, c.decoder.ffn),
          r.integer({"vocab_size"}, kMaxSize, 58101, c.vocabSize),
          r.integer({"max_position_embeddings"}, kMaxSize, 1024, c.positions),
          r.choice("activation_function", "gelu", {"gelu", "gelu_new", "swish", "silu", "relu"}, activation),
          r.flag("scale_embedding", false, c.scaleEmbedding), r.flag("tie_word_embeddings", true, c.tieWordEmbeddings),
          r.flag("share_encoder_decoder_embeddings", true, shared)})
        if (!s)
            return s.error();
    const char *key = "decoder_vocab_size";
    if (const Json *v = r.find({"decoder_vocab_size"}, key); v && !v->is_null()) {
        if (Status s = r.integer({"decoder_vocab_size"}, kMaxSize, c.vocabSize, decoderVocab); !s)
            return s.error();
        if (decoderVocab != c.vocabSize)
            return Error{shownName + ": decoder_vocab_size " + std::to_string(decoderVocab) +
                             " differs from vocab_size " + std::to_string(c.vocabSize) +
                             ": separate target vocabularies are not supported",
                         ErrorKind::Unsupported};
    }
    if (!shared)
        return Error{shownName + ": share_encoder_decoder_embeddings: false (separate source and target embeddings) "
                                 "is not supported",
                     ErrorKind::Unsupported};
    c.activation = activation == "gelu"       ? Activation::GeluErf
                   : activation == "gelu_new" ? Activation::GeluTanh
                   : activation == "relu"     ? Activation::Relu
                                              : Activation::Silu;
    for (const auto &[stack, widthKey, headsKey] : {std::tuple{&c.encoder, "d_model", "encoder_attention_heads"},
                                                    std::tuple{&c.decoder, "d_model", "decoder_attention_heads"}})
        if (c.width % stack->heads != 0)
            return Error{shownName + ": " + widthKey + " " + std::to_string(c.width) + " is not divisible by " +
                         headsKey + " " + std::to_string(stack->heads)};
    if (c.width % 2 != 0)
        return Error{shownName + ": d_model " + std::to_string(c.width) +
                     " is odd; the sinusoidal positions pair its dimensions"};
    if (Status s = readSearchSettings(root, shownName, c); !s)
        return s.error();
    return c;
}

Result<TranslationConfig> readTranslationConfig(const std::string &modelDir)
{
    std::string shown;
    auto config = readFolderJson(modelDir, "config.json", shown);
    if (!config)
        return config.error();
    if (!*config)
        return Error{printableText(modelDir, 200) + "/config.json: no such file (a model folder as transformers "
                                                    "saves it holds config.json)",
                     ErrorKind::Io};
    auto c = parseTranslationConfig((*config)->dump(), shown);
    if (!c)
        return c;
    const std::string configShown = shown;
    auto generation = readFolderJson(modelDir, "generation_config.json", shown);
    if (!generation)
        return generation.error();
    if (*generation)
        if (Status s = readSearchSettings(**generation, shown, *c); !s)
            return s.error();
    // MarianConfig's defaults (pad and start 58100) name ids of opus-mt's vocabulary.
    for (const auto &[key, value] : {std::pair{"pad_token_id", c->padId}, std::pair{"eos_token_id", c->eosId},
                                     std::pair{"decoder_start_token_id", c->decoderStartId}})
        if (value >= c->vocabSize)
            return Error{configShown + ": " + key + ": MarianConfig's default " + std::to_string(value) +
                         " is not below vocab_size " + std::to_string(c->vocabSize) + "; give the model's own"};
    return c;
}

Result<std::optional<nlohmann::ordered_json>> readFolderJson(const std::string &modelDir, const std::string &name,
                                                             std::string &shown)
{
    auto path = modelFolderFile(modelDir, name);
    if (!path)
        return path.error();
    std::error_code ec;
    if (!std::filesystem::exists(*path, ec))
        return std::optional<nlohmann::ordered_json>();
    shown = printableText(*path, 200);
    auto text = readInputFile(*path, std::min(maxInputFileBytes(), kMaxConfigBytes));
    if (!text)
        return text.error();
    auto document = parseJsonDocument(*text);
    if (!document)
        return Error{shown + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shown + ": expected a JSON object ({...})"};
    return std::optional<nlohmann::ordered_json>(std::move(*document));
}

Result<ModelConfig> parseModelConfig(std::string_view json, const std::string &shownName)
{
    auto document = parseJsonDocument(json);
    if (!document)
        return Error{shownName + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shownName + ": expected a JSON object ({...})"};
    const auto type = document->find("model_type");
    if (type == document->end())
        return Error{shownName + ": no \"model_type\" (expected " + supportedModelTypes() + ")"};
    if (!type->is_string())
        return Error{shownName + ": model_type: expected a string, found " + printableText(type->dump(), 40)};
    const Architecture *arch = findArchitecture(type->get<std::string>());
    if (!arch && *type == "marian")
        return Error{shownName + ": model_type \"marian\" is a translation model (an encoder and a decoder); " +
                         "this reads decoder and encoder-only models (" + supportedModelTypes() + ")",
                     ErrorKind::Unsupported};
    if (!arch)
        return Error{shownName + ": model_type " + quotedText(type->get<std::string>()) + " is not supported (" +
                         supportedModelTypes() + ")",
                     ErrorKind::Unsupported};
    if (arch->type == ModelType::Gpt2)
        return parseGpt2(ConfigReader(*document, shownName), shownName);
    if (arch->type == ModelType::Bert)
        return parseBert(ConfigReader(*document, shownName), shownName);
    if (*type == "gemma3") {
        // The multimodal wrapper: the text model's settings are in text_config; the vision
        // tower is not read.
        const auto text = document->find("text_config");
        if (text == document->end() || !text->is_object())
            return Error{shownName + ": text_config: expected an object (model_type gemma3 keeps the text model's "
                                     "settings there)"};
        return parseDecoder(ConfigReader(*text, shownName), arch->type);
    }
    return parseDecoder(ConfigReader(*document, shownName), arch->type);
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

std::int64_t ModelConfig::maxTokens() const
{
    // RoPE has no table to run out of; memory decides (checked by the forward).
    return recipe().learnedPositions ? positions : std::int64_t(1) << 24;
}

double ModelConfig::attentionScale(int layer) const
{
    if (queryPreAttnScalar)
        return 1.0 / std::sqrt(*queryPreAttnScalar);
    if (type != ModelType::Gpt2)
        return 1.0 / std::sqrt(double(headDim()));
    double scale = scaleAttnWeights ? 1.0 / std::sqrt(double(headDim())) : 1.0;
    if (scaleByInverseLayerIdx)
        scale /= double(layer + 1);
    return scale;
}

namespace {

// modeling_rope_utils.py's inverse frequencies and attention factor for one rope_scaling.
void scaleFrequencies(const RopeScaling &s, const ModelConfig &c, std::int64_t tokens, RopeSpec &rope)
{
    const int dim = c.headDim();
    const auto defaults = [&](double base) {
        std::vector<double> f(std::size_t(dim / 2));
        for (std::size_t i = 0; i < f.size(); ++i)
            f[i] = 1.0 / std::pow(base, double(2 * i) / double(dim));
        return f;
    };
    switch (s.type) {
    case RopeScaling::Type::Default:
        return;
    case RopeScaling::Type::Linear:
        rope.frequencies = defaults(rope.base);
        for (double &f : rope.frequencies)
            f /= s.factor;
        return;
    case RopeScaling::Type::Dynamic: {
        // The NTK rule for sequences past max_position_embeddings (seq_len = the last position + 1).
        const double max = double(c.positions), seq = double(std::max<std::int64_t>(tokens, c.positions));
        const double base = rope.base * std::pow(s.factor * seq / max - (s.factor - 1.0), double(dim) / (dim - 2));
        rope.frequencies = defaults(base);
        return;
    }
    case RopeScaling::Type::Llama3: {
        std::vector<double> f = defaults(rope.base);
        const double old = double(s.originalMaxPositions);
        const double lowWavelen = old / s.lowFreqFactor, highWavelen = old / s.highFreqFactor;
        for (double &inv : f) {
            const double wavelen = 2.0 * M_PI / inv;
            if (wavelen > lowWavelen) {
                inv /= s.factor;
            } else if (wavelen >= highWavelen) {
                const double smooth = (old / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
                inv = (1.0 - smooth) * inv / s.factor + smooth * inv;
            }
        }
        rope.frequencies = std::move(f);
        return;
    }
    case RopeScaling::Type::Yarn: {
        double factor = s.factor;
        double original = double(c.positions);
        if (s.originalMaxPositions > 0) {
            // As transformers: the ratio of the two context lengths replaces `factor`.
            original = double(s.originalMaxPositions);
            factor = double(c.positions) / original;
        }
        const auto mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
        double attention = s.attentionFactor.value_or(0.0);
        if (!s.attentionFactor)
            attention = s.mscale && s.mscaleAllDim ? mscale(factor, *s.mscale) / mscale(factor, *s.mscaleAllDim)
                                                   : mscale(factor, 1.0);
        const auto correction = [&](double rotations) {
            return double(dim) * std::log(original / (rotations * 2.0 * M_PI)) / (2.0 * std::log(rope.base));
        };
        double low = correction(s.betaFast), high = correction(s.betaSlow);
        if (s.truncate) {
            low = std::floor(low);
            high = std::ceil(high);
        }
        low = std::max(low, 0.0);
        high = std::min(high, double(dim - 1));
        if (low == high)
            high += 0.001;
        std::vector<double> f = defaults(rope.base);
        for (std::size_t i = 0; i < f.size(); ++i) {
            const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
            const double extrapolation = 1.0 - ramp;
            f[i] = f[i] / factor * (1.0 - extrapolation) + f[i] * extrapolation;
        }
        rope.frequencies = std::move(f);
        rope.scaling = attention;
        return;
    }
    }
}

} // namespace

std::optional<RopeSpec> ModelConfig::rope(int layer, std::int64_t tokens) const
{
    if (recipe().learnedPositions)
        return std::nullopt;
    RopeSpec r;
    const bool local = ropeLocalTheta && windows.size() > std::size_t(layer) && windows[std::size_t(layer)] > 0;
    if (local) { // Gemma 3's sliding layers: their own base, never scaled
        r.base = *ropeLocalTheta;
        return r;
    }
    r.base = ropeTheta;
    scaleFrequencies(ropeScaling, *this, tokens, r);
    return r;
}

} // namespace attnscope
