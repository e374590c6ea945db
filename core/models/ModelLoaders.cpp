// One loader for every architecture: the entry's tensor names and recipe say what to read.
// nn.Linear weights are stored [out, in] and transposed here to multiply on the right; GPT-2's
// Conv1D weights are stored [in, out] already, with q, k and v side by side in c_attn.

#include "core/models/ModelLoaders.h"
#include "core/io/MemoryLimits.h"

namespace attnscope {

namespace {

class Loader
{
public:
    Loader(const ModelTensors &t, const ModelConfig &c) : m_t(t), m_c(c), m_n(c.architecture().names) {}

    // A weight kept mapped: in by out as used; nn.Linear stores it [out, in].
    Status mapped(const std::string &name, std::int64_t in, std::int64_t out, WeightMatrix &weight) const
    {
        ATTNSCOPE_ASSIGN_OR_RETURN(weight, m_t.weight({name}, in, out, !m_n.conv1d));
        return Ok{};
    }

    Status norm(const std::string &name, LayerNormWeights &out) const
    {
        const std::int64_t d = m_c.width;
        std::vector<std::string> weight = {name + ".weight"}, bias = {name + ".bias"};
        if (m_n.gammaBeta) {
            weight.push_back(name + ".gamma");
            bias.push_back(name + ".beta");
        }
        ATTNSCOPE_ASSIGN_OR_RETURN(out.weight, m_t.vector(weight, d));
        if (m_c.recipe().norm == NormKind::LayerNorm)
            ATTNSCOPE_ASSIGN_OR_RETURN(out.bias, m_t.vector(bias, d));
        if (m_c.recipe().normAddsOne)
            out.weight.array() += 1.0f;
        return Ok{};
    }

    // A projection in -> out: nn.Linear (stored out by in) or Conv1D (stored in by out).
    Status linear(const std::string &name, std::int64_t in, std::int64_t out, bool bias, MatrixF &weight,
                  VectorF &biasOut) const
    {
        ATTNSCOPE_ASSIGN_OR_RETURN(weight, m_t.matrix({name + ".weight"}, in, out, !m_n.conv1d));
        if (bias)
            ATTNSCOPE_ASSIGN_OR_RETURN(biasOut, m_t.vector({name + ".bias"}, out));
        return Ok{};
    }

    Status attention(const std::string &p, AttentionWeights &a) const
    {
        const std::int64_t d = m_c.width, hd = m_c.headDim();
        const std::int64_t qWidth = hd * m_c.heads, kvWidth = hd * m_c.keyValueHeads();
        VectorF qb, kb, vb, ob;
        MatrixF o;
        if (m_n.conv1d) {
            MatrixF qkv;
            VectorF qkvBias;
            ATTNSCOPE_ASSIGN_OR_RETURN(qkv, m_t.matrix({p + m_n.qkv + ".weight"}, d, 3 * d));
            ATTNSCOPE_ASSIGN_OR_RETURN(qkvBias, m_t.vector({p + m_n.qkv + ".bias"}, 3 * d));
            a.q = qkv.leftCols(d);
            a.k = qkv.middleCols(d, d);
            a.v = qkv.rightCols(d);
            qb = qkvBias.head(d);
            kb = qkvBias.segment(d, d);
            vb = qkvBias.tail(d);
        } else {
            for (Status s : {linear(p + m_n.q, d, qWidth, m_c.qkvBias, a.q, qb),
                             linear(p + m_n.k, d, kvWidth, m_c.qkvBias, a.k, kb),
                             linear(p + m_n.v, d, kvWidth, m_c.qkvBias, a.v, vb)})
                if (!s)
                    return s;
        }
        if (Status s = linear(p + m_n.o, qWidth, d, m_c.oBias, o, ob); !s)
            return s;
        const auto optional = [](VectorF v) { return v.size() ? std::optional<VectorF>(std::move(v)) : std::nullopt; };
        a.qBias = optional(std::move(qb));
        a.kBias = optional(std::move(kb));
        a.vBias = optional(std::move(vb));
        a.o = std::move(o);
        a.oBias = optional(std::move(ob));
        if (m_c.recipe().qkNorm) {
            VectorF qn, kn;
            ATTNSCOPE_ASSIGN_OR_RETURN(qn, m_t.vector({p + m_n.qNorm + ".weight"}, hd));
            ATTNSCOPE_ASSIGN_OR_RETURN(kn, m_t.vector({p + m_n.kNorm + ".weight"}, hd));
            if (m_c.recipe().normAddsOne) {
                qn.array() += 1.0f;
                kn.array() += 1.0f;
            }
            a.qNorm = std::move(qn);
            a.kNorm = std::move(kn);
        }
        return Ok{};
    }

