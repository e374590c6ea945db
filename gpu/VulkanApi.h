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
    X(vkWaitForFences)

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
// same error). The library is libvulkan.so.1 unless ATTNSCOPE_VULKAN_LOADER names another
// path; tests point it at a missing file to exercise the "no loader" fallback for real.
Result<const GlobalFunctions *> loadVulkan();

Status loadInstanceFunctions(const GlobalFunctions &global, VkInstance instance, InstanceFunctions &out);
Status loadDeviceFunctions(const InstanceFunctions &instance, VkDevice device, DeviceFunctions &out);

// "VK_ERROR_DEVICE_LOST" and so on.
const char *resultName(VkResult result);

// "what: VK_ERROR_..." as an Error.
Error vkError(const std::string &what, VkResult result);

} // namespace attnscope::vk
