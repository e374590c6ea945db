#pragma once

#include "core/Gemm.h"
#include "core/attention/AttentionBackend.h"

#include <mutex>

namespace attnscope {

// What a CpuBackend keeps from one compute to the next, so that a compute maps no new memory
// for its intermediates: the full-width projections (Tq x H*dK, Tk x G*dK, Tk x G*dV, which the
// trace keeps only split per head) and a trace handed back through recycle().
struct CpuWorkspace {
    MatrixF q, k, v;
    AttentionTrace spare;
};

// The CPU engine: float32; the projections as one GEMM each (rows split over the threads),
// then per (head, block of query rows) a GEMM for the scores, a vectorised masked softmax and
// a GEMM for weights·V that skips keys no row of the block may see (half that work under a
// causal mask). The (head, row block) tasks run in parallel on OpenMP threads; every GEMM is
// core/Gemm.h's (OpenBLAS, one thread per call: the budget is this backend's alone).
class CpuBackend final : public AttentionBackend
{
public:
    // threads <= 0: as many as OpenMP offers (the machine's cores).
    explicit CpuBackend(int threads = 0);
    ~CpuBackend() override;

    std::string name() const override { return "cpu"; }
    // "OpenBLAS 0.3.21 (SkylakeX kernels) on CPU (2 threads)"; Eigen's version without OpenBLAS.
    std::string deviceName() const override;
    Result<AttentionTrace> compute(const AttentionProblem &problem) override;
    // Keeps the trace's buffers for the next compute(), which then writes its maps into them.
    void recycle(AttentionTrace &&trace) override;

    int threads() const { return m_threads; }

private:
    int m_threads;
    std::mutex m_workspaceMutex; // held for a whole compute(); a concurrent one uses its own buffers
    CpuWorkspace m_workspace;
};

// The float softmax the CPU engine uses, exposed for tests: one row of n scaled scores,
// the allowed flags, the fill and the head's sink logit (may be null). Writes n weights.
void maskedSoftmaxRow(const float *scores, const std::uint8_t *allowed, Eigen::Index n, MaskFill fill, float *out,
                      const float *sink = nullptr);

// The float steps every CPU path shares (the full and the pooled engines, the model forward):
// c*tanh(s/c) over a block of scores, and the projections Q, K, V with RoPE applied where the
// problem has it (the vectors before rotation kept per head where asked: q [H], k [G]).
void applySoftcap(float cap, Eigen::Ref<MatrixF> scores);
// x·sigmoid(x) (SiLU) in place over n values, with the softmax's vectorised exp (within 1 ulp).
void siluInPlace(float *x, Eigen::Index n);
void projectAndRotate(const AttentionProblem &problem, MatrixF &q, MatrixF &k, MatrixF &v,
                      std::vector<MatrixF> *qBefore = nullptr, std::vector<MatrixF> *kBefore = nullptr);
// Q of query rows [q0, q1) (rows x H·dK) and K of every key (Tk x G·dK) as every engine forms
// them: projections, biases, the per-head q/k norms, RoPE at the rows' positions; unscaled.
void projectQueriesAndKeys(const AttentionProblem &problem, Eigen::Index q0, Eigen::Index q1, MatrixF &q, MatrixF &k,
                           std::vector<MatrixF> *qBefore = nullptr, std::vector<MatrixF> *kBefore = nullptr);
// y = x·w (+ bias) into y's own storage (resizing to the same shape keeps the allocation), the
// rows split over the calling thread's budget (ScopedCpuThreads).
void project(const ConstMatrixViewF &x, const MatrixF &w, const std::optional<VectorF> &bias, MatrixF &y);

} // namespace attnscope
