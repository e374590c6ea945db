#include "app/engine/BackendChoice.h"

#include "core/CpuBackend.h"

namespace attnscope {

Result<BackendRequest> parseBackendRequest(const std::string &text)
{
    if (text == "auto")
        return BackendRequest::Auto;
    if (text == "cpu")
        return BackendRequest::Cpu;
    if (text == "vulkan")
        return BackendRequest::Vulkan;
    return Error{"--backend: expected auto, cpu or vulkan, found \"" + text + "\""};
}

Result<BackendSelection> createBackend(BackendRequest request)
{
    BackendSelection selection;
    switch (request) {
    case BackendRequest::Vulkan:
        return Error{"--backend vulkan: this build has no Vulkan backend"};
    case BackendRequest::Auto:
        selection.notice = "no Vulkan backend in this build: using the CPU";
        break;
    case BackendRequest::Cpu:
        break;
    }
    selection.backend = std::make_unique<CpuBackend>();
    return selection;
}

std::vector<std::string> describeDevices()
{
    CpuBackend cpu;
    return {"cpu: " + cpu.deviceName()};
}

} // namespace attnscope
