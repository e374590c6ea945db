#pragma once

#include "core/attention/AttentionBackend.h"

namespace attnscope {

// The Eigen engine: float32, one GEMM per projection, then per (head, block of query
// rows) a GEMM for the scores, a vectorised masked softmax and a GEMM for weights·V that
// skips keys no row of the block may see (half the work under a causal mask). The
// (head, row block) tasks run in parallel on OpenMP threads.
class CpuBackend final : public AttentionBackend
{
public:
    // threads <= 0: as many as OpenMP offers (the machine's cores).
    explicit CpuBackend(int threads = 0);

    std::string name() const override { return "cpu"; }
    std::string deviceName() const override;
    Result<AttentionTrace> compute(const AttentionProblem &problem) override;

    int threads() const { return m_threads; }

private:
    int m_threads;
};

// The float softmax the CPU engine uses, exposed for tests: one row of n scaled scores,
// the allowed flags, the fill and the head's sink logit (may be null). Writes n weights.
void maskedSoftmaxRow(const float *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill, float *out,
                      const float *sink = nullptr);

// The float steps every CPU path shares (the full and the pooled engines, the model forward):
// c*tanh(s/c) over a block of scores, and the projections Q, K, V with RoPE applied where the
// problem has it (the vectors before rotation kept per head where asked: q [H], k [G]).
void applySoftcap(float cap, Eigen::Ref<MatrixF> scores);
void projectAndRotate(const AttentionProblem &problem, MatrixF &q, MatrixF &k, MatrixF &v,
                      std::vector<MatrixF> *qBefore = nullptr, std::vector<MatrixF> *kBefore = nullptr);

} // namespace attnscope
