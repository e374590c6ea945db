#pragma once

// The Vulkan entry points the backend uses, loaded at run time from the loader library
// (libvulkan.so.1) instead of linked: a machine without a Vulkan loader must still start
// the app and compute on the CPU. The three tables below follow the loader's levels.

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "core/Result.h"

#include <string>

namespace attnscope::vk {

#define ATTNSCOPE_VK_GLOBAL_FUNCTIONS(X)                                                                               \
    X(vkCreateInstance)                                                                                                \
    X(vkEnumerateInstanceLayerProperties)                                                                              \
    X(vkEnumerateInstanceExtensionProperties)

#define ATTNSCOPE_VK_INSTANCE_FUNCTIONS(X)                                                                             \
    X(vkDestroyInstance)                                                                                               \
    X(vkEnumeratePhysicalDevices)                                                                                      \
    X(vkGetPhysicalDeviceProperties)                                                                                   \
    X(vkGetPhysicalDeviceMemoryProperties)                                                                             \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                                        \
    X(vkCreateDevice)                                                                                                  \
    X(vkGetDeviceProcAddr)

#define ATTNSCOPE_VK_DEVICE_FUNCTIONS(X)                                                                               \
    X(vkDestroyDevice)                                                                                                 \
    X(vkGetDeviceQueue)                                                                                                \
    X(vkDeviceWaitIdle)                                                                                                \
    X(vkQueueSubmit)                                                                                                   \
    X(vkCreateBuffer)                                                                                                  \
    X(vkDestroyBuffer)                                                                                                 \
    X(vkGetBufferMemoryRequirements)                                                                                   \
    X(vkAllocateMemory)                                                                                                \
    X(vkFreeMemory)                                                                                                    \
    X(vkBindBufferMemory)                                                                                              \
    X(vkMapMemory)                                                                                                     \
    X(vkUnmapMemory)                                                                                                   \
    X(vkCreateShaderModule)                                                                                            \
    X(vkDestroyShaderModule)                                                                                           \
    X(vkCreateDescriptorSetLayout)                                                                                     \
    X(vkDestroyDescriptorSetLayout)                                                                                    \
    X(vkCreatePipelineLayout)                                                                                          \
    X(vkDestroyPipelineLayout)                                                                                         \
    X(vkCreateComputePipelines)                                                                                        \
    X(vkDestroyPipeline)                                                                                               \
    X(vkCreateDescriptorPool)                                                                                          \
    X(vkDestroyDescriptorPool)                                                                                         \
    X(vkResetDescriptorPool)                                                                                           \
    X(vkAllocateDescriptorSets)                                                                                        \
    X(vkUpdateDescriptorSets)                                                                                          \
    X(vkCreateCommandPool)                                                                                             \
    X(vkDestroyCommandPool)                                                                                            \
    X(vkResetCommandPool)                                                                                              \
    X(vkAllocateCommandBuffers)                                                                                        \
    X(vkBeginCommandBuffer)                                                                                            \
    X(vkEndCommandBuffer)                                                                                              \
    X(vkCmdBindPipeline)                                                                                               \
    X(vkCmdBindDescriptorSets)                                                                                         \
    X(vkCmdPushConstants)                                                                                              \
    X(vkCmdDispatch)                                                                                                   \
    X(vkCmdPipelineBarrier)                                                                                            \
    X(vkCmdCopyBuffer)                                                                                                 \
    X(vkCreateFence)                                                                                                   \
    X(vkDestroyFence)                                                                                                  \
    X(vkResetFences)                                                                                                   \
    X(vkWaitForFences)                                                                                                 \
    X(vkCreatePipelineCache)                                                                                           \
    X(vkDestroyPipelineCache)                                                                                          \
    X(vkGetPipelineCacheData)

#define ATTNSCOPE_VK_DECLARE(name) PFN_##name name = nullptr;

struct GlobalFunctions {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
    ATTNSCOPE_VK_GLOBAL_FUNCTIONS(ATTNSCOPE_VK_DECLARE)
};

struct InstanceFunctions {
    ATTNSCOPE_VK_INSTANCE_FUNCTIONS(ATTNSCOPE_VK_DECLARE)
    // From VK_EXT_debug_utils; null unless validation was asked for.
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
    // Vulkan 1.1; null on a 1.0 loader (then maxMemoryAllocationSize is taken from the heaps).
    PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2 = nullptr;
};

struct DeviceFunctions {
    ATTNSCOPE_VK_DEVICE_FUNCTIONS(ATTNSCOPE_VK_DECLARE)
};

#undef ATTNSCOPE_VK_DECLARE

// Opens the Vulkan loader once per process (later calls return the same table, or the
// same error): libvulkan.so.1, or what setLoaderPath() named; tests point it at a missing file
// to exercise the "no loader" fallback for real.
Result<const GlobalFunctions *> loadVulkan();
// The library loadVulkan() opens: libvulkan.so.1, unless a test driver names another (a file that
// is not there, a library that is no loader) before the process's first Vulkan use. The product
// never does: its binaries read no such setting.
void setLoaderPath(std::string path);

// Fill a table in declaration order and stop at the first entry the loader or driver lacks,
// leaving that one and the rest null: whoever owns the handle must check every pointer it
// calls on the way out. `loadLimit` (a test hook, -1: none) pretends the table ends after
// that many entries, so the half-loaded paths run on a complete driver.
Status loadInstanceFunctions(const GlobalFunctions &global, VkInstance instance, InstanceFunctions &out,
                             int loadLimit = -1);
Status loadDeviceFunctions(const InstanceFunctions &instance, VkDevice device, DeviceFunctions &out,
                           int loadLimit = -1);

// "VK_ERROR_DEVICE_LOST" and so on.
const char *resultName(VkResult result);

// What a failing VkResult means to the caller: DEVICE_LOST and TIMEOUT (a fence that never
// signalled) are DeviceLost, the OUT_OF_*_MEMORY family and full pools OutOfMemory, missing
// layers, extensions, features and drivers Unsupported, anything else Internal.
ErrorKind errorKindOf(VkResult result);

// "what: VK_ERROR_... (-4)" as an Error of errorKindOf(result).
Error vkError(const std::string &what, VkResult result);

} // namespace attnscope::vk
