#pragma once

// What an attention set is exported as, by `attnscope-cli export` and `stats` and by File >
// Export Data on an attention file or a model run: the maps of every layer, of one layer or one
// head, one layer's mean over heads, the rollout, or the statistics of every head.

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/analysis/AttentionSet.h"
#include "core/analysis/Pooling.h"

#include <optional>
#include <string>
#include <vector>

namespace attnscope {

struct AttentionComparison;
struct HeadDifference;

// The statistics as design.md's JSON ({"layers", "heads", "stats": [...]}) and as CSV (one row
// per head, a header row; an empty cell where a statistic does not apply).
std::string statsJson(const AttentionSet &set);
std::string statsCsv(const AttentionSet &set);

// A comparison (core/analysis/Comparison.h) as `attnscope-cli compare` writes comparison.json:
// {"a": A, "b": B, "layers": L, "heads": H, "queryLabels": [...], "keyLabels": [...],
//  "headDifferences": [{"layer", "head", "a": {stats}, "b": {stats}, "meanAbs", "maxAbs",
//  "totalVariation"}, ...]} with the stats under statsJson's keys ("samples" and "sample" only
// where there is more than one sample). aName, bName: what A and B were (their paths).
std::string comparisonJson(const AttentionComparison &c, const std::vector<HeadDifference> &stats,
                           const std::string &aName, const std::string &bName);

// A double matrix as a float32 .npy file [rows, cols], whole or not at all.
Status writeMatrixNpy(const MatrixD &m, const std::string &path);

// How maps are written: whole, or pooled to at most pool x pool cells (design.md's `--pool N`
// cells, max or mean over each block; the mean over heads pooled exactly, see poolSetBlock).
struct AttentionExportOptions {
    std::int64_t pool = 0; // 0: whole maps
    PoolMode mode = PoolMode::Max;
    AttentionBackend *backend = nullptr; // pools a set from queries and keys; null: the CPU engine
    std::int64_t budget = 0;             // bytes whole maps may take; 0: memoryBudget()
};

// The request alone (the tensor's name, the layer and head): what a user typed wrong. Sets
// `layer` to 0 where the tensor needs one and the set has one layer. Tensors:
//   weights: [L,H,Tq,Tk] (no layer, no head), [H,Tq,Tk] (a layer) or [Tq,Tk] (layer and head;
//            the layer may be left out when there is one);
//   mean:    one layer's mean over heads [Tq,Tk]; rollout: over every layer [T,T];
//   stats:   the statistics of every head (statsJson, statsCsv).
// A layer or head out of range, or one the tensor has no use for, is an InvalidInput error that
// names the valid range. Layers and heads are 0-based.
Status checkAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> &layer,
                            std::optional<int> head);
// The same, and whether `path`'s suffix suits what is written: .npy for maps (float32), .csv for
// one matrix (one head, the mean, the rollout; token-labelled), .csv or .json for the statistics.
// With options.pool: weights and mean only, as .npy, [L,H,Nq,Nk], [H,Nq,Nk] or [Nq,Nk]. Without
// it, whole maps that would not fit the budget are refused (TooLarge) naming --pool: a mean over
// heads (held as T x T doubles), and the weights of a set from queries and keys (computed, so the
// file would be all that memory written out).
Status checkAttentionExport(const AttentionSet &set, const std::string &tensor, std::optional<int> &layer,
                            std::optional<int> head, const std::string &path,
                            const AttentionExportOptions &options = {});
// Writes what checkAttentionExport allows, whole or not at all. On success: what was written
// ("weights of layer 0, head 2 [11, 11]").
Result<std::string> writeAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> layer,
                                         std::optional<int> head, const std::string &path,
                                         const AttentionExportOptions &options = {});

} // namespace attnscope
