#pragma once

// Splits one strided, batched pass into dispatches that respect the device's limits:
// every buffer binding at most maxStorageBufferRange bytes and aligned to
// minStorageBufferOffsetAlignment, and at most maxComputeWorkGroupCount groups per axis.
// Pure arithmetic, no Vulkan calls, so it is tested on its own with made-up limits.

#include "core/Result.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscope::vk {

inline constexpr int kMaxPlanDims = 4;

// One loop dimension of a pass (a GEMM has k, head, m and n).
struct PlanDim {
    std::uint64_t size = 1;
    // Elements one workgroup covers along this dimension; 0 when it is no dispatch axis.
    std::uint64_t tile = 0;
    std::uint32_t maxGroups = 0; // the device's limit for that axis (when tile > 0)
    // Indices come in runs of `group` (the query heads that read one key/value head): a chunk
    // holds whole runs or lies inside one, so i / group within a chunk is the run relative to
    // the chunk's first, which operands indexed per run (PlanOperand::perGroup) rely on.
    std::uint64_t group = 1;
};

// A buffer a pass reads or writes: element (i0, i1, ...) lives at
// offset + sum(i_d * stride[d]), plus `extent` contiguous elements the pass touches beyond
// the strided ones (a whole row, for the softmax; 1 otherwise).
struct PlanOperand {
    std::string name; // for messages: "weights.q"
    std::uint64_t offset = 0;
    std::array<std::uint64_t, kMaxPlanDims> stride{};
    std::uint64_t extent = 1;
    std::uint64_t bufferBytes = 0; // the whole buffer, so a range never runs past it
    // True along a dimension where the operand is indexed by the run, i / PlanDim::group, not by
    // i (K and V read by grouped query heads): stride[d] then steps from one run to the next.
    std::array<bool, kMaxPlanDims> perGroup{};
    // Bytes per element: 4 (floats, uint32 words) or 2 (a weight kept as float16 or bfloat16,
    // read two to a 32-bit word: its ranges are rounded up to whole words).
    std::uint64_t elementBytes = 4;
};

// Where one operand is bound for one chunk: the descriptor range, and the element within
// it where the chunk's origin lies (for the push constants).
struct PlanBinding {
    std::uint64_t offsetBytes = 0;
    std::uint64_t rangeBytes = 0;
    std::uint64_t localOffset = 0; // in the operand's elements
};

struct PlanChunk {
    std::array<std::uint64_t, kMaxPlanDims> start{};
    std::array<std::uint64_t, kMaxPlanDims> count{};
    std::vector<PlanBinding> bindings; // one per operand, in order
};

struct BindingLimits {
    std::uint64_t maxRangeBytes = 0;
    std::uint64_t alignment = 1;
};

// Chunks in row-major order of the dimensions (dims[0] outermost), so a pass that must
// accumulate over dims[0] (a split GEMM depth) finds each step's chunks together.
// Fails with a message naming the pass and the operand when even a single element row
// cannot be bound.
Result<std::vector<PlanChunk>> planChunks(const std::string &pass, const std::vector<PlanDim> &dims,
                                          const std::vector<PlanOperand> &operands, const BindingLimits &limits);

} // namespace attnscope::vk
