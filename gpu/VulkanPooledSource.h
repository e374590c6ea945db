#pragma once

// Inside the pooled engine (gpu/VulkanPooled.cpp): what a request brings to the row and cell
// passes, built from a problem or from a Q/K layer (gpu/VulkanPooledSources.cpp).

#include "gpu/VulkanPooled.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

namespace attnscope::vk {

// The flags word of shaders/pooled_common.glsl.
inline constexpr std::uint32_t kCausal = 1, kPadding = 2, kCustom = 4, kNegLarge = 8, kMean = 16, kCellPerThread = 32,
                               kSoftcap = 64, kSinks = 128, kPositions = 256;

// What one pooled request brings to the row and cell passes: its shape and mask, the buffers
// the host fills, and how Q and K reach the device. The one difference between a problem
// (inputs and weights, projected on the device) and a Q/K layer (q and k uploaded as they are).
struct PooledSource {
    using Slot = PooledEngine::Slot;
    std::uint64_t tq = 0, tk = 0, heads = 0, dk = 0, dv = 0, qkw = 0, vw = 0, group = 1;
    float scale = 1.0f;
    std::optional<float> softcap;
    std::uint32_t maskFlags = 0; // kCausal, kPadding, kCustom, kNegLarge, kSinks, kPositions
    std::uint64_t window = 0;    // in the shaders' terms: 0 none
    // The source's own slots (the passes' bins, statistics, entropies and cells are added).
    std::array<std::uint64_t, PooledEngine::SlotCount> bytes{};
    std::array<bool, PooledEngine::SlotCount> upload{}; // written by the host before the passes
    // Writes every uploaded slot the source has (`host` gives its mapped memory).
    std::function<void(const std::function<void *(Slot)> &host)> fill;
    // Records what makes Q, K and V on the device from the uploads, in the first submission.
    std::function<Status(PassRecorder &, const std::function<const Buffer &(Slot)> &device)> prepare;
    // Records what follows the last cell pass for rows [first, first + count) (the output projection).
    std::function<Status(PassRecorder &, const std::function<const Buffer &(Slot)> &device, std::uint64_t first,
                         std::uint64_t count)>
        finish;
    // The output of rows [first, first + count) from the read-back slots; null: none.
    std::function<MatrixF(const std::function<const float *(Slot)> &view, Eigen::Index first, Eigen::Index count)>
        output;
};

} // namespace attnscope::vk
