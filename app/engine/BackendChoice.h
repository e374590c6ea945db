#pragma once

#include "core/AttentionBackend.h"
#include "core/Result.h"

#include <memory>
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

// Creates the backend for a request. Auto prefers a Vulkan device that is a real GPU and
// falls back to the CPU with a notice; Vulkan fails with an Error where no device works.
Result<BackendSelection> createBackend(BackendRequest request);

// One line per available compute device: "cpu: Eigen 3.4.0 on CPU (2 threads)", ...
std::vector<std::string> describeDevices();

} // namespace attnscope
