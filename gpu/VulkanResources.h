#pragma once

// Small RAII wrappers for the Vulkan objects one compute needs: buffers, compute pipelines,
// descriptor sets and a command buffer with its fence. Each owns its handle, is movable
// (buffers) or held by unique_ptr, and reports failures as values.

#include "gpu/VulkanDevice.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace attnscope::vk {

enum class MemoryUse {
    Device,   // read and written by shaders; device-local where possible
    Upload,   // host writes, the GPU copies from it
    Readback, // the GPU copies into it, the host reads
};

class Buffer
{
public:
    // `what` names the tensor in error messages ("scores: ...").
    static Result<Buffer> create(const Device &device, std::uint64_t bytes, MemoryUse use, const std::string &what);

    Buffer() = default;
    Buffer(Buffer &&other) noexcept;
    Buffer &operator=(Buffer &&other) noexcept;
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    ~Buffer();

    VkBuffer handle() const { return m_buffer; }
    std::uint64_t bytes() const { return m_bytes; }
    // Host pointer where the memory is host-visible and coherent, else null.
    void *mapped() const { return m_mapped; }

private:
    void release();

    const Device *m_device = nullptr;
    VkBuffer m_buffer = VK_NULL_HANDLE;
    VkDeviceMemory m_memory = VK_NULL_HANDLE;
    std::uint64_t m_bytes = 0;
    void *m_mapped = nullptr;
};

// A compute pipeline whose bindings are all storage buffers in set 0, with push constants
// and uint32 specialization constants numbered 0, 1, ...
class ComputePipeline
{
public:
    static Result<std::unique_ptr<ComputePipeline>> create(const Device &device, const std::string &name,
                                                           std::span<const std::uint32_t> spirv, std::uint32_t bindings,
                                                           std::uint32_t pushBytes,
                                                           std::span<const std::uint32_t> specialization);
    ~ComputePipeline();
    ComputePipeline(const ComputePipeline &) = delete;
    ComputePipeline &operator=(const ComputePipeline &) = delete;

    VkPipeline pipeline() const { return m_pipeline; }
    VkPipelineLayout layout() const { return m_layout; }
    VkDescriptorSetLayout setLayout() const { return m_setLayout; }
    std::uint32_t bindings() const { return m_bindings; }
    std::uint32_t pushBytes() const { return m_pushBytes; }

private:
    explicit ComputePipeline(const Device &device) : m_device(device) {}

    const Device &m_device;
    VkDescriptorSetLayout m_setLayout = VK_NULL_HANDLE;
    VkPipelineLayout m_layout = VK_NULL_HANDLE;
    VkPipeline m_pipeline = VK_NULL_HANDLE;
    std::uint32_t m_bindings = 0, m_pushBytes = 0;
};

// One storage-buffer binding: a byte range of a buffer.
struct BufferRange {
    VkBuffer buffer = VK_NULL_HANDLE;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

// Descriptor sets for one compute, all released together by reset(); grows by adding pools.
class DescriptorArena
{
public:
    explicit DescriptorArena(const Device &device) : m_device(device) {}
    ~DescriptorArena();
    DescriptorArena(const DescriptorArena &) = delete;
    DescriptorArena &operator=(const DescriptorArena &) = delete;

    Result<VkDescriptorSet> allocate(const ComputePipeline &pipeline, std::span<const BufferRange> ranges);
    void reset();

private:
    Status addPool();

    const Device &m_device;
    std::vector<VkDescriptorPool> m_pools;
    size_t m_current = 0;
};

// A command buffer recorded and submitted once per compute, with the fence it waits on.
class CommandContext
{
public:
    static Result<std::unique_ptr<CommandContext>> create(const Device &device);
    ~CommandContext();
    CommandContext(const CommandContext &) = delete;
    CommandContext &operator=(const CommandContext &) = delete;

    Result<VkCommandBuffer> begin();
    // Ends and submits (one vkQueueSubmit); the submission is pending until wait() sees it
    // finish.
    Status submit();
    // Waits for the pending submission. A timeout leaves it pending (the GPU may still run
    // it) and, like VK_ERROR_DEVICE_LOST, comes back as a DeviceLost Error.
    Status wait(std::uint64_t timeoutNs);
    Status submitAndWait(std::uint64_t timeoutNs);
    // A submission went out and was never seen to finish: its command buffer, descriptor
    // sets and buffers are in use until the device is idle.
    bool pending() const { return m_pending; }
    // vkQueueSubmit calls that succeeded since creation (the backend's DeviceTransfers).
    std::uint64_t submissions() const { return m_submissions; }

    // Records the full memory dependency between two passes.
    void barrier(VkPipelineStageFlags srcStage, VkAccessFlags srcAccess, VkPipelineStageFlags dstStage,
                 VkAccessFlags dstAccess);
    VkCommandBuffer commandBuffer() const { return m_cmd; }

private:
    explicit CommandContext(const Device &device) : m_device(device) {}

    const Device &m_device;
    VkCommandPool m_pool = VK_NULL_HANDLE;
    VkCommandBuffer m_cmd = VK_NULL_HANDLE;
    VkFence m_fence = VK_NULL_HANDLE;
    bool m_pending = false;
    std::uint64_t m_submissions = 0;
};

} // namespace attnscope::vk
