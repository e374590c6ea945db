#include "gpu/VulkanApi.h"

#include "core/ErrorCode.h"

#include <dlfcn.h>

#include <mutex>

namespace attnscope::vk {

namespace {

std::string &loaderPath()
{
    static std::string path = "libvulkan.so.1";
    return path;
}

struct Loaded {
    GlobalFunctions functions;
    Error error; // its message empty on success
};

Loaded openLoader()
{
    Loaded loaded;
    const std::string path = loaderPath();
    // Never closed: the loader's own atexit handlers and the drivers outlive any one backend.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        // dlerror()'s text is the system's own: an argument, kept as it is.
        loaded.error = why ? codedError("vulkan.loader.openReason", {path, why}, ErrorKind::Unsupported)
                           : codedError("vulkan.loader.open", {path}, ErrorKind::Unsupported);
        return loaded;
    }
    auto getProc = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
    if (!getProc) {
        loaded.error = codedError("vulkan.loader.noEntry", {path}, ErrorKind::Unsupported);
        return loaded;
    }
    GlobalFunctions &f = loaded.functions;
    f.vkGetInstanceProcAddr = getProc;
#define ATTNSCOPE_VK_LOAD(name)                                                                                        \
    f.name = reinterpret_cast<PFN_##name>(getProc(VK_NULL_HANDLE, #name));                                             \
    if (!f.name) {                                                                                                     \
        loaded.error = codedError("vulkan.loader.lacks", {path, #name}, ErrorKind::Unsupported);                       \
        return loaded;                                                                                                 \
    }
    ATTNSCOPE_VK_GLOBAL_FUNCTIONS(ATTNSCOPE_VK_LOAD)
#undef ATTNSCOPE_VK_LOAD
    return loaded;
}

} // namespace

void setLoaderPath(std::string path)
{
    loaderPath() = std::move(path);
}

Result<const GlobalFunctions *> loadVulkan()
{
    static const Loaded loaded = openLoader();
    // Without a usable loader this machine cannot run Vulkan at all.
    if (!loaded.error.message.empty())
        return loaded.error;
    return &loaded.functions;
}

Status loadInstanceFunctions(const GlobalFunctions &global, VkInstance instance, InstanceFunctions &f, int loadLimit)
{
    int loaded = 0;
#define ATTNSCOPE_VK_LOAD(name)                                                                                        \
    if (loadLimit < 0 || loaded < loadLimit)                                                                           \
        f.name = reinterpret_cast<PFN_##name>(global.vkGetInstanceProcAddr(instance, #name));                          \
    if (!f.name)                                                                                                       \
        return codedError("vulkan.instance.lacks", {#name}, ErrorKind::Unsupported);                                   \
    ++loaded;
    ATTNSCOPE_VK_INSTANCE_FUNCTIONS(ATTNSCOPE_VK_LOAD)
#undef ATTNSCOPE_VK_LOAD
    // Optional: present only when VK_EXT_debug_utils was enabled.
    f.vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        global.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    f.vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        global.vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    f.vkGetPhysicalDeviceProperties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
        global.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceProperties2"));
    return Ok{};
}

Status loadDeviceFunctions(const InstanceFunctions &instance, VkDevice device, DeviceFunctions &f, int loadLimit)
{
    int loaded = 0;
#define ATTNSCOPE_VK_LOAD(name)                                                                                        \
    if (loadLimit < 0 || loaded < loadLimit)                                                                           \
        f.name = reinterpret_cast<PFN_##name>(instance.vkGetDeviceProcAddr(device, #name));                            \
    if (!f.name)                                                                                                       \
        return codedError("vulkan.device.lacks", {#name}, ErrorKind::Unsupported);                                     \
    ++loaded;
    ATTNSCOPE_VK_DEVICE_FUNCTIONS(ATTNSCOPE_VK_LOAD)
#undef ATTNSCOPE_VK_LOAD
    return Ok{};
}

const char *resultName(VkResult result)
{
    switch (result) {
    case VK_SUCCESS:
        return "VK_SUCCESS";
    case VK_NOT_READY:
        return "VK_NOT_READY";
    case VK_TIMEOUT:
        return "VK_TIMEOUT";
    case VK_INCOMPLETE:
        return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
        return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
        return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
        return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
        return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
        return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
        return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FRAGMENTED_POOL:
        return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default:
        return "VkResult (unknown)";
    }
}

ErrorKind errorKindOf(VkResult result)
{
    switch (result) {
    case VK_ERROR_DEVICE_LOST:
    case VK_TIMEOUT:
        return ErrorKind::DeviceLost;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_MEMORY_MAP_FAILED:
        return ErrorKind::OutOfMemory;
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return ErrorKind::Unsupported;
    default:
        return ErrorKind::Internal;
    }
}

Error vkError(const std::string &what, VkResult result)
{
    // The VkResult's name is the driver's word: an argument, with what was called.
    return codedError("vulkan.call", {what, resultName(result), std::to_string(int(result))}, errorKindOf(result));
}

} // namespace attnscope::vk
