#include "gpu/VulkanDevice.h"

#include "core/ErrorCode.h"
#include "core/io/FileIo.h"
#include "gpu/VulkanManifests.h"
#include "gpu/VulkanPipelineCache.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <dlfcn.h>
#include <link.h>

namespace attnscope::vk {

namespace {

// The loader loads the drivers (ICDs) while an instance is created and unloads them with the
// last instance. Loading lavapipe again re-initialises LLVM (tens of milliseconds, and 128
// bytes that LLVM never frees, each time), and the application creates an instance to list
// devices and another for the backend. So every library loaded by then stays loaded for the
// life of the process: the handles taken here are never closed, by design.
void keepDriversLoaded()
{
    dl_iterate_phdr(
        [](dl_phdr_info *info, std::size_t, void *) {
            if (info->dlpi_name && info->dlpi_name[0] != '\0')
                dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
            return 0;
        },
        nullptr);
}

constexpr const char *kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr size_t kKeptMessages = 20;

std::mutex g_reportMutex;
ValidationReport g_report;

VKAPI_ATTR VkBool32 VKAPI_CALL onDebugMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT *data, void *)
{
    const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    const bool warning = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
    if (!error && !warning)
        return VK_FALSE;
    const char *text = data && data->pMessage ? data->pMessage : "(no message)";
    // With our messenger installed the layer stops printing on its own; echo so that a
    // validating CLI run (ATTNSCOPE_VULKAN_VALIDATION=1) shows what it found.
    std::fprintf(stderr, "Vulkan validation %s: %s\n", error ? "error" : "warning", text);
    std::lock_guard lock(g_reportMutex);
    (error ? g_report.errors : g_report.warnings)++;
    if (g_report.messages.size() < kKeptMessages)
        g_report.messages.push_back(std::string(error ? "error: " : "warning: ") + text);
    return VK_FALSE; // never abort the call that triggered it
}

VkDebugUtilsMessengerCreateInfoEXT messengerInfo()
{
    VkDebugUtilsMessengerCreateInfoEXT info{};
    info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    info.pfnUserCallback = onDebugMessage;
    return info;
}

bool envFlag(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

DeviceType toType(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return DeviceType::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return DeviceType::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return DeviceType::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return DeviceType::Cpu;
    default:
        return DeviceType::Other;
    }
}

std::string mib(std::uint64_t bytes)
{
    return std::to_string(bytes >> 20) + " MiB";
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

} // namespace

const char *deviceTypeName(DeviceType type)
{
    switch (type) {
    case DeviceType::Discrete:
        return "discrete GPU";
    case DeviceType::Integrated:
        return "integrated GPU";
    case DeviceType::Virtual:
        return "virtual GPU";
    case DeviceType::Cpu:
        return "CPU";
    case DeviceType::Other:
        break;
    }
    return "other";
}

std::string DeviceInfo::label() const
{
    return name + " (" + deviceTypeName(type) + ")";
}

std::string DeviceInfo::describe() const
{
    std::string s = label() + ", Vulkan " + std::to_string(VK_API_VERSION_MAJOR(apiVersion)) + "." +
                    std::to_string(VK_API_VERSION_MINOR(apiVersion)) + "." +
                    std::to_string(VK_API_VERSION_PATCH(apiVersion)) + ", maxStorageBufferRange " +
                    mib(maxStorageBufferRange) + ", maxComputeWorkGroupCount " + std::to_string(maxWorkGroupCount[0]) +
                    " x " + std::to_string(maxWorkGroupCount[1]) + " x " + std::to_string(maxWorkGroupCount[2]) +
                    ", memory heaps ";
    for (size_t i = 0; i < heaps.size(); ++i)
        s += (i ? " + " : "") + mib(heaps[i].bytes) + (heaps[i].deviceLocal ? " device-local" : " host");
    return s;
}

ValidationReport validationReport()
{
    std::lock_guard lock(g_reportMutex);
    return g_report;
}

void resetValidationReport()
{
    std::lock_guard lock(g_reportMutex);
    g_report = {};
}

Result<std::shared_ptr<Instance>> Instance::create(const InstanceOptions &options)
{
    auto global = loadVulkan();
    if (!global)
        return global.error();
    const GlobalFunctions &g = **global;
    const bool validation = options.validation || envFlag("ATTNSCOPE_VULKAN_VALIDATION");

    std::vector<const char *> layers, extensions;
    if (validation) {
        std::uint32_t count = 0;
        g.vkEnumerateInstanceLayerProperties(&count, nullptr);
        std::vector<VkLayerProperties> available(count);
        g.vkEnumerateInstanceLayerProperties(&count, available.data());
        const bool found = std::any_of(available.begin(), available.end(), [](const VkLayerProperties &l) {
            return std::strcmp(l.layerName, kValidationLayer) == 0;
        });
        if (!found)
            return codedError("vulkan.validation.noLayer", {kValidationLayer}, ErrorKind::Unsupported);
        layers.push_back(kValidationLayer);
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }

    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "AttnScope";
    app.pEngineName = "attnscope";
    app.apiVersion = VK_API_VERSION_1_1;

    const VkDebugUtilsMessengerCreateInfoEXT debugInfo = messengerInfo();
    VkInstanceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pNext = validation ? &debugInfo : nullptr; // also reports on create/destroy of the instance
    info.pApplicationInfo = &app;
    info.enabledLayerCount = std::uint32_t(layers.size());
    info.ppEnabledLayerNames = layers.data();
    info.enabledExtensionCount = std::uint32_t(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();

    std::shared_ptr<Instance> self(new Instance);
    if (VkResult r = g.vkCreateInstance(&info, nullptr, &self->m_instance); r != VK_SUCCESS) {
        self->m_instance = VK_NULL_HANDLE;
        if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
            return codedError("vulkan.noDriver", {}, ErrorKind::Unsupported);
        // The loader's answer to a manifest it cannot parse: name the file, not the memory.
        if (r == VK_ERROR_OUT_OF_HOST_MEMORY)
            if (Status manifests = checkLoaderManifests(); !manifests)
                return manifests.error();
        return vkError("vkCreateInstance", r);
    }
    if (Status s = loadInstanceFunctions(g, self->m_instance, self->m_fn, options.loadLimit); !s)
        return s.error();
    if (validation) {
        if (!self->m_fn.vkCreateDebugUtilsMessengerEXT)
            return codedError("vulkan.validation.noDebugUtils", {}, ErrorKind::Unsupported);
        if (VkResult r =
                self->m_fn.vkCreateDebugUtilsMessengerEXT(self->m_instance, &debugInfo, nullptr, &self->m_messenger);
            r != VK_SUCCESS)
            return vkError("vkCreateDebugUtilsMessengerEXT", r);
    }

    std::uint32_t count = 0;
    VkResult r = self->m_fn.vkEnumeratePhysicalDevices(self->m_instance, &count, nullptr);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return codedError("vulkan.noDriver.enumerate", {resultName(r)}, ErrorKind::Unsupported);
    if (count == 0)
        return codedError("vulkan.noDevice.loader", {}, ErrorKind::Unsupported);
    self->m_physical.resize(count);
    r = self->m_fn.vkEnumeratePhysicalDevices(self->m_instance, &count, self->m_physical.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE)
        return vkError("vkEnumeratePhysicalDevices", r);
    self->m_physical.resize(count);
    keepDriversLoaded();

    for (std::uint32_t i = 0; i < count; ++i) {
        VkPhysicalDeviceProperties p{};
        self->m_fn.vkGetPhysicalDeviceProperties(self->m_physical[i], &p);
        VkPhysicalDeviceMemoryProperties mem{};
        self->m_fn.vkGetPhysicalDeviceMemoryProperties(self->m_physical[i], &mem);
        DeviceInfo d;
        d.index = int(i);
        d.name = p.deviceName;
        d.type = toType(p.deviceType);
        d.apiVersion = p.apiVersion;
        d.maxStorageBufferRange = p.limits.maxStorageBufferRange;
        d.minStorageBufferOffsetAlignment = std::max<std::uint64_t>(1, p.limits.minStorageBufferOffsetAlignment);
        std::copy(std::begin(p.limits.maxComputeWorkGroupCount), std::end(p.limits.maxComputeWorkGroupCount),
                  d.maxWorkGroupCount);
        d.maxWorkGroupInvocations = p.limits.maxComputeWorkGroupInvocations;
        d.maxSharedMemoryBytes = p.limits.maxComputeSharedMemorySize;
        d.maxPushConstantsBytes = p.limits.maxPushConstantsSize;
        d.maxStorageBuffersPerStage = p.limits.maxPerStageDescriptorStorageBuffers;
        d.vendorId = p.vendorID;
        d.deviceId = p.deviceID;
        std::copy(std::begin(p.pipelineCacheUUID), std::end(p.pipelineCacheUUID), d.pipelineCacheUuid.begin());
        for (std::uint32_t h = 0; h < mem.memoryHeapCount; ++h)
            d.heaps.push_back(
                {mem.memoryHeaps[h].size, bool(mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)});
        self->m_devices.push_back(std::move(d));
    }
    return self;
}

Instance::~Instance()
{
    // A half-loaded table (a broken loader) leaves pointers null: without vkDestroyInstance
    // the instance can only be leaked.
    if (m_messenger != VK_NULL_HANDLE && m_fn.vkDestroyDebugUtilsMessengerEXT)
        m_fn.vkDestroyDebugUtilsMessengerEXT(m_instance, m_messenger, nullptr);
    if (m_instance != VK_NULL_HANDLE && m_fn.vkDestroyInstance)
        m_fn.vkDestroyInstance(m_instance, nullptr);
}

Result<int> chooseDevice(const std::vector<DeviceInfo> &devices, const std::string &selector)
{
    if (devices.empty())
        return codedError("vulkan.noDevice", {}, ErrorKind::Unsupported);
    auto list = [&] {
        std::string s;
        for (const auto &d : devices)
            s += (s.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.label();
        return s;
    };
    if (!selector.empty()) {
        const bool numeric =
            std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
        if (numeric) {
            const long index = selector.size() > 6 ? -1 : std::stol(selector);
            if (index < 0 || index >= long(devices.size()))
                return codedError("vulkan.device.index", {selector, list()});
            return int(index);
        }
        for (const auto &d : devices)
            if (lower(d.name).find(lower(selector)) != std::string::npos)
                return d.index;
        return codedError("vulkan.device.name", {selector, list()});
    }
    // Stable: among equal types the loader's order wins.
    const auto best = std::min_element(devices.begin(), devices.end(), [](const DeviceInfo &a, const DeviceInfo &b) {
        return int(a.type) < int(b.type);
    });
    return best->index;
}

std::string deviceSelectorFromEnvironment()
{
    const char *v = std::getenv("ATTNSCOPE_VULKAN_DEVICE");
    return v ? v : "";
}

Result<std::unique_ptr<Device>> Device::create(std::shared_ptr<Instance> instance, int index, int loadLimit)
{
    if (!instance || index < 0 || index >= int(instance->devices().size()))
        return codedError("vulkan.device.indexRange", {std::to_string(index)});
    const InstanceFunctions &ifn = instance->fn();
    VkPhysicalDevice physical = instance->physicalDevice(index);

    std::uint32_t familyCount = 0;
    ifn.vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount, nullptr);
    std::vector<VkQueueFamilyProperties> families(familyCount);
    ifn.vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount, families.data());
    // A compute-only family (async compute) first; otherwise any with compute.
    int family = -1;
    for (std::uint32_t i = 0; i < familyCount; ++i)
        if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
            family = int(i);
            break;
        }
    for (std::uint32_t i = 0; i < familyCount && family < 0; ++i)
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            family = int(i);
    const DeviceInfo &info = instance->devices()[size_t(index)];
    if (family < 0)
        return codedError("vulkan.device.noComputeQueue", {info.label()}, ErrorKind::Unsupported);

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queueInfo{};
    queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queueInfo.queueFamilyIndex = std::uint32_t(family);
    queueInfo.queueCount = 1;
    queueInfo.pQueuePriorities = &priority;
    VkDeviceCreateInfo deviceInfo{};
    deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    deviceInfo.queueCreateInfoCount = 1;
    deviceInfo.pQueueCreateInfos = &queueInfo;

