#include "app/engine/BackendChoice.h"

#include "core/CpuBackend.h"
#include "core/Validation.h"

#include <utility>

namespace attnscope {

namespace {

bool isRealGpu(vk::DeviceType type)
{
    return type == vk::DeviceType::Discrete || type == vk::DeviceType::Integrated || type == vk::DeviceType::Virtual;
}

// What Auto does, decided without creating a device: the device index to use, or the
// reason to stay on the CPU.
struct AutoDecision {
    int device = -1;
    std::string reason;
};

AutoDecision decideAuto(const std::string &selector)
{
    auto devices = listVulkanDevices();
    if (!devices)
        return {-1, devices.message() + ": using the CPU"};
    auto index = vk::chooseDevice(*devices, selector);
    if (!index)
        return {-1, index.message() + ": using the CPU"};
    const vk::DeviceInfo &d = (*devices)[size_t(*index)];
    if (!isRealGpu(d.type) && selector.empty())
        return {-1, "the only Vulkan device is " + d.label() +
                        ", slower than the Eigen engine: using the CPU (--backend vulkan or "
                        "ATTNSCOPE_VULKAN_DEVICE uses it anyway)"};
    return {*index, {}};
}

std::string selectorFor(const BackendOptions &options)
{
    if (!options.vulkanDevice.empty())
        return options.vulkanDevice;
    if (!options.vulkan.device.empty())
        return options.vulkan.device;
    return vk::deviceSelectorFromEnvironment();
}

} // namespace

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

Result<BackendSelection> createBackend(BackendRequest request, const BackendOptions &options)
{
    BackendSelection selection;
    if (request == BackendRequest::Cpu) {
        selection.backend = std::make_unique<CpuBackend>();
        return selection;
    }
    const std::string selector = selectorFor(options);
    VulkanBackendOptions vulkanOptions = options.vulkan;
    vulkanOptions.device = selector;
    const bool fallback = options.runtimeFallback.value_or(request == BackendRequest::Auto);

    if (request == BackendRequest::Auto) {
        const AutoDecision decision = decideAuto(selector);
        if (decision.device < 0) {
            selection.notice = decision.reason;
            selection.backend = std::make_unique<CpuBackend>();
            return selection;
        }
        vulkanOptions.device = std::to_string(decision.device);
    }

    auto vulkan = VulkanBackend::create(vulkanOptions);
    if (!vulkan) {
        if (request == BackendRequest::Vulkan)
            return Error{"Vulkan backend unavailable: " + vulkan.message()};
        selection.notice = "Vulkan failed to start (" + vulkan.message() + "): using the CPU";
        selection.backend = std::make_unique<CpuBackend>();
        return selection;
    }
    if (fallback)
        selection.backend = std::make_unique<FallbackBackend>(std::move(*vulkan));
    else
        selection.backend = std::move(*vulkan);
    return selection;
}

std::vector<std::string> describeDevices()
{
    CpuBackend cpu;
    std::vector<std::string> lines = {"cpu: " + cpu.deviceName()};
    auto devices = listVulkanDevices();
    if (!devices) {
        lines.push_back("vulkan: none (" + devices.message() + ")");
    } else {
        for (const auto &d : *devices)
            lines.push_back("vulkan " + std::to_string(d.index) + ": " + d.describe());
    }
    const AutoDecision decision = decideAuto(vk::deviceSelectorFromEnvironment());
    if (decision.device >= 0 && devices)
        lines.push_back("auto: vulkan " + std::to_string(decision.device) + " (" +
                        (*devices)[size_t(decision.device)].label() + ")");
    else
        lines.push_back("auto: cpu (" + decision.reason + ")");
    return lines;
}

FallbackBackend::FallbackBackend(std::unique_ptr<AttentionBackend> primary) : m_primary(std::move(primary)) {}

FallbackBackend::~FallbackBackend() = default;

std::string FallbackBackend::name() const
{
    return m_primary ? m_primary->name() : m_cpu->name();
}

std::string FallbackBackend::deviceName() const
{
    return m_primary ? m_primary->deviceName() : m_cpu->deviceName();
}

Result<AttentionTrace> FallbackBackend::compute(const AttentionProblem &problem)
{
    // A bad problem is the caller's error on any backend: report it, do not fall back.
    if (Status s = validateProblem(problem); !s)
        return s.error();
    if (m_primary) {
        auto result = m_primary->compute(problem);
        if (result)
            return result;
        m_notice = result.message() + ": computing on the CPU from now on";
        m_primary.reset(); // frees the device and its memory
        m_cpu = std::make_unique<CpuBackend>();
    }
    return m_cpu->compute(problem);
}

std::string FallbackBackend::takeNotice()
{
    return std::exchange(m_notice, {});
}

std::string takeBackendNotice(AttentionBackend &backend)
{
    auto *fallback = dynamic_cast<FallbackBackend *>(&backend);
    return fallback ? fallback->takeNotice() : std::string{};
}

} // namespace attnscope
