#pragma once

#include "core/Result.h"
#include "core/analysis/Pooling.h"
#include "core/attention/AttentionProblem.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope {

// The long-sequence form of design.md (`compute --pool N`): attention weights pooled to at
// most N x N cells per head, computed without ever holding Tq x Tk per head.
//
// Backend decision: AttentionBackend::computePooled() is a virtual whose default runs the
// Eigen engine below (computePooledCpu), so every backend answers a pooled request and one
// without its own pooled kernels (Vulkan has them: gpu/VulkanPooled.h) falls back to the CPU.
// Callers that report the device say so (the CLI notes usesCpuForPooled() when not "cpu").

struct PoolOptions {
    std::int64_t bins = 1024; // N: Nq = min(N, Tq), Nk = min(N, Tk)
    PoolMode mode = PoolMode::Max;
    int threads = 0; // <= 0: as many as OpenMP offers
    // A block of the full problem (the GUI's zoom): query rows [queryBegin, queryEnd) pooled
    // against keys [keyBegin, keyEnd), each row's weights still normalised over ALL its keys,
    // so the cells are those of the full computation. An end < 0 means Tq (Tk). The bins then
    // split the block: Nq = min(N, rows), Nk = min(N, keys). With a key range narrower than
    // all keys, the entropies and the output are left empty (they need every key's weight).
    std::int64_t queryBegin = 0, queryEnd = -1;
    std::int64_t keyBegin = 0, keyEnd = -1;
    // Checked before every key tile: once set, the computation stops within about one tile's
    // work and returns an Error of kind Cancelled. May be null.
    const std::atomic<bool> *cancel = nullptr;
    PoolProgress *progress = nullptr; // may be null
    // Also pool the head-averaged weights (BasicPooledResult::headMean): per query block and
    // key tile the weights of every head are summed before pooling, so a cell is the max (mean)
    // over its block of the mean over heads, not the mean of each head's pooled cells (the max
    // of a mean is not the mean of the maxima). One task then covers all heads of a block.
    bool headMean = false;
};

// Cell (a, b) of pooled[h] covers query rows [floor(a*Tq/Nq), floor((a+1)*Tq/Nq)) and keys
// [floor(b*Tk/Nk), floor((b+1)*Tk/Nk)) (core/analysis/Pooling.h's binStart; offset by the block's start, Tq and Tk then
// being the block's rows and keys, when PoolOptions restricts them); it holds the max or the mean of the exact softmax
// weights over that block (masked weights count as 0).
template <typename Scalar>
struct BasicPooledResult {
    using Matrix = MatrixT<Scalar>;
    std::vector<Matrix> pooled; // [H] Nq x Nk
    Matrix headMean;            // Nq x Nk when PoolOptions::headMean: the pooled mean over heads, else empty
    Matrix entropy;             // H x Tq: -sum_j w log w (natural log), 0 for an empty row
    Matrix output;              // Tq x d_out, as in the full computation
};
using PooledResult = BasicPooledResult<float>;
using PooledReference = BasicPooledResult<double>;

// Bytes the pooled path holds at its peak for this shape, `threads` workers included: the
// projections (O(T·d)), the context and output, the pooled maps (N²·H) and per-thread tiles.
// With `headMean`, per thread the pooled cells of every head of a block and a summed tile.
std::int64_t pooledBytes(std::int64_t heads, std::int64_t tq, std::int64_t tk, std::int64_t qkWidth,
                         std::int64_t vWidth, std::int64_t dOut, std::int64_t bins, int threads, bool headMean = false);
std::int64_t pooledBytes(const AttentionProblem &problem, const PoolOptions &options);

// The Eigen engine: per (head, block of query rows) a first pass over key tiles computes each
// row's max and normaliser (online softmax, scores never stored), a second pass recomputes the
// tiles, forms the exact weights and accumulates the pooled cells, the row entropies and
// weights·V. Causal and key-padding masks are applied per tile from their structure; tiles no
// row of the block may see are skipped. A custom `allowed` matrix is read as it is.
// Validates the problem (except the full-trace size) and refuses, as TooLarge, a request whose
// pooledBytes() exceed the memory budget, and as InvalidInput a range outside the problem.
Result<PooledResult> computePooledCpu(const AttentionProblem &problem, const PoolOptions &options);

