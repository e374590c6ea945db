#pragma once

#include "core/Result.h"
#include "core/attention/AttentionTrace.h"

#include <cstdint>
#include <string>

namespace attnscope {

// Where a trace first holds a value that is not finite. Validated inputs are finite, so a
// non-finite value means the arithmetic overflowed float32 (|Q·Kᵀ| past 3.4e38, say).
struct NonFiniteReport {
    std::int64_t count = 0; // non-finite values over every tensor of the trace
    std::string tensor;     // the first tensor, in pipeline order, that has one ("scores")
    int head = -1;          // its head, or -1 for context/output
    std::int64_t row = -1, col = -1;
    // Of `count`, the NaN values; the others are +Inf or -Inf (NaN and an overflow told apart).
    std::int64_t nanCount = 0;

    bool any() const { return count > 0; }
};

NonFiniteReport findNonFinite(const AttentionTrace &trace);
// The same over one per-head tensor named `name` (a set's layer of weights, which has no trace).
NonFiniteReport findNonFinite(const std::vector<MatrixF> &perHead, const char *name);

// Ok, or an Error of kind NonFinite naming the first tensor, head and cell at fault and the
// number of values affected, for the CLI (non-zero exit) and the GUI (a warning).
Status checkFinite(const AttentionTrace &trace);

} // namespace attnscope
