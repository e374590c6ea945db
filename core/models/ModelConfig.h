#pragma once

#include "core/Result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace attnscope {

enum class ModelType { Gpt2, Bert };

// The MLP's activation, as transformers' ACT2FN names it.
enum class Activation {
    GeluTanh, // "gelu_new": 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))
    GeluErf,  // "gelu": 0.5·x·(1 + erf(x/√2))
};

// What the forward pass needs from a Hugging Face config.json, under one set of names. A key
// that is missing takes transformers' default for that model type (GPT2Config, BertConfig), as
// from_pretrained() does; a key that is present must be of the right kind and range.
struct ModelConfig {
    ModelType type = ModelType::Gpt2;
    int layers = 0;          // n_layer | num_hidden_layers
    int heads = 0;           // n_head | num_attention_heads
    int width = 0;           // n_embd | hidden_size (d)
    int intermediate = 0;    // n_inner (null: 4·d) | intermediate_size
    int positions = 0;       // n_positions (or n_ctx) | max_position_embeddings
    int vocabSize = 0;       // vocab_size
    int typeVocabSize = 0;   // BERT: type_vocab_size (token type 0 is used)
    double layerNormEps = 0; // layer_norm_epsilon | layer_norm_eps
    Activation activation = Activation::GeluTanh;
    // GPT-2's attention scale: 1/sqrt(dK) when scale_attn_weights (the default), further
    // divided by (layer index + 1) when scale_attn_by_inverse_layer_idx.
    bool scaleAttnWeights = true;
    bool scaleByInverseLayerIdx = false;

    int headDim() const { return width / heads; }
    const char *typeName() const { return type == ModelType::Gpt2 ? "gpt2" : "bert"; }
};

// Parses config.json's text. `shownName` starts every message ("m/config.json: n_head: expected
// a whole number from 1 to 65536, found "12""). An unknown model_type is kind Unsupported, as
// is a setting this forward does not implement (activation_function "relu", BERT's
// position_embedding_type "relative_key", is_decoder).
Result<ModelConfig> parseModelConfig(std::string_view json, const std::string &shownName);

// MODEL_DIR/config.json read and parsed; a missing file is kind Io.
Result<ModelConfig> readModelConfig(const std::string &modelDir);

} // namespace attnscope
