#include "core/models/Architecture.h"

#include <array>

namespace attnscope {

namespace {

// Llama's layout, which Mistral, Qwen and Gemma share (transformers' modeling_llama.py).
TensorNames llamaNames(std::vector<std::string> prefixes, std::vector<std::string> lmHead)
{
    TensorNames n;
    n.prefixes = std::move(prefixes);
    n.embedding = "embed_tokens.weight";
    n.finalNorm = "norm";
    n.lmHead = std::move(lmHead);
    n.layer = "layers.{}.";
    n.q = "self_attn.q_proj";
    n.k = "self_attn.k_proj";
    n.v = "self_attn.v_proj";
    n.o = "self_attn.o_proj";
    n.qNorm = "self_attn.q_norm";
    n.kNorm = "self_attn.k_norm";
    n.norm1 = "input_layernorm";
    n.norm2 = "post_attention_layernorm";
    n.up = "mlp.up_proj";
    n.gate = "mlp.gate_proj";
    n.down = "mlp.down_proj";
    return n;
}

TensorNames gemmaNames(std::vector<std::string> prefixes, std::vector<std::string> lmHead)
{
    TensorNames n = llamaNames(std::move(prefixes), std::move(lmHead));
    n.postAttentionNorm = "post_attention_layernorm";
    n.norm2 = "pre_feedforward_layernorm";
    n.postMlpNorm = "post_feedforward_layernorm";
    return n;
}

TensorNames gpt2Names()
{
    TensorNames n;
    n.prefixes = {"transformer."};
    n.embedding = "wte.weight";
    n.positions = "wpe.weight";
    n.finalNorm = "ln_f";
    n.lmHead = {"lm_head.weight"};
    n.layer = "h.{}.";
    n.conv1d = true;
    n.qkv = "attn.c_attn";
    n.o = "attn.c_proj";
    n.norm1 = "ln_1";
    n.norm2 = "ln_2";
    n.up = "mlp.c_fc";
    n.down = "mlp.c_proj";
    return n;
}

TensorNames bertNames()
{
    TensorNames n;
    n.prefixes = {"bert."};
    n.embedding = "embeddings.word_embeddings.weight";
    n.positions = "embeddings.position_embeddings.weight";
    n.tokenTypes = "embeddings.token_type_embeddings.weight";
    n.embeddingNorm = "embeddings.LayerNorm";
    n.layer = "encoder.layer.{}.";
    n.q = "attention.self.query";
    n.k = "attention.self.key";
    n.v = "attention.self.value";
    n.o = "attention.output.dense";
    n.norm1 = "attention.output.LayerNorm";
    n.norm2 = "output.LayerNorm";
    n.up = "intermediate.dense";
    n.down = "output.dense";
    n.gammaBeta = true;
    return n;
}

BlockRecipe decoderRecipe(bool qkNorm)
{
    BlockRecipe r;
    r.norm = NormKind::RmsNorm;
    r.finalNorm = true;
    r.gatedMlp = true;
    r.qkNorm = qkNorm;
    return r;
}

BlockRecipe gemmaRecipe(bool qkNorm)
{
    BlockRecipe r = decoderRecipe(qkNorm);
    r.placement = NormPlacement::Sandwich;
    r.normAddsOne = true;
    r.embeddingScale = true;
    return r;
}

const std::array<Architecture, 9> &table()
{
    static const std::array<Architecture, 9> entries = [] {
        BlockRecipe gpt2;
        gpt2.learnedPositions = true;
        gpt2.finalNorm = true;
        BlockRecipe bert;
        bert.placement = NormPlacement::Post;
        bert.learnedPositions = true;
        bert.tokenTypes = true;
        bert.embeddingNorm = true;
        bert.causal = false;
        const std::vector<std::string> model = {"model."}, lmHead = {"lm_head.weight"};
        // Gemma 3's multimodal checkpoints keep the text model under language_model (Hub
        // checkpoints) or model.language_model (transformers 4.52 and later).
        const std::vector<std::string> gemma3 = {"model.", "language_model.model.", "model.language_model."};
        const std::vector<std::string> gemma3Head = {"lm_head.weight", "language_model.lm_head.weight"};
        return std::array<Architecture, 9>{{
            {ModelType::Gpt2, "gpt2", "GPT-2", gpt2, gpt2Names()},
            {ModelType::Bert, "bert", "BERT", bert, bertNames()},
            {ModelType::Llama, "llama", "Llama", decoderRecipe(false), llamaNames(model, lmHead)},
            {ModelType::Mistral, "mistral", "Mistral", decoderRecipe(false), llamaNames(model, lmHead)},
            {ModelType::Qwen2, "qwen2", "Qwen2", decoderRecipe(false), llamaNames(model, lmHead)},
            {ModelType::Qwen3, "qwen3", "Qwen3", decoderRecipe(true), llamaNames(model, lmHead)},
            {ModelType::Gemma2, "gemma2", "Gemma 2", gemmaRecipe(false), gemmaNames(model, lmHead)},
            {ModelType::Gemma3, "gemma3_text", "Gemma 3", gemmaRecipe(true), gemmaNames(gemma3, gemma3Head)},
            {ModelType::Gemma3, "gemma3", "Gemma 3", gemmaRecipe(true), gemmaNames(gemma3, gemma3Head)},
        }};
    }();
    return entries;
}

} // namespace

const Architecture *findArchitecture(std::string_view modelType)
{
    for (const Architecture &a : table())
        if (modelType == a.modelType)
            return &a;
    return nullptr;
}

const Architecture &architecture(ModelType type)
{
    for (const Architecture &a : table())
        if (a.type == type)
            return a;
    return table().front();
}

std::string supportedModelTypes()
{
    std::string names;
    const auto &entries = table();
    for (std::size_t i = 0; i < entries.size(); ++i)
        names.append(i == 0 ? "" : i + 1 == entries.size() ? " or " : ", ").append(entries[i].modelType);
    return names;
}

std::string layerName(const std::string &pattern, int layer)
{
    std::string out = pattern;
    const auto at = out.find("{}");
    if (at != std::string::npos)
        out.replace(at, 2, std::to_string(layer));
    return out;
}

} // namespace attnscope
