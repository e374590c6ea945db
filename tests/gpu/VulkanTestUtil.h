#pragma once

// Shared by the Vulkan suites: the one reason a GPU test may skip (no Vulkan driver at all),
// and the validation-layer bookkeeping every suite checks.

#include "gpu/VulkanBackend.h"
#include "gpu/VulkanDevice.h"

#include <QTest>

#include <string>

namespace attnscope::test {

// Empty where a Vulkan device exists; otherwise why not (no loader, no driver, no device).
// Only those reasons skip; any other failure to enumerate is a test failure.
inline std::string missingVulkanReason()
{
    auto devices = listVulkanDevices();
    if (devices)
        return {};
    // No loader, no driver, no device: this machine cannot run Vulkan at all.
    if (devices.kind() == ErrorKind::Unsupported)
        return devices.message();
    return {};
}

// The validation layer's warnings and errors so far, as one message; empty when clean.
inline std::string validationProblems()
{
    const vk::ValidationReport r = vk::validationReport();
    if (r.errors == 0 && r.warnings == 0)
        return {};
    std::string s = "Vulkan validation reported " + std::to_string(r.errors) + " error(s) and " +
                    std::to_string(r.warnings) + " warning(s):";
    for (const auto &m : r.messages)
        s += "\n  " + m;
    return s;
}

} // namespace attnscope::test

#define ATTNSCOPE_SKIP_WITHOUT_VULKAN()                                                                                \
    do {                                                                                                               \
        const std::string why = attnscope::test::missingVulkanReason();                                                \
        if (!why.empty())                                                                                              \
            QSKIP(("no Vulkan driver is installed: " + why).c_str());                                                  \
    } while (false)