    std::unique_ptr<Device> self(new Device);
    self->m_instance = instance;
    self->m_info = info;
    self->m_queueFamily = std::uint32_t(family);
    if (VkResult r = ifn.vkCreateDevice(physical, &deviceInfo, nullptr, &self->m_device); r != VK_SUCCESS) {
        self->m_device = VK_NULL_HANDLE;
        return vkError("vkCreateDevice on " + info.label(), r);
    }
    if (Status s = loadDeviceFunctions(ifn, self->m_device, self->m_fn, loadLimit); !s)
        return s.error();
    self->m_fn.vkGetDeviceQueue(self->m_device, self->m_queueFamily, 0, &self->m_queue);
    ifn.vkGetPhysicalDeviceMemoryProperties(physical, &self->m_memory);

    self->m_maxAllocationBytes = 0;
    for (const auto &heap : info.heaps)
        self->m_maxAllocationBytes = std::max(self->m_maxAllocationBytes, heap.bytes);
    if (ifn.vkGetPhysicalDeviceProperties2 && info.apiVersion >= VK_API_VERSION_1_1) {
        VkPhysicalDeviceMaintenance3Properties m3{};
        m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
        VkPhysicalDeviceProperties2 p2{};
        p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        p2.pNext = &m3;
        ifn.vkGetPhysicalDeviceProperties2(physical, &p2);
        if (m3.maxMemoryAllocationSize > 0)
            self->m_maxAllocationBytes =
                std::min<std::uint64_t>(self->m_maxAllocationBytes, m3.maxMemoryAllocationSize);
    }
    return self;
}

