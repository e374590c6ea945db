#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"
#include "core/attention/AttentionTrace.h"
#include "core/attention/PooledAttention.h"
#include "core/attention/QkAttention.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace attnscope {

class ForwardEngine; // core/models/ForwardEngine.h

// What another thread may watch a computation by, and stop it with (the GUI's worker: a newer
// edit supersedes the computation in flight). Both pointers may be null and must outlive
// every compute() that may read them.
struct ComputeControl {
    // Once true, compute() stops at its next checkpoint and returns an Error of kind Cancelled.
    const std::atomic<bool> *cancel = nullptr;
    // The fraction done, 0..1, raised as the work advances (a backend that cannot tell leaves it).
    std::atomic<double> *progress = nullptr;
};

// What a backend with memory of its own (a GPU) has moved so far, cumulatively from its
// creation, load included: what `attnscope-cli model --verbose` prints.
struct DeviceTransfers {
    std::uint64_t submissions = 0; // work handed to the device (Vulkan: vkQueueSubmit calls)
    std::uint64_t uploaded = 0;    // bytes written host-to-device (inputs, weights, tables, masks)
    std::uint64_t readBack = 0;    // bytes of results made readable device-to-host
};

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

    // Hands back a trace the caller has finished with, so that the next compute() may write its
    // maps (H x Tq x Tk scores and weights) into that memory instead of mapping new pages: a
    // loop that computes, reads and drops a trace (a benchmark, a sweep over inputs) saves the
    // page faults, about a third of a large compute. The returned trace still owns its data;
    // the next one may reuse the storage whatever its shape. The default drops the trace.
    virtual void recycle(AttentionTrace &&trace) { (void)trace; }

    // The long-sequence form (design.md, `compute --pool N`): pooled weights, row entropies
    // and the output, never Tq x Tk per head. The default runs the Eigen engine
    // (core/attention/PooledAttention.h), so a backend without pooled kernels of its own
    // falls back to the CPU; usesCpuForPooled() tells callers that report the device.
    virtual Result<PooledResult> computePooled(const AttentionProblem &problem, const PoolOptions &options)
    {
        return computePooledCpu(problem, options);
    }
    virtual bool usesCpuForPooled() const { return true; }
    // The same pooled form from a layer's queries and keys (a Q/K dump, a model run that kept
    // them; core/attention/QkAttention.h): pooled cells, head mean and entropies, no output. The
    // default runs the Eigen engine; usesCpuForPooled() answers for both.
    virtual Result<PooledResult> computePooledQk(const QkLayer &layer, const PoolOptions &options)
    {
        return attnscope::computePooledQk(layer, options);
    }

    // The engine that runs a model's whole forward pass on this backend's device (weights kept
    // there, every layer recorded), or null: a model's forward then runs its layer loop with
    // this backend's attention. The engine lives as long as the backend; its work counts in
    // transfers().
    virtual ForwardEngine *forwardEngine() { return nullptr; }

    // The device transfers so far; nullopt for an engine that works in host memory (the CPU).
    virtual std::optional<DeviceTransfers> transfers() const { return std::nullopt; }

    // Applies to every later compute(). Where a backend can stop: the CPU engine between its
    // (head, row block) tasks, Vulkan before it submits and before it reads back.
    virtual void setComputeControl(ComputeControl control) { m_control = control; }

protected:
    bool cancelRequested() const { return m_control.cancel && m_control.cancel->load(std::memory_order_relaxed); }
    void reportProgress(double fraction) const
    {
        if (m_control.progress)
            m_control.progress->store(fraction, std::memory_order_relaxed);
    }

    ComputeControl m_control;
};

} // namespace attnscope
