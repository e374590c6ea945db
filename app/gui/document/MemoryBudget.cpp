#include "app/gui/document/MemoryBudget.h"

#include "core/attention/PooledAttention.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"

#include <algorithm>
#include <thread>

namespace attnscope {

std::int64_t MemoryBudget::bytes() const
{
    // The one machine-dependent limit (core/io/MemoryLimits.h), shared with the CLI.
    return fixedBytes > 0 ? fixedBytes : memoryBudget();
}

ProblemSize problemSize(const AttentionProblem &p)
{
    ProblemSize s;
    s.cross = p.spec.mode == AttentionMode::Cross;
    s.tq = p.tq();
    s.tk = p.tk();
    s.dq = p.dq();
    s.dkv = p.dkv();
    s.heads = p.spec.heads;
    s.headDimQK = p.spec.headDimQK;
    s.headDimV = p.spec.headDimV;
    s.outputProjection = p.weights.o.has_value();
    s.dOut = p.dOut();
    s.customMask = p.mask.allowed.has_value();
    return s;
}

std::int64_t projectBytes(const ProblemSize &s)
{
    const std::int64_t qk = saturatingMul(s.heads, s.headDimQK), v = saturatingMul(s.heads, s.headDimV);
    std::int64_t floats = saturatingMul(s.tq, s.dq);
    if (s.cross)
        floats = saturatingAdd(floats, saturatingMul(s.tk, s.dkv));
    floats = saturatingAdd(floats, saturatingMul(s.dq, qk));
    floats = saturatingAdd(floats, saturatingMul(s.dkv, saturatingAdd(qk, v)));
    if (s.outputProjection)
        floats = saturatingAdd(floats, saturatingMul(v, s.dOut));
    floats = saturatingAdd(floats, saturatingAdd(saturatingMul(2, qk), saturatingAdd(v, s.dOut))); // biases, at most
    std::int64_t bytes = saturatingMul(floats, 4);
    if (s.customMask)
        bytes = saturatingAdd(bytes, saturatingMul(s.tq, s.tk));
    return bytes;
}

std::int64_t traceBytes(const ProblemSize &s)
{
    return attnscope::traceBytes(s.heads, s.tq, s.tk, s.headDimQK, s.headDimV, s.dOut);
}

std::int64_t editBytes(const ProblemSize &s, const MemoryBudget &budget)
{
    const std::int64_t working = needsPooledView(s, budget) ? pooledViewBytes(s) : traceBytes(s);
    return saturatingAdd(saturatingMul(projectBytes(s), 5), working);
}

bool needsPooledView(const ProblemSize &s, const MemoryBudget &budget)
{
    const std::int64_t full = saturatingAdd(saturatingMul(projectBytes(s), 5), traceBytes(s));
    return saturatingMul(saturatingMul(s.tq, s.tk), s.heads) > budget.pooledCells || full > budget.bytes();
}

std::int64_t pooledViewBytes(const ProblemSize &s)
{
    const std::int64_t qk = saturatingMul(s.heads, s.headDimQK), v = saturatingMul(s.heads, s.headDimV);
    const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    return pooledBytes(s.heads, s.tq, s.tk, qk, v, s.dOut, kPooledViewBins, threads, true); // with the head mean
}

} // namespace attnscope
