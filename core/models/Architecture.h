#pragma once

// Architectures as data (design.md, "today's decoder models"): one entry per model_type says
// how its blocks compute (the recipe) and where a checkpoint keeps each tensor (the names).
// One forward loop (TransformerModel) and one loader (ModelLoaders) read these entries; adding
// a family means adding an entry, not a code path.

#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

enum class ModelType { Gpt2, Bert, Llama, Mistral, Qwen2, Qwen3, Gemma2, Gemma3 };

enum class NormKind {
    LayerNorm, // (x - mean)/sqrt(var + eps)·w + b
    RmsNorm,   // x/sqrt(mean(x²) + eps)·w; Gemma's ·(1 + w) is folded into w on load
};

enum class NormPlacement {
    Pre,      // x + attn(norm1(x)); x + mlp(norm2(x))   (GPT-2, Llama, Mistral, Qwen)
    Post,     // norm1(x + attn(x)); norm2(x + mlp(x))   (BERT)
    Sandwich, // x + postAttn(attn(norm1(x))); x + postMlp(mlp(norm2(x)))  (Gemma 2 and 3)
};

// How a block computes, beyond the sizes in ModelConfig.
struct BlockRecipe {
    NormKind norm = NormKind::LayerNorm;
    NormPlacement placement = NormPlacement::Pre;
    bool normAddsOne = false;      // Gemma: RMSNorm multiplies by (1 + w)
    bool learnedPositions = false; // a position embedding table; otherwise RoPE
    bool tokenTypes = false;       // BERT: token type 0's embedding is added
    bool embeddingNorm = false;    // BERT: a LayerNorm right after the embeddings
    bool embeddingScale = false;   // Gemma: embeddings times √d
    bool finalNorm = false;        // a norm after the last block (its hidden state included)
    bool gatedMlp = false;         // down(act(gate(x))·up(x)) instead of down(act(up(x)))
    bool causal = true;
    bool qkNorm = false; // per-head RMSNorm of q and k before RoPE (Qwen 3, Gemma 3)
};

// Where a checkpoint keeps each tensor, as transformers names them. "{}" stands for the layer
// index. A name is found with any of `prefixes` in front, or none.
struct TensorNames {
    std::vector<std::string> prefixes; // "model.", "transformer.", ...
    std::string embedding, positions, tokenTypes, embeddingNorm, finalNorm;
    std::vector<std::string> lmHead; // tried as written, without the prefixes
    std::string layer;               // "layers.{}."
    bool conv1d = false;             // GPT-2: weights stored [in, out] and q|k|v fused in `qkv`
    std::string qkv, q, k, v, o, qNorm, kNorm;
    std::string norm1, postAttentionNorm, norm2, postMlpNorm;
    std::string up, gate, down;
    // Older names accepted for a norm's weight and bias (BERT: gamma, beta).
    bool gammaBeta = false;
};

struct Architecture {
    ModelType type;
    const char *modelType;   // config.json's model_type
    const char *displayName; // "Llama", "Gemma 2", ...
    BlockRecipe recipe;
    TensorNames names;
};

// The entry of a model type; nullptr when AttnScope does not read it.
const Architecture *findArchitecture(std::string_view modelType);
const Architecture &architecture(ModelType type);
// "gpt2, bert, llama, mistral, qwen2, qwen3, gemma2, gemma3_text or gemma3": for messages.
std::string supportedModelTypes();

// A name template with "{}" replaced by the layer index.
std::string layerName(const std::string &pattern, int layer);

} // namespace attnscope
