#pragma once

// Vulkan faults by name, for test drivers and data-driven rows. The product reads no name: a
// fault is injected only by a program that sets VulkanBackendOptions::fault (issue 21).

#include "core/Result.h"
#include "gpu/VulkanBackend.h"

#include <string>

namespace attnscope::test {

// "", "none", "create", "device-lost", "oom", "timeout", "partial-instance", "partial-device".
inline Result<VulkanFault> parseVulkanFault(const std::string &text)
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
    return Error{"expected none, create, device-lost, oom, timeout, partial-instance or partial-device, found \"" +
                 text + "\""};
}

} // namespace attnscope::test
