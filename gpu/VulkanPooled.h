#pragma once

// The pooled long-sequence path (design.md, `compute --pool N`) on Vulkan: the projections by
// gemm.comp (with per-head q/k norms normalised in place by headnorm.comp, then under RoPE rotated
// in place by rope.comp), then per chunk of query rows
// shaders/pooled_rows.comp (row max and normaliser by online softmax, sinks included, entropy,
// context row) and shaders/pooled_cells.comp (each pooled cell's max or sum of the exact
// weights), then the output projection. Scores are recomputed, never stored: the device holds
// O(T·d + N²·H) besides a custom mask's bits. From a Q/K layer (core/attention/QkAttention.h)
// the same row and cell passes run on q and k uploaded into the buffers the projections would
// fill: no projection, norm, RoPE, value or output pass (PooledSource says what differs).
//
// Watchdogs (Windows TDR, Linux job timeouts) kill a submission that runs for seconds, so the
// work is cut into chunks of query rows of bounded cost, each its own submission; a small
// problem is one submission.

#include "core/attention/PooledAttention.h"
#include "core/attention/QkAttention.h"
#include "gpu/VulkanEngineShared.h"

#include <array>
#include <memory>
#include <vector>

namespace attnscope::vk {

// What the backend shares with the pooled engine: besides its device, pipelines and limits, its
// command buffer and descriptor arena.
struct PooledShared : EngineShared {
    CommandContext &commands;
    DescriptorArena &descriptors;
    // Multiply-adds one submission may hold (0: kDefaultPooledWork).
    std::uint64_t workPerSubmission = 0;
};

// Storage buffers the pooled passes bind at most (the row pass: 9, and the sinks).
inline constexpr std::uint32_t kPooledBindings = 10;

// About 2^33 multiply-adds: milliseconds on a discrete GPU, well under a second on an
// integrated one, so no submission comes near a 2 s watchdog.
inline constexpr std::uint64_t kDefaultPooledWork = std::uint64_t(1) << 33;

struct PooledSource; // gpu/VulkanPooled.cpp

struct PooledRunStats {
    std::uint64_t submissions = 0;
    std::uint64_t uploaded = 0, readBack = 0; // bytes (see VulkanBackend::transfers)
    std::uint64_t dispatches = 0;
    bool staging = false;
};

class PooledEngine
{
public:
    static Result<std::unique_ptr<PooledEngine>> create(const Device &device);
    ~PooledEngine();

    // Runs one pooled request on a validated problem. Fails with TooLarge (naming the bytes)
    // where a buffer exceeds the device's allocation or binding limits, so callers can
    // compute it on the CPU instead; with DeviceLost where a submission failed or timed out
    // (then nothing it uses may be freed before the device is idle).
    Result<PooledResult> run(const PooledShared &shared, const AttentionProblem &problem, const PoolOptions &options,
                             PooledRunStats &stats);
    // The same from one validated layer's q (Tq x H·hd) and k (Tk x KV·hd): pooled cells, head
    // mean and entropies, no output. Positions other than the row indices are compared on the
    // device (rebased: TooLarge where they span more than 2^32).
    Result<PooledResult> runQk(const PooledShared &shared, const QkLayer &layer, const PoolOptions &options,
                               PooledRunStats &stats);

    enum Slot {
        Xq,
        Xkv,
        Xv, // a separate value input (cross attention with three inputs)
        Wq,
        Wk,
        Wv,
        Wo,
        Bq,
        Bk,
        Bv,
        Bo,
        Sinks,
        RopeQ,
        RopeK,
        QNorm,
        KNorm,
        PadBits,
        CustomBits,
        RowStart,
        KeyStart,
        Positions, // uploaded (a Q/K layer uploads Q, K as well)
        Q,
        K,
        V,
        Stats,
        Context,
        Entropy,
        Pooled,
        Output, // on the device
        SlotCount
    };

private:
    PooledEngine() = default;

    struct Tensor {
        Buffer device;
        Buffer staging;
        std::uint64_t bytes = 0;
    };
    Status allocate(const PooledShared &shared, const std::array<std::uint64_t, SlotCount> &bytes,
                    const std::array<bool, SlotCount> &upload);
    // The row and cell passes over whatever the source put on the device.
    Result<PooledResult> execute(const PooledShared &shared, const PooledSource &source, const PoolOptions &options,
                                 PooledRunStats &stats);

    std::unique_ptr<ComputePipeline> m_rows, m_cells;
    std::array<Tensor, SlotCount> m_tensors;
    std::array<std::uint64_t, SlotCount> m_bytes{};
    std::array<bool, SlotCount> m_upload{};
    bool m_staged = false;
};

} // namespace attnscope::vk
