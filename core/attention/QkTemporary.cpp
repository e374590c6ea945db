// TEMPORARY (removed when the CPU engine for q/k lands): the double reference as the engine, so
// the lead's branch links while the engine is written elsewhere.
#include "core/attention/QkAttention.h"

namespace attnscope {

Result<PooledResult> computePooledQk(const QkLayer &layer, const PoolOptions &options)
{
    if (Status s = validateQkLayer(layer); !s)
        return s.error();
    const PooledReference ref = referencePooledQk(layer, options);
    PooledResult out;
    for (const MatrixD &m : ref.pooled)
        out.pooled.push_back(m.cast<float>());
    if (options.headMean)
        out.headMean = ref.headMean.cast<float>();
    out.entropy = ref.entropy.cast<float>();
    return out;
}

Result<MatrixF> qkWeightsBlock(const QkLayer &layer, int head, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                               std::int64_t k1, const std::atomic<bool> *)
{
    const std::vector<MatrixD> w = referenceQkWeights(layer);
    return MatrixF(w[size_t(head)].block(q0, k0, q1 - q0, k1 - k0).cast<float>());
}

Result<MatrixF> qkLogSumExp(const QkLayer &layer, const std::atomic<bool> *)
{
    return MatrixF(referenceQkLogSumExp(layer).cast<float>());
}

} // namespace attnscope

#include "core/attention/CpuBackend.h"
#include "core/attention/Mask.h"

namespace attnscope {

Result<QkLayer> qkLayerOf(const AttentionProblem &p)
{
    CpuBackend cpu;
    auto trace = cpu.compute(p);
    if (!trace)
        return trace.error();
    QkLayer l;
    l.heads = p.spec.heads;
    l.kvHeads = p.spec.keyValueHeads();
    l.headDim = p.spec.headDimQK;
    l.scale = p.spec.scale();
    l.causal = p.mask.causal;
    l.window = p.mask.window;
    l.softcap = p.spec.softcap;
    l.sinks = p.weights.sinks;
    if (!positionsAreIndices(p)) {
        l.queryPositions = queryPositions(p);
        l.keyPositions = keyPositions(p);
    }
    l.q.resize(p.tq(), Eigen::Index(l.heads) * l.headDim);
    l.k.resize(p.tk(), Eigen::Index(l.kvHeads) * l.headDim);
    for (int h = 0; h < l.heads; ++h)
        l.q.middleCols(Eigen::Index(h) * l.headDim, l.headDim) = trace->q[size_t(h)];
    for (int g = 0; g < l.kvHeads; ++g)
        l.k.middleCols(Eigen::Index(g) * l.headDim, l.headDim) = trace->k[size_t(g)];
    return l;
}

} // namespace attnscope
