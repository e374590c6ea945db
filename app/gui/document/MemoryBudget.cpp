#include "app/gui/document/MemoryBudget.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <limits>

#include <sys/resource.h>
#include <unistd.h>

namespace attnscope {

namespace {

std::atomic<std::int64_t> g_budgetForTesting{0};

std::int64_t mul(std::int64_t a, std::int64_t b)
{
    if (a <= 0 || b <= 0)
        return 0;
    if (a > std::numeric_limits<std::int64_t>::max() / b)
        return std::numeric_limits<std::int64_t>::max();
    return a * b;
}

std::int64_t add(std::int64_t a, std::int64_t b)
{
    if (a > std::numeric_limits<std::int64_t>::max() - b)
        return std::numeric_limits<std::int64_t>::max();
    return a + b;
}

} // namespace

std::int64_t physicalMemoryBytes()
{
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    std::int64_t bytes = pages > 0 && pageSize > 0 ? mul(pages, pageSize) : std::int64_t(4) << 30;
    // A process limited in address space (ulimit -v) cannot use more than that.
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        bytes = std::min<std::int64_t>(bytes, std::int64_t(limit.rlim_cur));
    return bytes;
}

std::int64_t memoryBudgetBytes()
{
    if (const std::int64_t fixed = g_budgetForTesting.load(); fixed > 0)
        return fixed;
    // Three quarters: the system, the views and the undo history of other edits need the rest.
    return physicalMemoryBytes() / 4 * 3;
}

void setMemoryBudgetForTesting(std::int64_t bytes)
{
    g_budgetForTesting = std::max<std::int64_t>(bytes, 0);
}

ProblemLimits applicationLimits()
{
    ProblemLimits limits;
    limits.maxTraceBytes = memoryBudgetBytes();
    return limits;
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
    const std::int64_t qk = mul(s.heads, s.headDimQK), v = mul(s.heads, s.headDimV);
    std::int64_t floats = mul(s.tq, s.dq);
    if (s.cross)
        floats = add(floats, mul(s.tk, s.dkv));
    floats = add(floats, mul(s.dq, qk));
    floats = add(floats, mul(s.dkv, add(qk, v)));
    if (s.outputProjection)
        floats = add(floats, mul(v, s.dOut));
    floats = add(floats, add(mul(2, qk), add(v, s.dOut))); // biases, at most
    std::int64_t bytes = mul(floats, 4);
    if (s.customMask)
        bytes = add(bytes, mul(s.tq, s.tk));
    return bytes;
}

std::int64_t traceBytes(const ProblemSize &s)
{
    // Core counts from a problem's matrices; matrices with no columns (or rows) carry the
    // sizes without allocating anything.
    AttentionProblem shape;
    shape.spec.mode = s.cross ? AttentionMode::Cross : AttentionMode::Self;
    shape.spec.heads = int(std::min<std::int64_t>(s.heads, std::numeric_limits<int>::max()));
    shape.spec.headDimQK = int(std::min<std::int64_t>(s.headDimQK, std::numeric_limits<int>::max()));
    shape.spec.headDimV = int(std::min<std::int64_t>(s.headDimV, std::numeric_limits<int>::max()));
    shape.xq = MatrixF(s.tq, 0);
    if (s.cross)
        shape.xkv = MatrixF(s.tk, 0);
    if (s.outputProjection)
        shape.weights.o = MatrixF(0, s.dOut);
    return attnscope::traceBytes(shape);
}

std::int64_t editBytes(const ProblemSize &s)
{
    return add(mul(projectBytes(s), 5), traceBytes(s));
}

Status checkFitsInMemory(const ProblemSize &s)
{
    const std::int64_t need = editBytes(s), budget = memoryBudgetBytes();
    if (need <= budget)
        return Ok{};
    return Error{"needs about " + byteSizeText(need) + " of memory (the project " + byteSizeText(projectBytes(s)) +
                     " in its copies, its intermediate tensors " + byteSizeText(traceBytes(s)) +
                     "); this machine allows " + byteSizeText(budget),
                 ErrorKind::TooLarge};
}

std::string byteSizeText(std::int64_t bytes)
{
    char text[64];
    const double b = double(bytes);
    if (b >= double(1 << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", b / double(1 << 30));
    else if (b >= double(1 << 20))
        std::snprintf(text, sizeof text, "%.1f MiB", b / double(1 << 20));
    else
        std::snprintf(text, sizeof text, "%.0f KiB", b / 1024.0);
    return text;
}

} // namespace attnscope
