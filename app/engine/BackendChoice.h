#pragma once

#include "core/AttentionBackend.h"
#include "core/Result.h"
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

// Creates the backend for a request.
// - Cpu: the Eigen engine.
// - Vulkan: the chosen Vulkan device, or an Error saying why none works.
// - Auto: Vulkan on a real GPU (discrete, integrated or virtual), wrapped in a
//   FallbackBackend; the Eigen engine with a notice where there is no Vulkan, where it fails
//   to start, or where the only device is a CPU one (lavapipe is slower than Eigen) and no
//   device was named.
Result<BackendSelection> createBackend(BackendRequest request, const BackendOptions &options = {});

// One line per available compute device: "cpu: Eigen 3.4.0 on CPU (2 threads)",
// "vulkan 0: llvmpipe (...) (CPU), Vulkan 1.3.230, maxStorageBufferRange 128 MiB, ...",
// and last what Auto would pick and why.
std::vector<std::string> describeDevices();

// Runs a primary backend (Vulkan) and, after its first failure on a valid problem, the CPU
// engine for that compute and every later one. The reason is kept as a notice that
// takeNotice() hands out once, so the user is told exactly once.
class FallbackBackend final : public AttentionBackend
{
public:
    explicit FallbackBackend(std::unique_ptr<AttentionBackend> primary);
    ~FallbackBackend() override;

    // The active backend's: "vulkan" until a failure, "cpu" after.
    std::string name() const override;
    std::string deviceName() const override;
    Result<AttentionTrace> compute(const AttentionProblem &problem) override;

    bool fellBack() const { return m_primary == nullptr; }
    // The pending notice ("Vulkan failed ...: computing on the CPU from now on"), then empty.
    std::string takeNotice();

private:
    std::unique_ptr<AttentionBackend> m_primary;
    std::unique_ptr<AttentionBackend> m_cpu;
    std::string m_notice;
};

// A notice a backend produced while computing (a FallbackBackend that fell back), once;
// empty for any other backend. Callers print it after compute().
std::string takeBackendNotice(AttentionBackend &backend);

} // namespace attnscope
