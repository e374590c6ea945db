#include "gpu/VulkanResources.h"

#include "core/ErrorCode.h"

#include <utility>

namespace attnscope::vk {

namespace {
std::string mibText(std::uint64_t bytes)
{
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}
} // namespace

// ---- Buffer ---------------------------------------------------------------------------------

Result<Buffer> Buffer::create(const Device &device, std::uint64_t bytes, MemoryUse use, const std::string &what)
{
    // Zero-sized buffers are invalid; 16 bytes also keeps every size a multiple of a vec4.
    bytes = std::max<std::uint64_t>(16, (bytes + 15) & ~std::uint64_t(15));
    if (bytes > device.maxAllocationBytes())
        return codedError("vulkan.tooLarge.allocation",
                          {what, mibText(bytes), mibText(device.maxAllocationBytes()), device.info().label()},
                          ErrorKind::TooLarge);
    const DeviceFunctions &fn = device.fn();
    Buffer b;
    b.m_device = &device;
    b.m_bytes = bytes;

    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = bytes;
    info.usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (VkResult r = fn.vkCreateBuffer(device.handle(), &info, nullptr, &b.m_buffer); r != VK_SUCCESS) {
        b.m_buffer = VK_NULL_HANDLE;
        return vkError(what + ": vkCreateBuffer (" + mibText(bytes) + ")", r);
    }
    VkMemoryRequirements req{};
    fn.vkGetBufferMemoryRequirements(device.handle(), b.m_buffer, &req);

    constexpr VkMemoryPropertyFlags hostFlags =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    Result<std::uint32_t> type = Error{};
    switch (use) {
    case MemoryUse::Device:
        // On a discrete GPU host-visible device memory (BAR) is slow to read back; the
        // staging path is used there instead. On unified memory the one type has it all.
        type =
            device.findMemoryType(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                  device.info().type == DeviceType::Discrete ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT : 0);
        break;
    case MemoryUse::Upload:
        type = device.findMemoryType(req.memoryTypeBits, hostFlags, 0);
        break;
    case MemoryUse::Readback:
        type = device.findMemoryType(req.memoryTypeBits, hostFlags, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        break;
    }
    if (!type)
        return Error{what + ": " + type.message(), type.kind()};

    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = *type;
    if (VkResult r = fn.vkAllocateMemory(device.handle(), &alloc, nullptr, &b.m_memory); r != VK_SUCCESS) {
        b.m_memory = VK_NULL_HANDLE;
        return vkError(what + ": vkAllocateMemory (" + mibText(req.size) + ")", r);
    }
    if (VkResult r = fn.vkBindBufferMemory(device.handle(), b.m_buffer, b.m_memory, 0); r != VK_SUCCESS)
        return vkError(what + ": vkBindBufferMemory", r);
    if ((device.memoryTypeFlags(*type) & hostFlags) == hostFlags) {
        if (VkResult r = fn.vkMapMemory(device.handle(), b.m_memory, 0, VK_WHOLE_SIZE, 0, &b.m_mapped); r != VK_SUCCESS)
            return vkError(what + ": vkMapMemory", r);
    }
    return b;
}

Buffer::Buffer(Buffer &&other) noexcept
    : m_device(std::exchange(other.m_device, nullptr)), m_buffer(std::exchange(other.m_buffer, VK_NULL_HANDLE)),
      m_memory(std::exchange(other.m_memory, VK_NULL_HANDLE)), m_bytes(std::exchange(other.m_bytes, 0)),
      m_mapped(std::exchange(other.m_mapped, nullptr))
{
}

Buffer &Buffer::operator=(Buffer &&other) noexcept
{
    if (this != &other) {
        release();
        m_device = std::exchange(other.m_device, nullptr);
        m_buffer = std::exchange(other.m_buffer, VK_NULL_HANDLE);
        m_memory = std::exchange(other.m_memory, VK_NULL_HANDLE);
        m_bytes = std::exchange(other.m_bytes, 0);
        m_mapped = std::exchange(other.m_mapped, nullptr);
    }
    return *this;
}

Buffer::~Buffer()
{
    release();
}

void Buffer::release()
{
    if (!m_device)
        return;
    const DeviceFunctions &fn = m_device->fn();
    if (m_buffer != VK_NULL_HANDLE)
        fn.vkDestroyBuffer(m_device->handle(), m_buffer, nullptr);
    if (m_memory != VK_NULL_HANDLE)
        fn.vkFreeMemory(m_device->handle(), m_memory, nullptr); // unmaps implicitly
    m_buffer = VK_NULL_HANDLE;
    m_memory = VK_NULL_HANDLE;
    m_mapped = nullptr;
    m_device = nullptr;
}

// ---- ComputePipeline ------------------------------------------------------------------------

Result<std::unique_ptr<ComputePipeline>> ComputePipeline::create(const Device &device, const std::string &name,
                                                                 std::span<const std::uint32_t> spirv,
                                                                 std::uint32_t bindings, std::uint32_t pushBytes,
                                                                 std::span<const std::uint32_t> specialization)
{
    if (pushBytes > device.info().maxPushConstantsBytes)
        return Error{name + ": needs " + std::to_string(pushBytes) + " bytes of push constants, the device has " +
                         std::to_string(device.info().maxPushConstantsBytes),
                     ErrorKind::Unsupported};
    const DeviceFunctions &fn = device.fn();
    std::unique_ptr<ComputePipeline> p(new ComputePipeline(device));
    p->m_bindings = bindings;
    p->m_pushBytes = pushBytes;

    std::vector<VkDescriptorSetLayoutBinding> layoutBindings(bindings);
    for (std::uint32_t i = 0; i < bindings; ++i)
        layoutBindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo setInfo{};
    setInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    setInfo.bindingCount = bindings;
    setInfo.pBindings = layoutBindings.data();
    if (VkResult r = fn.vkCreateDescriptorSetLayout(device.handle(), &setInfo, nullptr, &p->m_setLayout);
        r != VK_SUCCESS)
        return vkError(name + ": vkCreateDescriptorSetLayout", r);

    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes};
    VkPipelineLayoutCreateInfo layoutInfo{};
    layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = &p->m_setLayout;
    layoutInfo.pushConstantRangeCount = 1;
    layoutInfo.pPushConstantRanges = &push;
    if (VkResult r = fn.vkCreatePipelineLayout(device.handle(), &layoutInfo, nullptr, &p->m_layout); r != VK_SUCCESS)
        return vkError(name + ": vkCreatePipelineLayout", r);

    VkShaderModuleCreateInfo moduleInfo{};
    moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    moduleInfo.codeSize = spirv.size_bytes();
    moduleInfo.pCode = spirv.data();
    VkShaderModule module = VK_NULL_HANDLE;
    if (VkResult r = fn.vkCreateShaderModule(device.handle(), &moduleInfo, nullptr, &module); r != VK_SUCCESS)
        return vkError(name + ": vkCreateShaderModule", r);

    std::vector<VkSpecializationMapEntry> entries(specialization.size());
    for (std::uint32_t i = 0; i < entries.size(); ++i)
        entries[i] = {i, i * std::uint32_t(sizeof(std::uint32_t)), sizeof(std::uint32_t)};
    VkSpecializationInfo spec{};
    spec.mapEntryCount = std::uint32_t(entries.size());
    spec.pMapEntries = entries.data();
    spec.dataSize = specialization.size_bytes();
    spec.pData = specialization.data();

    VkComputePipelineCreateInfo pipelineInfo{};
    pipelineInfo.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    pipelineInfo.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipelineInfo.stage.module = module;
    pipelineInfo.stage.pName = "main";
    pipelineInfo.stage.pSpecializationInfo = &spec;
    pipelineInfo.layout = p->m_layout;
    const VkResult r =
        fn.vkCreateComputePipelines(device.handle(), device.pipelineCache(), 1, &pipelineInfo, nullptr, &p->m_pipeline);
    fn.vkDestroyShaderModule(device.handle(), module, nullptr);
    if (r != VK_SUCCESS) {
        p->m_pipeline = VK_NULL_HANDLE;
        return vkError(name + ": vkCreateComputePipelines", r);
    }
    return p;
}

ComputePipeline::~ComputePipeline()
{
    const DeviceFunctions &fn = m_device.fn();
    if (m_pipeline != VK_NULL_HANDLE)
        fn.vkDestroyPipeline(m_device.handle(), m_pipeline, nullptr);
    if (m_layout != VK_NULL_HANDLE)
        fn.vkDestroyPipelineLayout(m_device.handle(), m_layout, nullptr);
    if (m_setLayout != VK_NULL_HANDLE)
        fn.vkDestroyDescriptorSetLayout(m_device.handle(), m_setLayout, nullptr);
}

// ---- DescriptorArena ------------------------------------------------------------------------

namespace {
constexpr std::uint32_t kSetsPerPool = 256;
constexpr std::uint32_t kMaxBindingsPerSet = 10; // the pooled row pass binds 10 buffers (gpu/VulkanPooled.h)
} // namespace

DescriptorArena::~DescriptorArena()
{
    for (VkDescriptorPool pool : m_pools)
        m_device.fn().vkDestroyDescriptorPool(m_device.handle(), pool, nullptr);
}

Status DescriptorArena::addPool()
{
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBindingsPerSet};
    VkDescriptorPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    info.maxSets = kSetsPerPool;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    if (VkResult r = m_device.fn().vkCreateDescriptorPool(m_device.handle(), &info, nullptr, &pool); r != VK_SUCCESS)
        return vkError("vkCreateDescriptorPool", r);
    m_pools.push_back(pool);
    return Ok{};
}

