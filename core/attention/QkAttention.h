#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/attention/AttentionProblem.h"
#include "core/attention/PooledAttention.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attnscope {

// Attention from queries and keys (design.md, "Contract: attention from queries and keys"): one
// layer's q and k as its attention kernel received them (after projections, biases, q/k norms and
// RoPE; before the scale; k not repeated for groups), with what the kernel knew of the layer.
// Every map of the layer follows from them exactly: row i of head h is the softmax over allowed j
// of scale·q_i·k_j (soft-capped when set), k from key head h / (H/KV), j allowed when
// (not causal or kp_j <= qp_i) and (no window or kp_j > qp_i - window), plus the head's sink logit
// in the normaliser when sinks are given (then dropped, so a row sums to less than 1).
struct QkLayer {
    int heads = 0;      // H query heads
    int kvHeads = 0;    // KV key heads; divides H
    int headDim = 0;    // hd
    double scale = 1.0; // the factor on q·k
    bool causal = true;
    std::int64_t window = 0; // sliding window in positions; 0: none
    std::optional<double> softcap;
    std::optional<VectorF> sinks; // H sink logits, used as given
    // One per query (key) row; empty: 0, 1, ..., T-1. The mask compares these.
    std::vector<std::int64_t> queryPositions, keyPositions;
    MatrixF q; // Tq x H·hd: head h at columns [h·hd, (h+1)·hd) (the [Tq, H, hd] layout of a dump)
    MatrixF k; // Tk x KV·hd
    // H x Tq: the kernel's log-sum-exp of each row (sinks included), when the writer gave it.
    std::optional<MatrixF> lse;

    Eigen::Index tq() const { return q.rows(); }
    Eigen::Index tk() const { return k.rows(); }
    int kvHeadOf(int head) const { return head / (heads / kvHeads); }
    std::int64_t queryPosition(Eigen::Index i) const { return queryPositions.empty() ? i : queryPositions[size_t(i)]; }
    std::int64_t keyPosition(Eigen::Index j) const { return keyPositions.empty() ? j : keyPositions[size_t(j)]; }
    // The mask of design.md's definition.
    bool allowed(Eigen::Index i, Eigen::Index j) const
    {
        const std::int64_t qp = queryPosition(i), kp = keyPosition(j);
        return (!causal || kp <= qp) && (window <= 0 || kp > qp - window);
    }
};

// Checks one layer's facts and shapes, each failure one line: heads and kvHeads positive with
// KV dividing H ("heads 6 is not a multiple of kvHeads 4"), q Tq x H·hd and k Tk x KV·hd, at least
// one query and one key, positions (one per row, non-negative), sinks (H), lse (H x Tq), a positive
// finite scale, window >= 0, softcap > 0, and every q, k, sink and lse value finite (NaN and
// infinities named with their place: "q: NaN at row 3, column 17").
Status validateQkLayer(const QkLayer &layer);

// The layers of a set made from queries and keys (a dump, a model run that kept q and k): one
// layer at a time, so a set over many layers never holds them all. Safe to call from any thread;
// an implementation may keep recently read layers.
class QkSource
{
public:
    virtual ~QkSource() = default;
    virtual int layers() const = 0;
    virtual std::int64_t queries() const = 0; // Tq, the same in every layer
    virtual std::int64_t keys() const = 0;    // Tk
    // The facts of layer l without its q and k (heads, kvHeads, headDim, scale, causal, window,
    // softcap, sinks, positions): cheap.
    virtual QkLayer facts(int layer) const = 0;
    // Layer l whole, q and k in float32 (converted from the stored dtype), validated.
    virtual Result<std::shared_ptr<const QkLayer>> layer(int layer) const = 0;
};

// The layer an engine computes for a problem: its q and k after projections, biases, q/k norms
// and RoPE, unscaled, with its scale, soft-cap, sinks, causal flag, window and positions.
// Refused (InvalidInput, one line) for what a q/k layer cannot say: a custom mask matrix, key
// padding, a -1e9 fill.
Result<QkLayer> qkLayerOf(const AttentionProblem &problem);

// Bytes computePooledQk holds at its peak (q, k, the pooled cells, entropies, per-thread tiles).
std::int64_t pooledQkBytes(const QkLayer &layer, const PoolOptions &options);

// The pooled form of design.md (`compute --pool N`) from q and k: pooled cells of every head
// (and their head mean when asked), row entropies (H x Tq, only when every key is pooled);
// `output` is left empty. Never holds Tq x Tk per head. PoolOptions' block range, cancel and
// progress behave as in computePooledCpu. Validates the layer (validateQkLayer), refuses a
// request whose pooledQkBytes exceed the memory budget (TooLarge).
Result<PooledResult> computePooledQk(const QkLayer &layer, const PoolOptions &options);

// The exact weights of one head for query rows [q0, q1) and keys [k0, k1) (rows x keys), each
// row normalised over all of its allowed keys and its sink: a zoomed block of a long map. Costs
// (q1 - q0) · Tk · hd; holds the block and a tile. Cancelled once `cancel` is set.
Result<MatrixF> qkWeightsBlock(const QkLayer &layer, int head, std::int64_t q0, std::int64_t q1, std::int64_t k0,
                               std::int64_t k1, const std::atomic<bool> *cancel = nullptr);

// The log-sum-exp of every row (H x Tq), sinks included; -inf for a row with no allowed key and
// no sink. What a dump's `lse` is checked against.
Result<MatrixF> qkLogSumExp(const QkLayer &layer, const std::atomic<bool> *cancel = nullptr);

// Double-precision references for tests, straight from the definition: every head's full
// weights (Tq x Tk: small layers only); those pooled with their row entropies, streamed a row at
// a time (never Tq x Tk; heads in parallel, so T = 8192 takes seconds), over PoolOptions' block
// range (bins, mode, headMean; entropies of the block's rows over all their keys); and every
// row's log-sum-exp.
std::vector<MatrixD> referenceQkWeights(const QkLayer &layer);
PooledReference referencePooledQk(const QkLayer &layer, const PoolOptions &options);
MatrixD referenceQkLogSumExp(const QkLayer &layer);

} // namespace attnscope