// The tile engine under both pooled paths (computePooledCpu from a problem, computePooledQk from
// a layer's q and k; qkWeightsBlock and qkLogSumExp use its first pass): the scores of a layer,
// formed a tile at a time and never stored whole. Score (i, j) of query head h is
// scale·q_i·k_j, k read from the key head HeadLayout gives h, soft-capped when set, masked by
// `mask` with `fill`; each head's sink logit, when given, joins the row's normaliser.
struct ScoreTiles {
    const MatrixF &q;          // rows x H·dK: row r is query firstRow + r (unscaled)
    Eigen::Index firstRow = 0; // the query q's row 0 stands for
    const MatrixF &k;          // Tk x G·dK
    HeadLayout layout;         // heads, key heads and dK (dV for weights·V)
    float scale = 1.0f;        // the factor on q·k, applied by the scores GEMM
    std::optional<float> softcap;
    const StructuralMask &mask; // absolute query and key indices
    MaskFill fill = MaskFill::NegInf;
    const VectorF *sinks = nullptr; // H sink logits, or null

    // Scores of head h for queries [r0, r0 + rows) (absolute) and keys [c0, c0 + cols), masked,
    // into the top-left corner of `s` (at least rows x cols).
    void score(int h, Eigen::Index r0, Eigen::Index rows, Eigen::Index c0, Eigen::Index cols, MatrixF &s) const;

    // The first pass for head h and queries [r0, r0 + rows): each row's max and normaliser over
    // every key (online softmax over key tiles, tiles no row may see skipped; under -1e9 their
    // keys counted as logits of -1e9), the sink included. rowSum 0: a row with nothing allowed
    // (under -inf) and no sink. `s` is scratch of at least rows x min(kTileKeys, Tk). Returns
    // false when cancelled, and in `maskedWeighNothing` (may be null) whether every masked
    // weight of these rows is 0 (always under -inf), so pass 2 may skip masked tiles.
    bool normalisers(int h, Eigen::Index r0, Eigen::Index rows, MatrixF &s, double *rowMax, double *rowSum,
                     const std::atomic<bool> *cancel, bool *maskedWeighNothing = nullptr) const;
};

// Weights from one row of scores less the row's max (`shifted`) and 1/normaliser. Eigen's
// vectorised exp clamps its argument near -88.7, so exp(-inf) of a masked logit is about 3e-39,
// not 0 (seen without -march=native): below the clamp the weight is 0, as a masked one must be.
template <typename Row>
Eigen::Array<float, 1, Eigen::Dynamic> softmaxWeights(const Row &shifted, float invZ)
{
    constexpr float kExpClamp = -88.0f;
    return (shifted < kExpClamp).select(0.0f, shifted.exp() * invZ);
}

// Keys per tile of the engine (512: a 256-row tile of floats stays in L2).
inline constexpr Eigen::Index kPoolTileKeys = 512;

// A block of a problem's maps: query rows [q0, q1), keys [k0, k1).
struct PoolBlock {
    Eigen::Index q0 = 0, q1 = 0, k0 = 0, k1 = 0;
};

// PoolOptions' block range resolved against Tq x Tk (an end < 0: all), or the one-line
// InvalidInput error of a range outside it; also refuses bins < 1.
Result<PoolBlock> poolBlockOf(const PoolOptions &options, Eigen::Index tq, Eigen::Index tk);

// The two-pass engine over ScoreTiles (computePooledCpu's description below): the pooled cells
// of `block` (its rows must lie within scores.q), the head mean when asked and, when the block
// holds every key, the row entropies (H x rows) and, given `v` (Tk x G·dV), the context
// weights·V (rows x H·dV) in `output`. Run on the calling thread's CPU budget (ScopedCpuThreads);
// options.threads, cancel and progress as in computePooledCpu.
Result<PooledResult> poolScoreTiles(const ScoreTiles &scores, const MatrixF *v, const PoolBlock &block,
                                    const PoolOptions &options);

// The double-precision reference for tests: referenceAttention()'s full weights, pooled by
// poolWeights(), and their row entropies; with options.headMean, the weights averaged over
// heads, then pooled. Holds Tq x Tk per head: small problems only. Ignores the block range.
Result<PooledReference> referencePooled(const AttentionProblem &problem, const PoolOptions &options);

// Pools one full Tq x Tk weight matrix into min(N,Tq) x min(N,Tk) cells (poolMatrix).
inline MatrixD poolWeights(const MatrixD &weights, std::int64_t bins, PoolMode mode)
{
    return poolMatrix(weights, bins, mode);
}

// The machine's float GEMM rate now, in GFLOP/s: Eigen's (rows x d)·(d x d) on the threads
// Eigen is set to use, best of runs over about 0.3 s. Benchmarks report the pooled path's
// GFLOP/s against it, both measured in the same run.
double measureGemmGflops(Eigen::Index rows, Eigen::Index d);

} // namespace attnscope