Result<VkDescriptorSet> DescriptorArena::allocate(const ComputePipeline &pipeline, std::span<const BufferRange> ranges)
{
    if (ranges.size() != pipeline.bindings() || ranges.size() > kMaxBindingsPerSet)
        return Error{"descriptor set: binding count mismatch", ErrorKind::Internal};
    const VkDescriptorSetLayout layout = pipeline.setLayout();
    VkDescriptorSet set = VK_NULL_HANDLE;
    for (;;) {
        if (m_current == m_pools.size())
            if (Status s = addPool(); !s)
                return s.error();
        VkDescriptorSetAllocateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        info.descriptorPool = m_pools[m_current];
        info.descriptorSetCount = 1;
        info.pSetLayouts = &layout;
        const VkResult r = m_device.fn().vkAllocateDescriptorSets(m_device.handle(), &info, &set);
        if (r == VK_SUCCESS)
            break;
        if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
            return vkError("vkAllocateDescriptorSets", r);
        ++m_current; // this pool is full: move on to the next (created on demand)
    }
    std::vector<VkDescriptorBufferInfo> infos(ranges.size());
    std::vector<VkWriteDescriptorSet> writes(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
        infos[i] = {ranges[i].buffer, ranges[i].offset, ranges[i].bytes};
        writes[i] = {};
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = set;
        writes[i].dstBinding = std::uint32_t(i);
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    m_device.fn().vkUpdateDescriptorSets(m_device.handle(), std::uint32_t(writes.size()), writes.data(), 0, nullptr);
    return set;
}

void DescriptorArena::reset()
{
    for (VkDescriptorPool pool : m_pools)
        m_device.fn().vkResetDescriptorPool(m_device.handle(), pool, 0);
    m_current = 0;
}

// ---- CommandContext -------------------------------------------------------------------------

Result<std::unique_ptr<CommandContext>> CommandContext::create(const Device &device)
{
    const DeviceFunctions &fn = device.fn();
    std::unique_ptr<CommandContext> c(new CommandContext(device));
    VkCommandPoolCreateInfo poolInfo{};
    poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    poolInfo.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    poolInfo.queueFamilyIndex = device.queueFamily();
    if (VkResult r = fn.vkCreateCommandPool(device.handle(), &poolInfo, nullptr, &c->m_pool); r != VK_SUCCESS)
        return vkError("vkCreateCommandPool", r);
    VkCommandBufferAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = c->m_pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    if (VkResult r = fn.vkAllocateCommandBuffers(device.handle(), &alloc, &c->m_cmd); r != VK_SUCCESS)
        return vkError("vkAllocateCommandBuffers", r);
    VkFenceCreateInfo fenceInfo{};
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (VkResult r = fn.vkCreateFence(device.handle(), &fenceInfo, nullptr, &c->m_fence); r != VK_SUCCESS)
        return vkError("vkCreateFence", r);
    return c;
}

CommandContext::~CommandContext()
{
    // A submission that was never seen to finish still uses the fence and the command buffer.
    if (m_pending)
        m_device.waitIdle();
    const DeviceFunctions &fn = m_device.fn();
    if (m_fence != VK_NULL_HANDLE)
        fn.vkDestroyFence(m_device.handle(), m_fence, nullptr);
    if (m_pool != VK_NULL_HANDLE)
        fn.vkDestroyCommandPool(m_device.handle(), m_pool, nullptr); // frees m_cmd
}

Result<VkCommandBuffer> CommandContext::begin()
{
    // Resetting the pool would free a command buffer the GPU may still be running.
    if (m_pending)
        return codedError("vulkan.pending", {}, ErrorKind::DeviceLost);
    const DeviceFunctions &fn = m_device.fn();
    if (VkResult r = fn.vkResetCommandPool(m_device.handle(), m_pool, 0); r != VK_SUCCESS)
        return vkError("vkResetCommandPool", r);
    VkCommandBufferBeginInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (VkResult r = fn.vkBeginCommandBuffer(m_cmd, &info); r != VK_SUCCESS)
        return vkError("vkBeginCommandBuffer", r);
    return m_cmd;
}

Status CommandContext::submit()
{
    const DeviceFunctions &fn = m_device.fn();
    if (VkResult r = fn.vkEndCommandBuffer(m_cmd); r != VK_SUCCESS)
        return vkError("vkEndCommandBuffer", r);
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &m_cmd;
    if (VkResult r = fn.vkQueueSubmit(m_device.queue(), 1, &submit, m_fence); r != VK_SUCCESS)
        return vkError("vkQueueSubmit", r);
    ++m_submissions;
    m_pending = true;
    return Ok{};
}

Status CommandContext::wait(std::uint64_t timeoutNs)
{
    const DeviceFunctions &fn = m_device.fn();
    const VkResult wait = fn.vkWaitForFences(m_device.handle(), 1, &m_fence, VK_TRUE, timeoutNs);
    if (wait == VK_TIMEOUT)
        return codedError("vulkan.timeout", {std::to_string(timeoutNs / 1000000000ull)}, ErrorKind::DeviceLost);
    if (wait != VK_SUCCESS)
        return vkError("vkWaitForFences", wait);
    m_pending = false;
    if (VkResult r = fn.vkResetFences(m_device.handle(), 1, &m_fence); r != VK_SUCCESS)
        return vkError("vkResetFences", r);
    return Ok{};
}

Status CommandContext::submitAndWait(std::uint64_t timeoutNs)
{
    if (Status s = submit(); !s)
        return s;
    return wait(timeoutNs);
}

void CommandContext::barrier(VkPipelineStageFlags srcStage, VkAccessFlags srcAccess, VkPipelineStageFlags dstStage,
                             VkAccessFlags dstAccess)
{
    VkMemoryBarrier b{};
    b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    b.srcAccessMask = srcAccess;
    b.dstAccessMask = dstAccess;
    m_device.fn().vkCmdPipelineBarrier(m_cmd, srcStage, dstStage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

} // namespace attnscope::vk
