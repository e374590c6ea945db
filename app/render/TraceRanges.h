#pragma once

#include "core/attention/AttentionTrace.h"

#include <memory>
#include <vector>

namespace attnscope {

// What the heatmaps of one trace (or one layer of weights) need beyond the trace itself: each head's value range and
// the mean over heads. Computed once per result, off the GUI thread (the GUI's worker does it), so building a heatmap,
// even on a shared scale, makes no pass over every head.
struct TraceRanges {
    std::vector<double> maxAbsScore;            // [H]: largest |score| over every cell (scores are pre-mask)
    std::vector<double> maxWeight;              // [H]: largest weight over allowed cells
    std::shared_ptr<const MatrixF> meanWeights; // Tq x Tk: the weights' mean over heads
    double meanMaxWeight = 0.0;                 // largest mean weight over allowed cells

    bool empty() const { return maxWeight.empty(); }
    double maxAbsScoreOverHeads() const;
    double maxWeightOverHeads() const;

    static TraceRanges of(const AttentionTrace &trace);
    // Weights alone (an attention set's layer: no scores, everything allowed).
    static TraceRanges ofWeights(const std::vector<MatrixF> &weights, const MaskMatrix &allowed = {});
};

} // namespace attnscope
