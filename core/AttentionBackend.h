#pragma once

#include "core/AttentionProblem.h"
#include "core/AttentionTrace.h"
#include "core/PooledAttention.h"
#include "core/Result.h"

#include <string>

namespace attnscope {

// The one interface everything that computes attention goes through: the GUI, the CLI
// and the tests cannot tell backends apart except by speed and device name.
//
// compute() validates the problem itself (see validateProblem) and returns an Error
// naming the field at fault, so callers never hand a backend unchecked data.
class AttentionBackend
{
public:
    virtual ~AttentionBackend() = default;

    // Short identifier: "cpu", "vulkan".
    virtual std::string name() const = 0;
    // Human-readable device, e.g. "Eigen 3.4 (2 threads)" or the Vulkan device name.
    virtual std::string deviceName() const = 0;

    virtual Result<AttentionTrace> compute(const AttentionProblem &problem) = 0;

    // The long-sequence form (design.md, `compute --pool N`): pooled weights, row entropies
    // and the output, never Tq x Tk per head. The default runs the Eigen engine
    // (core/PooledAttention.h), so a backend without pooled kernels of its own
    // falls back to the CPU; usesCpuForPooled() tells callers that report the device.
    virtual Result<PooledResult> computePooled(const AttentionProblem &problem, const PoolOptions &options)
    {
        return computePooledCpu(problem, options);
    }
    virtual bool usesCpuForPooled() const { return true; }
};

} // namespace attnscope
