#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"
#include "core/models/Architecture.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// The MLP's activation, as transformers' ACT2FN names it.
enum class Activation {
    GeluTanh, // "gelu_new", "gelu_pytorch_tanh": 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))
    GeluErf,  // "gelu": 0.5·x·(1 + erf(x/√2))
    Silu,     // "silu", "swish": x·sigmoid(x)
    Relu,     // "relu": max(x, 0)
};

// config.json's rope_scaling (or transformers 5's rope_parameters), as modeling_rope_utils.py
// reads it.
struct RopeScaling {
    enum class Type { Default, Linear, Dynamic, Yarn, Llama3 };
    Type type = Type::Default;
    double factor = 1.0;
    double lowFreqFactor = 1.0, highFreqFactor = 4.0; // llama3
    std::int64_t originalMaxPositions = 0;            // original_max_position_embeddings; 0: absent
    std::optional<double> attentionFactor, mscale, mscaleAllDim;
    double betaFast = 32.0, betaSlow = 1.0; // yarn
    bool truncate = true;                   // yarn
};

// What the forward pass needs from a Hugging Face config.json, under one set of names. A key
// that is missing takes transformers' default for that model type (GPT2Config, LlamaConfig,
// Gemma2Config, ...), as from_pretrained() does; a key that is present must be of the right
// kind and range, and a setting this forward cannot reproduce is refused by name.
struct ModelConfig {
    ModelType type = ModelType::Gpt2;
    int layers = 0;          // n_layer | num_hidden_layers
    int heads = 0;           // n_head | num_attention_heads (query heads)
    int kvHeads = 0;         // num_key_value_heads; 0: as many as heads
    int width = 0;           // n_embd | hidden_size (d)
    int headDimension = 0;   // head_dim; 0: width / heads
    int intermediate = 0;    // n_inner (null: 4·d) | intermediate_size
    int positions = 0;       // n_positions (or n_ctx) | max_position_embeddings
    int vocabSize = 0;       // vocab_size
    int typeVocabSize = 0;   // BERT: type_vocab_size (token type 0 is used)
    double layerNormEps = 0; // layer_norm_epsilon | layer_norm_eps | rms_norm_eps
    Activation activation = Activation::GeluTanh;
    // GPT-2's attention scale: 1/sqrt(dK) when scale_attn_weights (the default), further
    // divided by (layer index + 1) when scale_attn_by_inverse_layer_idx.
    bool scaleAttnWeights = true;
    bool scaleByInverseLayerIdx = false;

    // Today's decoders (design.md).
    double ropeTheta = 10000.0;               // rope_theta (global layers)
    std::optional<double> ropeLocalTheta;     // Gemma 3's rope_local_base_freq (sliding layers, unscaled)
    RopeScaling ropeScaling;                  // global layers
    std::vector<std::int64_t> windows;        // per layer: the sliding window W, 0 for full attention
    std::optional<double> queryPreAttnScalar; // Gemma: the scale is its -1/2 power
    std::optional<double> attnSoftcap;        // attn_logit_softcapping
    std::optional<double> finalSoftcap;       // final_logit_softcapping (on the logits)
    bool tieWordEmbeddings = false;           // the LM head is the embedding when none is stored
    bool qkvBias = false;                     // q, k and v projections have biases
    bool oBias = false;                       // the output projection has a bias
    bool mlpBias = false;                     // the MLP's projections have biases

    const Architecture &architecture() const { return attnscope::architecture(type); }
    const BlockRecipe &recipe() const { return architecture().recipe; }
    int headDim() const { return headDimension > 0 ? headDimension : width / heads; }
    int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    const char *typeName() const { return architecture().modelType; }
    const char *displayName() const { return architecture().displayName; }
    // The most tokens a forward takes: the position table's rows, or (RoPE) no limit but memory.
    std::int64_t maxTokens() const;
    // The factor on q·k in layer l.
    double attentionScale(int layer) const;
    // Layer l's rotary embedding for a forward over `tokens` tokens (the dynamic rule depends on
    // it); nothing for learned positions.
    std::optional<RopeSpec> rope(int layer, std::int64_t tokens) const;
};

// Parses config.json's text. `shownName` starts every message ("m/config.json: n_head: expected
// a whole number from 1 to 65536, found "12""). An unknown model_type is kind Unsupported, as
// is a setting this forward does not implement (activation_function "relu", BERT's
// position_embedding_type "relative_key", is_decoder, rope_type "longrope", a layer_types entry
// other than full_attention or sliding_attention, mixture-of-experts layers).
Result<ModelConfig> parseModelConfig(std::string_view json, const std::string &shownName);

// MODEL_DIR/config.json read and parsed; a missing file is kind Io.
Result<ModelConfig> readModelConfig(const std::string &modelDir);

// An encoder–decoder translation model's config.json (model_type "marian"; design.md,
// "encoder–decoder translation models"): MarianConfig's defaults for missing keys, and the
// greedy search's settings as generate() takes them (generation_config.json first).
struct TranslationConfig {
    struct Stack {
        int layers = 0; // encoder_layers | decoder_layers
        int heads = 0;  // encoder_attention_heads | decoder_attention_heads
        int ffn = 0;    // encoder_ffn_dim | decoder_ffn_dim
    };
    Stack encoder, decoder;
    int width = 0;     // d_model
    int vocabSize = 0; // vocab_size (decoder_vocab_size, when given, must be the same)
    int positions = 0; // max_position_embeddings (the sinusoidal table's rows)
    Activation activation = Activation::GeluErf;
    bool scaleEmbedding = false;   // embeddings times √d_model
    bool tieWordEmbeddings = true; // the LM head is the shared embedding
    double layerNormEps = 1e-5;    // nn.LayerNorm's default: MarianConfig has no key for it
    std::int32_t padId = 58100;    // pad_token_id: never chosen by the greedy search
    std::int32_t eosId = 0;        // eos_token_id
    std::int32_t decoderStartId = 58100;
    std::optional<std::int32_t> forcedEosId = 0; // forced_eos_token_id: the last token at max_length
    int maxLength = 20;                          // max_length: decoder ids, the start token included

    int headDim(const Stack &s) const { return width / s.heads; }
};

Result<TranslationConfig> parseTranslationConfig(std::string_view json, const std::string &shownName);
// MODEL_DIR/config.json, then generation_config.json where it sets max_length,
// decoder_start_token_id, eos_token_id, pad_token_id or forced_eos_token_id.
Result<TranslationConfig> readTranslationConfig(const std::string &modelDir);

// A model folder's JSON object `name`, or nothing when the file is absent; `shown` gets its path
// as messages name it.
Result<std::optional<nlohmann::ordered_json>> readFolderJson(const std::string &modelDir, const std::string &name,
                                                             std::string &shown);

} // namespace attnscope
