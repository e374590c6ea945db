// BERT's checkpoint layout (transformers' modeling_bert.py): nn.Linear weights stored
// [out, in], transposed here to multiply on the right; older checkpoints name LayerNorm's
// weight and bias gamma and beta.

#include "core/models/ModelLoaders.h"

namespace attnscope {

namespace {

Status loadNorm(const ModelTensors &t, const std::string &name, std::int64_t d, LayerNormWeights &out)
{
    ATTNSCOPE_ASSIGN_OR_RETURN(out.weight, t.vector({name + ".weight", name + ".gamma"}, d));
    ATTNSCOPE_ASSIGN_OR_RETURN(out.bias, t.vector({name + ".bias", name + ".beta"}, d));
    return Ok{};
}

// A Linear layer in -> out: its weight transposed to in by out, and its bias.
Status loadLinear(const ModelTensors &t, const std::string &name, std::int64_t in, std::int64_t out, MatrixF &weight,
                  VectorF &bias)
{
    ATTNSCOPE_ASSIGN_OR_RETURN(weight, t.matrix({name + ".weight"}, in, out, true));
    ATTNSCOPE_ASSIGN_OR_RETURN(bias, t.vector({name + ".bias"}, out));
    return Ok{};
}

Status loadBertLayer(const ModelTensors &t, const ModelConfig &c, int index, TransformerLayer &layer)
{
    const std::int64_t d = c.width, inner = c.intermediate;
    const std::string p = "encoder.layer." + std::to_string(index) + ".";
    AttentionWeights &a = layer.attention;
    VectorF qb, kb, vb, ob;
    MatrixF o;
    for (Status s : {loadLinear(t, p + "attention.self.query", d, d, a.q, qb),
                     loadLinear(t, p + "attention.self.key", d, d, a.k, kb),
                     loadLinear(t, p + "attention.self.value", d, d, a.v, vb),
                     loadLinear(t, p + "attention.output.dense", d, d, o, ob),
                     loadNorm(t, p + "attention.output.LayerNorm", d, layer.norm1),
                     loadLinear(t, p + "intermediate.dense", d, inner, layer.up, layer.upBias),
                     loadLinear(t, p + "output.dense", inner, d, layer.down, layer.downBias),
                     loadNorm(t, p + "output.LayerNorm", d, layer.norm2)})
        if (!s)
            return s;
    a.qBias = std::move(qb);
    a.kBias = std::move(kb);
    a.vBias = std::move(vb);
    a.o = std::move(o);
    a.oBias = std::move(ob);
    return Ok{};
}

} // namespace

Result<TransformerWeights> loadBertWeights(const ModelTensors &t, const ModelConfig &c)
{
    TransformerWeights w;
    ATTNSCOPE_ASSIGN_OR_RETURN(w.tokenEmbedding, t.matrix({"embeddings.word_embeddings.weight"}, c.vocabSize, c.width));
    ATTNSCOPE_ASSIGN_OR_RETURN(w.positionEmbedding,
                               t.matrix({"embeddings.position_embeddings.weight"}, c.positions, c.width));
    MatrixF types;
    ATTNSCOPE_ASSIGN_OR_RETURN(types, t.matrix({"embeddings.token_type_embeddings.weight"}, c.typeVocabSize, c.width));
    w.tokenType0 = types.row(0);
    if (Status s = loadNorm(t, "embeddings.LayerNorm", c.width, w.finalNorm); !s)
        return s.error();
    w.layers.resize(std::size_t(c.layers));
    for (int l = 0; l < c.layers; ++l)
        if (Status s = loadBertLayer(t, c, l, w.layers[std::size_t(l)]); !s)
            return s.error();
    return w;
}

} // namespace attnscope
