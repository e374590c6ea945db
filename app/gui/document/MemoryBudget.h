#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"

#include <cstdint>

namespace attnscope {

// How much memory the application lets one project and its computation use, and from what size
// on a project is shown pooled. A setting, not a process-wide state: the window holds one
// (MainWindow::setMemoryBudget) and hands it to its document, its computations and its attention
// jobs, which each check against their copy; a document or a controller made on its own starts
// with the defaults.
struct MemoryBudget {
    static constexpr std::int64_t kDefaultPooledCells = std::int64_t(64) << 20;

    // Bytes one project and its computation may use; 0 stands for the machine's (core's
    // memoryBudget() in core/io/MemoryLimits.h: what the machine and its limits allow at the
    // moment of the check). A fixed figure is for a host shared with other work, or a test that
    // must not depend on the machine.
    std::int64_t fixedBytes = 0;
    // Tq·Tk·heads above which a project is shown pooled even when its full trace would fit.
    std::int64_t pooledCells = kDefaultPooledCells;

    // fixedBytes, or the machine's budget now.
    std::int64_t bytes() const;
};

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
// for a project shown pooled under `budget`, the pooled computation).
std::int64_t editBytes(const ProblemSize &size, const MemoryBudget &budget);

// Long sequences (issue 11): a project whose full trace and copies do not fit budget.bytes(),
// or whose Tq·Tk·heads exceeds budget.pooledCells, is not computed in full: the window shows it
// pooled (PooledHeatmapView), exact blocks recomputed as the user zooms.
inline constexpr std::int64_t kPooledViewBins = 512;
bool needsPooledView(const ProblemSize &size, const MemoryBudget &budget);
// What the pooled view's computation holds at its peak (core's pooledBytes at kPooledViewBins).
std::int64_t pooledViewBytes(const ProblemSize &size);

} // namespace attnscope
