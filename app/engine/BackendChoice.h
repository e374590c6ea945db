#pragma once

#include "core/Result.h"
#include "core/attention/AttentionBackend.h"
#include "gpu/VulkanBackend.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

enum class BackendRequest { Auto, Cpu, Vulkan };

// Parses "auto", "cpu" or "vulkan".
Result<BackendRequest> parseBackendRequest(const std::string &text);

struct BackendSelection {
    std::unique_ptr<AttentionBackend> backend;
    // Set when the request could not be honoured exactly and something else was chosen
    // ("no Vulkan device: using the CPU"); the user is told this once.
    std::string notice;
    // The same notice with its code and arguments (core/ErrorCode.h), for the GUI to show it
    // translated (app/render/ErrorText.h); an empty message when there is none.
    Error noticeError;
};

struct BackendOptions {
    // Which Vulkan device: an index or a case-insensitive name substring (see
    // `attnscope-cli devices`). Empty: ATTNSCOPE_VULKAN_DEVICE, else the best by type.
    // Naming a device counts as asking for Vulkan: Auto then uses it even if it is a CPU.
    std::string vulkanDevice;
    // Whether a Vulkan failure during a compute (device lost, out of memory) is answered by
    // the CPU engine (see FallbackBackend). Default: yes for Auto, no for an explicit Vulkan
    // request, where the caller asked for that device and gets the Error instead.
    std::optional<bool> runtimeFallback;
    // Validation, injected faults and tighter limits, for tests; `device` is overridden by
    // vulkanDevice when that is set.
    VulkanBackendOptions vulkan;
};

// Where a backend keeps its pipelines' cache unless BackendOptions::vulkan names a folder:
// $XDG_CACHE_HOME/attnscope/vulkan, else ~/.cache/attnscope/vulkan (empty: neither is set).
std::string defaultPipelineCacheDir();

// Creates the backend for a request.
// - Cpu: the Eigen engine.
// - Vulkan: the chosen Vulkan device, or an Error saying why none works.
// - Auto: Vulkan on a real GPU (discrete, integrated or virtual), wrapped in a
//   FallbackBackend; the Eigen engine with a notice where there is no Vulkan, where it fails
//   to start, or where the only device is a CPU one (lavapipe is slower than Eigen) and no
//   device was named.
Result<BackendSelection> createBackend(BackendRequest request, const BackendOptions &options = {});

// One compute device as data: what the GUI's Backend menu lists and `attnscope-cli devices`
// prints (formatDeviceListing), so nobody parses a display string back.
struct DeviceDescription {
    BackendRequest kind = BackendRequest::Cpu; // Cpu: the Eigen engine; Vulkan: a Vulkan device
    int index = -1;                            // the Vulkan device index (what vulkanDevice accepts); -1 for the CPU
    std::string name;       // "llvmpipe (LLVM 15.0.6, 256 bits) (CPU)", "Eigen 3.4.0 on CPU (2 threads)"
    std::string details;    // name plus the limits the backend depends on, on one line
    bool isCpuType = false; // runs on the CPU: the Eigen engine, or lavapipe
};

struct DeviceListing {
    std::vector<DeviceDescription> devices; // the CPU engine first, then every Vulkan device
    std::string vulkanMissing;              // why no Vulkan device is listed; empty when some are
    int autoDevice = -1;                    // the Vulkan device Auto would use; -1: the CPU
    std::string autoReason;                 // why Auto stays on the CPU (autoDevice < 0)
};

// Every available compute device and what Auto would pick (honouring ATTNSCOPE_VULKAN_DEVICE).
DeviceListing listComputeDevices();

// The text of `attnscope-cli devices`, one line each: "cpu: Eigen 3.4.0 on CPU (2 threads)",
// "vulkan 0: llvmpipe (...) (CPU), Vulkan 1.3.230, maxStorageBufferRange 128 MiB, ..." (or
// "vulkan: none (why)"), and last "auto: vulkan 0 (name)" or "auto: cpu (why)".
std::vector<std::string> formatDeviceListing(const DeviceListing &listing);

// Which engine produced the result of the last compute() and whether that was a fallback,
// so the CLI and the GUI can say "computed on cpu (fell back from vulkan)".
struct ComputeRun {
    std::string backend; // "vulkan" or "cpu"
    std::string device;
    bool fellBack = false;
};

// Runs a primary backend (Vulkan) and, where it fails on a valid problem, the CPU engine:
// - for that one compute where the problem does not fit the device (TooLarge, OutOfMemory,
//   Unsupported, ...): the next problem goes to the GPU again;
// - for that compute and every later one where the device is gone (DeviceLost) or failed in
//   a way that fits no kind (Internal).
// Each fallback leaves a notice that takeNotice() hands out once.
class FallbackBackend final : public AttentionBackend
{
public:
    explicit FallbackBackend(std::unique_ptr<AttentionBackend> primary);
    ~FallbackBackend() override;

    // The active backend's: "vulkan" while the GPU is in use, "cpu" once it was given up.
    std::string name() const override;
    std::string deviceName() const override;
    Result<AttentionTrace> compute(const AttentionProblem &problem) override;
    // The pooled path, with the same fallback rules as compute().
    Result<PooledResult> computePooled(const AttentionProblem &problem, const PoolOptions &options) override;
    // The pooled form from queries and keys, with the same fallback rules.
    Result<PooledResult> computePooledQk(const QkLayer &layer, const PoolOptions &options) override;
    bool usesCpuForPooled() const override { return m_primary ? m_primary->usesCpuForPooled() : true; }
    // The GPU backend's forward engine while it is in use. Where it fails for its device, the
    // model's layer loop runs through this backend, whose compute() then falls back.
    ForwardEngine *forwardEngine() override { return m_primary ? m_primary->forwardEngine() : nullptr; }
    // The GPU backend's while it is in use; nullopt once the CPU took over.
    std::optional<DeviceTransfers> transfers() const override
    {
        return m_primary ? m_primary->transfers() : std::nullopt;
    }
    // Handed to the GPU backend and to the CPU engine alike; a cancelled compute is not a
    // failure and never falls back.
    void setComputeControl(ComputeControl control) override;

    // The GPU was given up for the rest of the session.
    bool fellBack() const { return m_primary == nullptr; }
    // The primary backend while it is in use, else null (tests read its statistics).
    const AttentionBackend *primary() const { return m_primary.get(); }
    // Which engine answered the last compute() (see lastComputeRun).
    ComputeRun lastRun() const;
    // The pending notice ("Vulkan ...: computing on the CPU from now on"), then empty.
    std::string takeNotice();
    // The same, with its code and arguments for translation (an empty message: none).
    Error takeNoticeError();

private:
    AttentionBackend &cpu();
    // After the primary failed on a valid problem: the notice, and whether the GPU is given up.
    void noteFailure(const Error &error);

    std::unique_ptr<AttentionBackend> m_primary;
    std::unique_ptr<AttentionBackend> m_cpu;
    Error m_notice;
    bool m_lastFellBack = false;
};

// A notice a backend produced while computing (a FallbackBackend that fell back, for one
// problem or for good), once; empty for any other backend. Callers print it after compute().
std::string takeBackendNotice(AttentionBackend &backend);
// The same notice with its code and arguments, for translation (an empty message: none).
Error takeBackendNoticeError(AttentionBackend &backend);

// For a FallbackBackend its lastRun(); for any other backend its own name and device.
ComputeRun lastComputeRun(const AttentionBackend &backend);

} // namespace attnscope
