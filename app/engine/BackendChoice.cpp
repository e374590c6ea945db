#include "app/engine/BackendChoice.h"

#include "core/ErrorCode.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/Validation.h"

#include <cstdlib>
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
    Error reason; // its message empty when a device is used
};

AutoDecision decideAuto(const Result<std::vector<vk::DeviceInfo>> &devices, const std::string &selector)
{
    if (!devices)
        return {-1, wrappingError("backend.usingCpu", devices.error())};
    auto index = vk::chooseDevice(*devices, selector);
    if (!index)
        return {-1, wrappingError("backend.usingCpu", index.error())};
    const vk::DeviceInfo &d = (*devices)[size_t(*index)];
    if (!isRealGpu(d.type) && selector.empty())
        return {-1, codedError("backend.onlyCpuDevice", {d.label()})};
    return {*index, {}};
}

// Errors after which the device cannot be trusted with another problem.
bool givesUpTheDevice(ErrorKind kind)
{
    return kind == ErrorKind::DeviceLost || kind == ErrorKind::Internal;
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

std::string defaultPipelineCacheDir()
{
    // The XDG cache folder, as QStandardPaths::GenericCacheLocation gives it on Linux.
    if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
        return std::string(xdg) + "/attnscope/vulkan";
    if (const char *home = std::getenv("HOME"); home && home[0] == '/')
        return std::string(home) + "/.cache/attnscope/vulkan";
    return std::string();
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
    if (vulkanOptions.pipelineCacheDir.empty())
        vulkanOptions.pipelineCacheDir = defaultPipelineCacheDir();
    const bool fallback = options.runtimeFallback.value_or(request == BackendRequest::Auto);

    if (request == BackendRequest::Auto) {
        const AutoDecision decision = decideAuto(listVulkanDevices(), selector);
        if (decision.device < 0) {
            selection.noticeError = decision.reason;
            selection.notice = decision.reason.message;
            selection.backend = std::make_unique<CpuBackend>();
            return selection;
        }
        vulkanOptions.device = std::to_string(decision.device);
    }

    auto vulkan = VulkanBackend::create(vulkanOptions);
    if (!vulkan) {
        if (request == BackendRequest::Vulkan)
            return wrappingError("backend.vulkanUnavailable", vulkan.error(), vulkan.kind());
        selection.noticeError = wrappingError("backend.startFailed", vulkan.error(), vulkan.kind());
        selection.notice = selection.noticeError.message;
        selection.backend = std::make_unique<CpuBackend>();
        return selection;
    }
    if (fallback)
        selection.backend = std::make_unique<FallbackBackend>(std::move(*vulkan));
    else
        selection.backend = std::move(*vulkan);
    return selection;
}

DeviceListing listComputeDevices()
{
    DeviceListing listing;
    CpuBackend cpu;
    listing.devices.push_back({BackendRequest::Cpu, -1, cpu.deviceName(), cpu.deviceName(), true});
    const auto devices = listVulkanDevices();
    if (!devices)
        listing.vulkanMissing = devices.message();
    else
        for (const auto &d : *devices)
            listing.devices.push_back(
                {BackendRequest::Vulkan, d.index, d.label(), d.describe(), d.type == vk::DeviceType::Cpu});
    const AutoDecision decision = decideAuto(devices, vk::deviceSelectorFromEnvironment());
    listing.autoDevice = decision.device;
    listing.autoReason = decision.reason.message;
    return listing;
}

std::vector<std::string> formatDeviceListing(const DeviceListing &listing)
{
    std::vector<std::string> lines;
    const DeviceDescription *autoDevice = nullptr;
    for (const DeviceDescription &d : listing.devices) {
        if (d.kind == BackendRequest::Cpu) {
            lines.push_back("cpu: " + d.details);
            continue;
        }
        lines.push_back("vulkan " + std::to_string(d.index) + ": " + d.details);
        if (d.index == listing.autoDevice)
            autoDevice = &d;
    }
    if (!listing.vulkanMissing.empty())
        lines.push_back("vulkan: none (" + listing.vulkanMissing + ")");
    if (autoDevice)
        lines.push_back("auto: vulkan " + std::to_string(autoDevice->index) + " (" + autoDevice->name + ")");
    else
        lines.push_back("auto: cpu (" + listing.autoReason + ")");
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

AttentionBackend &FallbackBackend::cpu()
{
    if (!m_cpu) {
        m_cpu = std::make_unique<CpuBackend>();
        m_cpu->setComputeControl(m_control);
    }
    return *m_cpu;
}

void FallbackBackend::setComputeControl(ComputeControl control)
{
    m_control = control;
    if (m_primary)
        m_primary->setComputeControl(control);
    if (m_cpu)
        m_cpu->setComputeControl(control);
}

Result<AttentionTrace> FallbackBackend::compute(const AttentionProblem &problem)
{
    m_lastFellBack = false;
    // A bad problem is the caller's error on any backend: report it, do not fall back.
    if (Status s = validateProblem(problem); !s)
        return s.error();
    if (!m_primary)
        return cpu().compute(problem);
    auto result = m_primary->compute(problem);
    if (result || result.kind() == ErrorKind::Cancelled)
        return result;
    noteFailure(result.error());
    return cpu().compute(problem);
}

void FallbackBackend::noteFailure(const Error &error)
{
    m_lastFellBack = true;
    if (givesUpTheDevice(error.kind)) {
        m_notice = wrappingError("backend.fallback.always", error, error.kind);
        m_primary.reset(); // waits for the device, then frees it and its memory
    } else {
        // Too large for this device, or its memory ran out for this size: the CPU answers
        // this one and the GPU stays in use for the next problem.
        m_notice = wrappingError("backend.fallback.once", error, error.kind);
    }
}

Result<PooledResult> FallbackBackend::computePooled(const AttentionProblem &problem, const PoolOptions &options)
{
    m_lastFellBack = false;
    // A bad request is the caller's error on any backend: report it, do not fall back.
    if (options.bins < 1 || !validateProblem(problem, ProblemLimits{}))
        return cpu().computePooled(problem, options);
    if (!m_primary)
        return cpu().computePooled(problem, options);
    auto result = m_primary->computePooled(problem, options);
    if (result || result.kind() == ErrorKind::Cancelled)
        return result;
    noteFailure(result.error());
    return cpu().computePooled(problem, options);
}

Result<PooledResult> FallbackBackend::computePooledQk(const QkLayer &layer, const PoolOptions &options)
{
    m_lastFellBack = false;
    // A bad request is the caller's error on any backend: report it, do not fall back.
    if (options.bins < 1 || !validateQkLayer(layer))
        return cpu().computePooledQk(layer, options);
    if (!m_primary)
        return cpu().computePooledQk(layer, options);
    auto result = m_primary->computePooledQk(layer, options);
    if (result || result.kind() == ErrorKind::Cancelled)
        return result;
    noteFailure(result.error());
    return cpu().computePooledQk(layer, options);
}

std::string FallbackBackend::takeNotice()
{
    return takeNoticeError().message;
}

Error FallbackBackend::takeNoticeError()
{
    return std::exchange(m_notice, Error{});
}

std::string takeBackendNotice(AttentionBackend &backend)
{
    return takeBackendNoticeError(backend).message;
}

Error takeBackendNoticeError(AttentionBackend &backend)
{
    auto *fallback = dynamic_cast<FallbackBackend *>(&backend);
    return fallback ? fallback->takeNoticeError() : Error{};
}

ComputeRun FallbackBackend::lastRun() const
{
    if (m_lastFellBack)
        return {m_cpu->name(), m_cpu->deviceName(), true};
    return {name(), deviceName(), false};
}

ComputeRun lastComputeRun(const AttentionBackend &backend)
{
    if (auto *fallback = dynamic_cast<const FallbackBackend *>(&backend))
        return fallback->lastRun();
    return {backend.name(), backend.deviceName(), false};
}

} // namespace attnscope
