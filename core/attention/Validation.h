#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"

#include <cstdint>
#include <limits>

namespace attnscope {

// Upper bounds that keep a malformed or hostile project from exhausting memory.
struct ProblemLimits {
    std::int64_t maxHeads = 4096;
    std::int64_t maxHeadDim = 65536;
    std::int64_t maxTokens = 1 << 20;
    std::int64_t maxModelDim = 1 << 16;
    // Bytes of the full float trace (Q, K, V, scores, weights, outputs) we agree to hold, or
    // kFollowMachine: what the machine allows when the problem is validated (memoryBudget():
    // physical memory, RLIMIT_AS and RLIMIT_DATA, the cgroup's memory.max, whichever leaves
    // least). The machine is asked only for traces above kAlwaysFitsBytes: reading /proc and
    // the cgroup costs more than computing a teaching-sized problem.
    std::int64_t maxTraceBytes = std::numeric_limits<std::int64_t>::max();

    static constexpr std::int64_t kFollowMachine = -1;
    static constexpr std::int64_t kAlwaysFitsBytes = std::int64_t(4) << 20;

    // The limits above with maxTraceBytes = kFollowMachine.
    static ProblemLimits forThisMachine();
};

// Checks shapes, sizes and values (no NaN/Inf) of a problem. The message names the field,
// the expected and the found shape, e.g.
// "weights.k: expected 4 x 6 (d_kv x heads*headDimQK), found 4 x 5".
// A problem too large for the memory left is refused with an Error of kind TooLarge:
// "size: this problem needs 14.4 GiB for its intermediate tensors; this machine allows 11.8 GiB".
Status validateProblem(const AttentionProblem &problem, const ProblemLimits &limits = ProblemLimits::forThisMachine());

// Only the memory part of validateProblem(): Ok when a float trace of this problem fits in
// what the machine allows now, else the TooLarge error above. Call it before allocating a
// trace (the GUI before a recompute, the CLI before bench builds its inputs).
Status checkFitsInMemory(const AttentionProblem &problem);

// Bytes a full float trace of this problem needs; saturates instead of overflowing.
std::int64_t traceBytes(const AttentionProblem &problem);

// The same from the shape alone, for callers that have not built the inputs yet (bench).
std::int64_t traceBytes(std::int64_t heads, std::int64_t tq, std::int64_t tk, std::int64_t headDimQK,
                        std::int64_t headDimV, std::int64_t dOut);

} // namespace attnscope