    Status layer(int index, TransformerLayer &l) const
    {
        const std::int64_t d = m_c.width, inner = m_c.intermediate;
        const std::string p = layerName(m_n.layer, index);
        if (Status s = attention(p, l.attention); !s)
            return s;
        for (const auto &[name, norm] :
             {std::pair{&m_n.norm1, &l.norm1}, std::pair{&m_n.norm2, &l.norm2},
              std::pair{&m_n.postAttentionNorm, &l.postAttentionNorm}, std::pair{&m_n.postMlpNorm, &l.postMlpNorm}})
            if (!name->empty())
                if (Status s = this->norm(p + *name, *norm); !s)
                    return s;
        const auto bias = [&](const std::string &name, std::int64_t size, VectorF &out) -> Status {
            if (m_c.mlpBias)
                ATTNSCOPE_ASSIGN_OR_RETURN(out, m_t.vector({name + ".bias"}, size));
            return Ok{};
        };
        for (Status s : {mapped(p + m_n.up + ".weight", d, inner, l.up), bias(p + m_n.up, inner, l.upBias),
                         mapped(p + m_n.down + ".weight", inner, d, l.down), bias(p + m_n.down, d, l.downBias)})
            if (!s)
                return s;
        if (m_c.recipe().gatedMlp) {
            WeightMatrix gate;
            for (Status s : {mapped(p + m_n.gate + ".weight", d, inner, gate), bias(p + m_n.gate, inner, l.gateBias)})
                if (!s)
                    return s;
            l.gate = std::move(gate);
        }
        return Ok{};
    }

    Result<TransformerWeights> model() const
    {
        const BlockRecipe &r = m_c.recipe();
        TransformerWeights w;
        ATTNSCOPE_ASSIGN_OR_RETURN(w.tokenEmbedding, m_t.weight({m_n.embedding}, m_c.vocabSize, m_c.width, false));
        if (r.learnedPositions)
            ATTNSCOPE_ASSIGN_OR_RETURN(w.positionEmbedding, m_t.matrix({m_n.positions}, m_c.positions, m_c.width));
        if (r.tokenTypes) {
            MatrixF types;
            ATTNSCOPE_ASSIGN_OR_RETURN(types, m_t.matrix({m_n.tokenTypes}, m_c.typeVocabSize, m_c.width));
            w.tokenType0 = types.row(0);
        }
        if (r.embeddingNorm)
            if (Status s = norm(m_n.embeddingNorm, w.embeddingNorm); !s)
                return s.error();
        if (r.finalNorm)
            if (Status s = norm(m_n.finalNorm, w.finalNorm); !s)
                return s.error();
        w.layers.resize(std::size_t(m_c.layers));
        for (int l = 0; l < m_c.layers; ++l)
            if (Status s = layer(l, w.layers[std::size_t(l)]); !s)
                return s.error();
        if (!m_n.lmHead.empty()) {
            // Stored under its own name (no prefix); absent: tied to the embedding, when the
            // config says so.
            const std::string *stored = nullptr;
            for (const std::string &name : m_n.lmHead)
                if (m_t.contains(name) && !stored)
                    stored = &name;
            if (stored) {
                WeightMatrix head;
                ATTNSCOPE_ASSIGN_OR_RETURN(head, m_t.weight({*stored}, m_c.vocabSize, m_c.width, false));
                w.lmHead = std::move(head);
            } else if (!m_c.tieWordEmbeddings) {
                return m_t.find({m_n.lmHead.front()}).error();
            }
        }
        return w;
    }

private:
    const ModelTensors &m_t;
    const ModelConfig &m_c;
    const TensorNames &m_n;
};

} // namespace

Result<TransformerWeights> loadWeights(std::shared_ptr<const ModelTensors> tensors, const ModelConfig &config)
{
    auto weights = Loader(*tensors, config).model();
    if (weights)
        weights->source = std::move(tensors);
    return weights;
}

std::int64_t modelWeightCount(const ModelConfig &c)
{
    const std::int64_t d = c.width, hd = c.headDim();
    const std::int64_t q = hd * c.heads, kv = hd * c.keyValueHeads();
    // q, k, v, o with biases; four norms with biases; q/k norms.
    std::int64_t perLayer = saturatingAdd(saturatingMul(d + 1, q + 2 * kv), saturatingMul(q + 1, d));
    perLayer = saturatingAdd(perLayer, saturatingAdd(10 * d, 2 * hd));
    std::int64_t total = saturatingMul(4, d);
    if (c.recipe().learnedPositions)
        total = saturatingAdd(total, saturatingMul(c.positions, d));
    if (c.recipe().tokenTypes)
        total = saturatingAdd(total, saturatingMul(c.typeVocabSize, d));
    return saturatingAdd(total, saturatingMul(perLayer, c.layers));
}

} // namespace attnscope
