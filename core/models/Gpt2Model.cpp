// GPT-2's checkpoint layout (transformers' modeling_gpt2.py): Conv1D weights stored [in, out],
// so they already multiply on the right; c_attn holds Q, K and V side by side.

#include "core/io/MemoryLimits.h"
#include "core/models/ModelLoaders.h"

namespace attnscope {

namespace {

Status loadNorm(const ModelTensors &t, const std::string &name, std::int64_t d, LayerNormWeights &out)
{
    ATTNSCOPE_ASSIGN_OR_RETURN(out.weight, t.vector({name + ".weight"}, d));
    ATTNSCOPE_ASSIGN_OR_RETURN(out.bias, t.vector({name + ".bias"}, d));
    return Ok{};
}

Status loadGpt2Layer(const ModelTensors &t, const ModelConfig &c, int index, TransformerLayer &layer)
{
    const std::int64_t d = c.width, inner = c.intermediate;
    const std::string p = "h." + std::to_string(index) + ".";
    if (Status s = loadNorm(t, p + "ln_1", d, layer.norm1); !s)
        return s;
    if (Status s = loadNorm(t, p + "ln_2", d, layer.norm2); !s)
        return s;
    MatrixF qkv;
    VectorF qkvBias;
    ATTNSCOPE_ASSIGN_OR_RETURN(qkv, t.matrix({p + "attn.c_attn.weight"}, d, 3 * d));
    ATTNSCOPE_ASSIGN_OR_RETURN(qkvBias, t.vector({p + "attn.c_attn.bias"}, 3 * d));
    AttentionWeights &a = layer.attention;
    a.q = qkv.leftCols(d);
    a.k = qkv.middleCols(d, d);
    a.v = qkv.rightCols(d);
    a.qBias = qkvBias.head(d);
    a.kBias = qkvBias.segment(d, d);
    a.vBias = qkvBias.tail(d);
    MatrixF o;
    VectorF oBias;
    ATTNSCOPE_ASSIGN_OR_RETURN(o, t.matrix({p + "attn.c_proj.weight"}, d, d));
    ATTNSCOPE_ASSIGN_OR_RETURN(oBias, t.vector({p + "attn.c_proj.bias"}, d));
    a.o = std::move(o);
    a.oBias = std::move(oBias);
    ATTNSCOPE_ASSIGN_OR_RETURN(layer.up, t.matrix({p + "mlp.c_fc.weight"}, d, inner));
    ATTNSCOPE_ASSIGN_OR_RETURN(layer.upBias, t.vector({p + "mlp.c_fc.bias"}, inner));
    ATTNSCOPE_ASSIGN_OR_RETURN(layer.down, t.matrix({p + "mlp.c_proj.weight"}, inner, d));
    ATTNSCOPE_ASSIGN_OR_RETURN(layer.downBias, t.vector({p + "mlp.c_proj.bias"}, d));
    return Ok{};
}

} // namespace

Result<TransformerWeights> loadGpt2Weights(const ModelTensors &t, const ModelConfig &c)
{
    TransformerWeights w;
    ATTNSCOPE_ASSIGN_OR_RETURN(w.tokenEmbedding, t.matrix({"wte.weight"}, c.vocabSize, c.width));
    ATTNSCOPE_ASSIGN_OR_RETURN(w.positionEmbedding, t.matrix({"wpe.weight"}, c.positions, c.width));
    if (Status s = loadNorm(t, "ln_f", c.width, w.finalNorm); !s)
        return s.error();
    w.layers.resize(std::size_t(c.layers));
    for (int l = 0; l < c.layers; ++l)
        if (Status s = loadGpt2Layer(t, c, l, w.layers[std::size_t(l)]); !s)
            return s.error();
    return w;
}

std::int64_t modelWeightCount(const ModelConfig &c)
{
    const std::int64_t d = c.width, inner = c.intermediate;
    std::int64_t perLayer = saturatingAdd(saturatingMul(4 * d + 9, d), saturatingMul(2 * d + 1, inner));
    std::int64_t total = saturatingMul(saturatingAdd(saturatingAdd(c.vocabSize, c.positions), 3), d);
    if (c.type == ModelType::Bert)
        total = saturatingAdd(total, saturatingMul(c.typeVocabSize, d));
    return saturatingAdd(total, saturatingMul(perLayer, c.layers));
}

} // namespace attnscope