void Device::waitIdle() const
{
    // After a device loss waiting returns at once (VK_ERROR_DEVICE_LOST); a GPU that hangs
    // for real is reset by its kernel driver, which then reports the loss the same way.
    if (m_device != VK_NULL_HANDLE && m_fn.vkDeviceWaitIdle)
        m_fn.vkDeviceWaitIdle(m_device);
}

Device::~Device()
{
    waitIdle();
    if (m_pipelineCache != VK_NULL_HANDLE && m_fn.vkDestroyPipelineCache)
        m_fn.vkDestroyPipelineCache(m_device, m_pipelineCache, nullptr);
    // Without vkDestroyDevice (a driver that lacks it) the device can only be leaked.
    if (m_device != VK_NULL_HANDLE && m_fn.vkDestroyDevice)
        m_fn.vkDestroyDevice(m_device, nullptr);
}

std::uint64_t Device::openPipelineCache(const std::string &folder)
{
    if (m_pipelineCache != VK_NULL_HANDLE || folder.empty())
        return 0;
    m_pipelineCacheFile = pipelineCacheFile(folder, m_info);
    std::vector<unsigned char> bytes;
    if (std::ifstream in(m_pipelineCacheFile, std::ios::binary); in) {
        in.seekg(0, std::ios::end);
        const std::streamoff size = in.tellg();
        if (size > 0 && size <= (std::streamoff(256) << 20)) { // a driver's cache, not a stray large file
            bytes.resize(std::size_t(size));
            in.seekg(0);
            if (!in.read(reinterpret_cast<char *>(bytes.data()), size))
                bytes.clear();
        }
    }
    if (!pipelineCacheFits(bytes, m_info))
        bytes.clear();
    VkPipelineCacheCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    info.initialDataSize = bytes.size();
    info.pInitialData = bytes.empty() ? nullptr : bytes.data();
    if (m_fn.vkCreatePipelineCache(m_device, &info, nullptr, &m_pipelineCache) != VK_SUCCESS) {
        m_pipelineCache = VK_NULL_HANDLE; // pipelines are then made without one
        return 0;
    }
    return bytes.size();
}

