#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"
#include "core/attention/Validation.h"

#include <cstdint>

namespace attnscope {

// How much memory the application lets one project and its computation use: core's
// memoryBudget() (core/io/MemoryLimits.h: what the machine and its limits allow now), unless a
// test fixed it.
std::int64_t memoryBudgetBytes();
// Tests: a fixed budget instead of the machine's; 0 goes back to the machine's.
void setMemoryBudgetForTesting(std::int64_t bytes);

// validateProblem's limits with the trace limited by the budget.
ProblemLimits applicationLimits();

// The sizes that decide how much memory a project takes, known before building it.
struct ProblemSize {
    std::int64_t tq = 0, tk = 0; // query and key tokens
    std::int64_t dq = 0, dkv = 0, dOut = 0;
    std::int64_t heads = 0, headDimQK = 0, headDimV = 0;
    bool cross = false, outputProjection = false, customMask = false;
};
ProblemSize problemSize(const AttentionProblem &problem);

// Bytes of the project's own matrices (inputs, weights, biases, mask); saturating.
std::int64_t projectBytes(const ProblemSize &size);
// Bytes of its full trace, as core's traceBytes counts them.
std::int64_t traceBytes(const ProblemSize &size);
// What keeping this project in the application needs: the document's copy, the before and
// after of its undo step, the copy sent to the worker and the one shown, plus the trace (or,
// for a project shown pooled, the pooled computation).
std::int64_t editBytes(const ProblemSize &size);

// Ok, or an Error of kind TooLarge saying what `size` would need and what the budget is.
Status checkFitsInMemory(const ProblemSize &size);

// Long sequences (issue 11): a project whose full trace does not fit (checkFitsInMemory
// fails), or whose Tq·Tk·heads exceeds pooledCellThreshold(), is not computed in full: the
// window shows it pooled (PooledHeatmapView), exact blocks recomputed as the user zooms.
inline constexpr std::int64_t kPooledViewBins = 512;
std::int64_t pooledCellThreshold();                        // 64M cells unless a test set another
void setPooledCellThresholdForTesting(std::int64_t cells); // 0: back to the default
bool needsPooledView(const ProblemSize &size);
// What the pooled view's computation holds at its peak (core's pooledBytes at kPooledViewBins).
std::int64_t pooledViewBytes(const ProblemSize &size);

} // namespace attnscope
