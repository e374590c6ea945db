#include "gpu/VulkanBackend.h"

namespace attnscope {

Result<VulkanFault> parseVulkanFault(const std::string &text)
{
    if (text.empty() || text == "none")
        return VulkanFault::None;
    if (text == "create")
        return VulkanFault::CreateDevice;
    if (text == "device-lost")
        return VulkanFault::DeviceLost;
    if (text == "oom")
        return VulkanFault::OutOfMemory;
    if (text == "timeout")
        return VulkanFault::Timeout;
    if (text == "partial-instance")
        return VulkanFault::PartialInstance;
    if (text == "partial-device")
        return VulkanFault::PartialDevice;
    return Error{"ATTNSCOPE_VULKAN_FAULT: expected none, create, device-lost, oom, timeout, partial-instance or "
                 "partial-device, found \"" +
                 text + "\""};
}

} // namespace attnscope
