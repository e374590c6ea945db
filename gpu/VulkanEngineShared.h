#pragma once

// What VulkanBackend lends each of its engines (the pooled path, gpu/VulkanPooled.h; the model
// forward, gpu/VulkanForward.h): its device, pipelines, limits and test options.

#include "gpu/VulkanBackend.h"
#include "gpu/VulkanPasses.h"

#include <cstdint>

namespace attnscope::vk {

struct EngineShared {
    const Device &device;
    const ComputePipeline &gemm;
    const GemmTiling &tiling;
    const ComputePipeline &softmax;
    const ComputePipeline &rope;
    const ComputePipeline &headNorm;
    const Buffer &placeholder; // bound where a pass has no bias
    const PassLimits &limits;
    std::uint64_t maxAllocationBytes = 0; // the device's, or the tighter test limit
    bool forceStaging = false;
    VulkanFault fault = VulkanFault::None;
    std::uint64_t submitTimeoutNs = 0;
};

} // namespace attnscope::vk
