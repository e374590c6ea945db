#pragma once

#include "core/attention/AttentionBackend.h"
#include "gpu/VulkanDevice.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

namespace vk {
class PooledEngine;
struct ModelOpInput;
struct PooledShared;
struct PooledRunStats;
} // namespace vk

// Faults injected on purpose, so every fallback path can be tested on any machine. Only a
// program that asks for one through VulkanBackendOptions gets it: nothing in the environment
// injects a fault into the product.
enum class VulkanFault {
    None,
    CreateDevice, // VulkanBackend::create fails as if vkCreateDevice had
    DeviceLost,   // every compute fails with VK_ERROR_DEVICE_LOST, and the backend stays lost
    OutOfMemory,  // every compute fails allocating its buffers (VK_ERROR_OUT_OF_DEVICE_MEMORY)
    // The wait for a compute gives up at once (VK_TIMEOUT) while the GPU may still be running
    // it: nothing that submission uses may be freed before the device is idle.
    Timeout,
    // The loader or the driver lacks functions: the instance (or device) function table
    // stops loading early, so creation fails with a table of null pointers behind it.
    PartialInstance,
    PartialDevice,
};

struct VulkanBackendOptions {
    // Index or case-insensitive name substring; empty: ATTNSCOPE_VULKAN_DEVICE, else the best
    // device by type (discrete > integrated > virtual > CPU).
    std::string device;
    // Khronos validation layer + a messenger counting into vk::validationReport(); also
    // ATTNSCOPE_VULKAN_VALIDATION=1.
    bool validation = false;
    VulkanFault fault = VulkanFault::None;
    // Copy through host-visible staging buffers even where device memory is host-visible
    // (the discrete-GPU path, testable on unified memory).
    bool forceStaging = false;
    // Tighter limits than the device's (0: the device's), to exercise the splitting of
    // bindings and dispatches with small shapes. Never looser than the device.
    std::uint64_t maxStorageBufferRange = 0;
    std::uint32_t maxWorkGroupCount = 0;
    // A tighter limit than the device's maxMemoryAllocationSize (0: the device's), so tests
    // can hand the backend a problem too large for it with small shapes.
    std::uint64_t maxAllocationBytes = 0;
    // Multiply-adds one submission of the pooled path may hold (0: the default, see
    // gpu/VulkanPooled.h), so tests can split small problems into many submissions.
    std::uint64_t pooledWorkPerSubmission = 0;
    // Layers a model's forward records into one submission (0: vk::kLayersPerSubmission, see
    // gpu/VulkanForward.h), so tests can see the batching with models of a few layers.
    std::uint32_t layersPerSubmission = 0;
    // Where the pipelines' cache lives (gpu/VulkanPipelineCache.h): read at creation, written
    // when the backend goes. Empty: no cache (the application names its cache folder).
    std::string pipelineCacheDir;
};

// What a backend has done so far; tests check reuse and the one-submission rule with it.
struct VulkanStats {
    std::uint64_t computes = 0;
    std::uint64_t submissions = 0;
    std::uint64_t dispatches = 0;        // of the last compute
    std::uint64_t bufferAllocations = 0; // times the buffer set was (re)created
    bool staging = false;                // last compute copied through staging buffers
};

// Attention through Vulkan compute shaders (shaders/gemm.comp, shaders/headnorm.comp,
// shaders/rope.comp, shaders/softmax.comp): projections, per-head q/k norms, RoPE, per-head scaled (and soft-capped)
// scores, masked softmax with sinks, weights·V into the context columns and the output projection, recorded into one
// command buffer and submitted once per compute. Grouped key/value heads are read where they lie (gemm.comp's group);
// the sliding window is part of the uploaded mask. Pipelines are built at creation; buffers are kept while the shape
// stays the same.
//
// Every failure is an Error value with its kind: TooLarge, OutOfMemory or Unsupported when
// this problem does not fit the device (smaller ones still run); DeviceLost when the device
// failed or a wait timed out, after which the backend refuses further work and keeps what
// the last submission may still use until it is destroyed (callers fall back to the CPU,
// see app/engine/BackendChoice.h).
class VulkanBackend final : public AttentionBackend
{
public:
    static Result<std::unique_ptr<VulkanBackend>> create(const VulkanBackendOptions &options = {});
    ~VulkanBackend() override;

    std::string name() const override { return "vulkan"; }
    // "llvmpipe (LLVM 15.0.6, 256 bits) (CPU)"
    std::string deviceName() const override;
    Result<AttentionTrace> compute(const AttentionProblem &problem) override;
    // The pooled path on the GPU (gpu/VulkanPooled.h); TooLarge where it does not fit the device.
    // On a device with fewer than kPooledBindings (10) storage buffers per stage it runs the CPU
    // engine.
    Result<PooledResult> computePooled(const AttentionProblem &problem, const PoolOptions &options) override;
    // The same passes from a layer's queries and keys, uploaded as they are (no projections):
    // pooled cells, head mean and entropies; the output is left empty.
    Result<PooledResult> computePooledQk(const QkLayer &layer, const PoolOptions &options) override;
    bool usesCpuForPooled() const override;
    // A model's whole forward on this device (gpu/VulkanForward.h): weights uploaded once, layers
    // recorded in batches, only the maps and hidden states read back.
    ForwardEngine *forwardEngine() override;
    // One pass of that engine on its own (gpu/VulkanForward.h), for the per-op checks.
    Result<MatrixF> runModelOp(const vk::ModelOpInput &input);
    // Cumulative over compute(), computePooled() and computePooledQk(): successful vkQueueSubmit
    // calls, the bytes of every input buffer written (weights, inputs, RoPE tables, mask bits,
    // positions, bin bounds; from a Q/K layer q, k and its sinks) and of every result buffer made
    // readable after a finished compute (the full path's QPre..output; the pooled path's context,
    // entropy, pooled cells and output, of which a Q/K layer has entropy and cells), staged or
    // mapped alike; and over the forward engine: its weights once per model, each forward's ids,
    // masks and RoPE tables, and the maps and hidden states it read back.
    std::optional<DeviceTransfers> transfers() const override;

    const vk::DeviceInfo &deviceInfo() const;
    const VulkanStats &stats() const;
    bool lost() const;
    // The bytes of the pipeline cache file given to the driver at creation (0: none fitted).
    std::uint64_t pipelineCacheLoadedBytes() const;

private:
    struct State;
    class Forward;
    explicit VulkanBackend(std::unique_ptr<State> state);
    // Runs one pooled request on the pooled engine, counting its submissions and transfers;
    // a device failure marks the backend lost.
    Result<PooledResult> runPooled(
        const std::function<Result<PooledResult>(vk::PooledEngine &, const vk::PooledShared &, vk::PooledRunStats &)>
            &pass);
    std::unique_ptr<State> m_state;
    std::unique_ptr<Forward> m_forward;
};

// Every Vulkan device the loader reports, or why there is none.
Result<std::vector<vk::DeviceInfo>> listVulkanDevices();

} // namespace attnscope