Status Device::savePipelineCache() const
{
    if (m_pipelineCache == VK_NULL_HANDLE)
        return Ok{};
    std::size_t size = 0;
    if (VkResult r = m_fn.vkGetPipelineCacheData(m_device, m_pipelineCache, &size, nullptr); r != VK_SUCCESS)
        return vkError("vkGetPipelineCacheData", r);
    std::vector<char> data(size);
    if (VkResult r = m_fn.vkGetPipelineCacheData(m_device, m_pipelineCache, &size, data.data());
        r != VK_SUCCESS && r != VK_INCOMPLETE)
        return vkError("vkGetPipelineCacheData", r);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(m_pipelineCacheFile).parent_path(), ec);
    AtomicFileWriter out(m_pipelineCacheFile);
    if (Status s = out.open(); !s)
        return s;
    out.write(data.data(), size);
    return out.commit();
}

Result<std::uint32_t> Device::findMemoryType(std::uint32_t typeBits, VkMemoryPropertyFlags required,
                                             VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags avoided) const
{
    int best = -1, bestScore = -1;
    for (std::uint32_t i = 0; i < m_memory.memoryTypeCount; ++i) {
        if (!(typeBits & (1u << i)))
            continue;
        const VkMemoryPropertyFlags f = m_memory.memoryTypes[i].propertyFlags;
        if ((f & required) != required)
            continue;
        const int score = ((f & preferred) == preferred ? 2 : 0) + ((f & avoided) == 0 ? 1 : 0);
        if (score > bestScore) {
            best = int(i);
            bestScore = score;
        }
    }
    if (best < 0)
        return codedError("vulkan.device.noMemoryType", {m_info.label()}, ErrorKind::Unsupported);
    return std::uint32_t(best);
}

} // namespace attnscope::vk
