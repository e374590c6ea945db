#pragma once

// Instance and device: the two Vulkan objects everything else hangs off. Each owns its
// handle (RAII, move-free: held by shared_ptr / unique_ptr) and reports failures as values.

#include "gpu/VulkanApi.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::vk {

// Ranked in this order when nothing is asked for: a real GPU first, lavapipe last.
enum class DeviceType { Discrete, Integrated, Virtual, Cpu, Other };

// "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other".
const char *deviceTypeName(DeviceType type);

struct MemoryHeapInfo {
    std::uint64_t bytes = 0;
    bool deviceLocal = false;
};

// What the backend needs to know about a physical device, captured at enumeration.
struct DeviceInfo {
    int index = 0; // position in vkEnumeratePhysicalDevices
    std::string name;
    DeviceType type = DeviceType::Other;
    std::uint32_t apiVersion = 0;
    std::uint64_t maxStorageBufferRange = 0;
    std::uint64_t minStorageBufferOffsetAlignment = 1;
    std::uint32_t maxWorkGroupCount[3] = {0, 0, 0};
    std::uint32_t maxWorkGroupInvocations = 0;
    std::uint32_t maxSharedMemoryBytes = 0;
    std::uint32_t maxPushConstantsBytes = 0;
    std::uint32_t maxStorageBuffersPerStage = 0; // maxPerStageDescriptorStorageBuffers (at least 4)
    std::vector<MemoryHeapInfo> heaps;
    // What a pipeline cache's header must name (gpu/VulkanPipelineCache.h).
    std::uint32_t vendorId = 0, deviceId = 0;
    std::array<std::uint8_t, 16> pipelineCacheUuid{};

    // "llvmpipe (LLVM 15.0.6, 256 bits) (CPU)"
    std::string label() const;
    // label() plus the limits the backend depends on, on one line.
    std::string describe() const;
};

// Warnings and errors seen by the debug messengers of every validating instance in this
// process; tests assert that both stay at zero.
struct ValidationReport {
    int errors = 0;
    int warnings = 0;
    std::vector<std::string> messages; // the first few, for the test log
};
ValidationReport validationReport();
void resetValidationReport();

struct InstanceOptions {
    // Enables VK_LAYER_KHRONOS_validation and a VK_EXT_debug_utils messenger that counts
    // into validationReport(). Also switched on by ATTNSCOPE_VULKAN_VALIDATION=1.
    bool validation = false;
    // Test hook: load only this many instance functions, as a broken loader would (-1: all).
    int loadLimit = -1;
};

class Instance
{
public:
    // Fails (as a value) where there is no loader, no driver or no device.
    static Result<std::shared_ptr<Instance>> create(const InstanceOptions &options = {});
    ~Instance();
    Instance(const Instance &) = delete;
    Instance &operator=(const Instance &) = delete;

    VkInstance handle() const { return m_instance; }
    const InstanceFunctions &fn() const { return m_fn; }
    const std::vector<DeviceInfo> &devices() const { return m_devices; }
    VkPhysicalDevice physicalDevice(int index) const { return m_physical.at(size_t(index)); }
    bool validating() const { return m_messenger != VK_NULL_HANDLE; }

private:
    Instance() = default;

    VkInstance m_instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT m_messenger = VK_NULL_HANDLE;
    InstanceFunctions m_fn;
    std::vector<VkPhysicalDevice> m_physical;
    std::vector<DeviceInfo> m_devices;
};

// The device index for a selector: a number is an index, anything else a case-insensitive
// substring of the name; empty picks the best type (discrete > integrated > virtual > CPU).
Result<int> chooseDevice(const std::vector<DeviceInfo> &devices, const std::string &selector);

// ATTNSCOPE_VULKAN_DEVICE, or empty.
std::string deviceSelectorFromEnvironment();

// A logical device with one compute queue. A Device that create() returns has every
// function loaded; only the destructor of one whose creation failed meets a partial table.
class Device
{
public:
    // `loadLimit` is a test hook: load only that many device functions, as a driver lacking
    // the rest would (-1: all).
    static Result<std::unique_ptr<Device>> create(std::shared_ptr<Instance> instance, int index, int loadLimit = -1);
    ~Device();
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    VkDevice handle() const { return m_device; }
    VkQueue queue() const { return m_queue; }
    std::uint32_t queueFamily() const { return m_queueFamily; }
    const DeviceFunctions &fn() const { return m_fn; }
    const DeviceInfo &info() const { return m_info; }
    const Instance &instance() const { return *m_instance; }

    // Blocks until the GPU has finished everything submitted (or reports the device lost).
    // Owners call it before they free what a submission may still use; it does nothing on a
    // device whose functions were only partly loaded.
    void waitIdle() const;

    // A memory type allowed by typeBits with every `required` flag, preferring one that also
    // has every `preferred` flag and none of `avoided`; an Error when none qualifies.
    Result<std::uint32_t> findMemoryType(std::uint32_t typeBits, VkMemoryPropertyFlags required,
                                         VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags avoided = 0) const;
    VkMemoryPropertyFlags memoryTypeFlags(std::uint32_t type) const { return m_memory.memoryTypes[type].propertyFlags; }
    std::uint64_t maxAllocationBytes() const { return m_maxAllocationBytes; }

    // The pipelines' cache (gpu/VulkanPipelineCache.h): the device's file in `folder` given to
    // the driver where its header fits, else an empty cache. Call before creating pipelines;
    // they use it from then on. Returns the bytes taken from the file (0: none, or ignored).
    std::uint64_t openPipelineCache(const std::string &folder);
    VkPipelineCache pipelineCache() const { return m_pipelineCache; }
    // Writes what the cache holds now over the device's file, atomically; nothing where no
    // cache was opened.
    Status savePipelineCache() const;

private:
    Device() = default;

    std::shared_ptr<Instance> m_instance; // outlives the device
    VkDevice m_device = VK_NULL_HANDLE;
    VkQueue m_queue = VK_NULL_HANDLE;
    std::uint32_t m_queueFamily = 0;
    DeviceFunctions m_fn;
    DeviceInfo m_info;
    VkPhysicalDeviceMemoryProperties m_memory{};
    std::uint64_t m_maxAllocationBytes = 0;
    VkPipelineCache m_pipelineCache = VK_NULL_HANDLE;
    std::string m_pipelineCacheFile;
};

} // namespace attnscope::vk
