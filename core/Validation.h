#pragma once

#include "core/AttentionProblem.h"
#include "core/Result.h"

#include <cstdint>

namespace attnscope {

// Upper bounds that keep a malformed or hostile project from exhausting memory.
struct ProblemLimits {
    std::int64_t maxHeads = 4096;
    std::int64_t maxHeadDim = 65536;
    std::int64_t maxTokens = 1 << 20;
    std::int64_t maxModelDim = 1 << 16;
    // Bytes of the full float trace (Q, K, V, scores, weights, outputs) we agree to hold.
    std::int64_t maxTraceBytes = std::int64_t(16) << 30;
};

// Checks shapes, sizes and values (no NaN/Inf) of a problem. The message names the field,
// the expected and the found shape, e.g.
// "weights.k: expected 4 x 6 (d_kv x heads*headDimQK), found 4 x 5".
Status validateProblem(const AttentionProblem &problem, const ProblemLimits &limits = {});

// Bytes a full float trace of this problem needs; saturates instead of overflowing.
std::int64_t traceBytes(const AttentionProblem &problem);

} // namespace attnscope
