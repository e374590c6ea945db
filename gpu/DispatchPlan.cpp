#include "gpu/DispatchPlan.h"

#include "core/ErrorCode.h"

#include <algorithm>

namespace attnscope::vk {

namespace {

constexpr std::uint64_t kWord = 4; // shaders read 32-bit words: floats, uints, or two 16-bit values

// Whether a chunk touching `spanElements` fits a binding: its elements, plus what rounding its
// start down to the alignment can cost (up to alignment - elementBytes bytes), plus what rounding
// its end up to a whole word can (kWord - elementBytes).
bool fits(const PlanOperand &op, std::uint64_t spanElements, const BindingLimits &limits)
{
    const std::uint64_t slack = std::max(limits.alignment, op.elementBytes) - op.elementBytes + kWord - op.elementBytes;
    return spanElements <= (limits.maxRangeBytes - std::min(limits.maxRangeBytes, slack)) / op.elementBytes;
}

// The index of element i along dimension d as the operand sees it.
std::uint64_t operandIndex(const PlanOperand &op, const std::vector<PlanDim> &dims, size_t d, std::uint64_t i)
{
    return op.perGroup[d] ? i / dims[d].group : i;
}

// Elements one chunk of `count` touches. Chunks are aligned to their groups (alignToGroup), so
// count - 1 indices past a chunk's first reach (count - 1) / group runs further.
std::uint64_t span(const PlanOperand &op, const std::vector<PlanDim> &dims,
                   const std::array<std::uint64_t, kMaxPlanDims> &count)
{
    std::uint64_t s = op.extent;
    for (size_t d = 0; d < dims.size(); ++d)
        s += operandIndex(op, dims, d, count[d] - 1) * op.stride[d];
    return s;
}

// The largest count <= `count` that is a multiple of the group or divides it, so every chunk
// (they start at multiples of the count) holds whole groups or lies inside one.
std::uint64_t alignToGroup(std::uint64_t count, std::uint64_t group)
{
    if (group <= 1)
        return count;
    if (count >= group)
        return count / group * group;
    while (group % count != 0)
        --count;
    return count;
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b)
{
    return (a + b - 1) / b;
}

} // namespace

Result<std::vector<PlanChunk>> planChunks(const std::string &pass, const std::vector<PlanDim> &dims,
                                          const std::vector<PlanOperand> &operands, const BindingLimits &limits)
{
    const size_t nd = dims.size();
    if (nd == 0 || nd > size_t(kMaxPlanDims))
        return Error{pass + ": bad plan dimensions", ErrorKind::Internal};
    // A range start is rounded down to the alignment, which can cost up to alignment - 4 bytes.
    if (limits.maxRangeBytes <= std::max(limits.alignment, kWord))
        return codedError("vulkan.plan.rangeTooSmall", {pass}, ErrorKind::Unsupported);

    std::array<std::uint64_t, kMaxPlanDims> count{};
    count.fill(1);
    for (size_t d = 0; d < nd; ++d) {
        if (dims[d].size == 0)
            return std::vector<PlanChunk>{};
        count[d] = dims[d].size;
        if (dims[d].tile > 0) {
            if (dims[d].maxGroups == 0)
                return codedError("vulkan.plan.noWorkgroups", {pass}, ErrorKind::Unsupported);
            count[d] = std::min(count[d], std::uint64_t(dims[d].maxGroups) * dims[d].tile);
        }
        count[d] = alignToGroup(count[d], dims[d].group);
    }
    for (;;) {
        const PlanOperand *over = nullptr;
        for (const auto &op : operands)
            if (!fits(op, span(op, dims, count), limits)) {
                over = &op;
                break;
            }
        if (!over)
            break;
        // Halve the dimension that contributes most to this operand's range.
        size_t worst = nd;
        std::uint64_t worstContribution = 0;
        for (size_t d = 0; d < nd; ++d) {
            const std::uint64_t c = operandIndex(*over, dims, d, count[d] - 1) * over->stride[d];
            if (count[d] > 1 && c > worstContribution) {
                worst = d;
                worstContribution = c;
            }
        }
        if (worst == nd)
            return codedError("vulkan.tooLarge.binding",
                              {pass + ": " + over->name, std::to_string(over->extent * over->elementBytes) + " bytes",
                               std::to_string(limits.maxRangeBytes) + " bytes"},
                              ErrorKind::TooLarge);
        count[worst] = ceilDiv(count[worst], 2);
        // Keep whole tiles so chunks do not leave ragged edges in the middle of a dimension.
        if (dims[worst].tile > 1 && count[worst] > dims[worst].tile)
            count[worst] = count[worst] / dims[worst].tile * dims[worst].tile;
        count[worst] = alignToGroup(count[worst], dims[worst].group);
    }

    std::vector<PlanChunk> chunks;
    std::array<std::uint64_t, kMaxPlanDims> start{};
    for (;;) {
        PlanChunk chunk;
        chunk.start = start;
        chunk.count.fill(1);
        for (size_t d = 0; d < nd; ++d)
            chunk.count[d] = std::min(count[d], dims[d].size - start[d]);
        for (const auto &op : operands) {
            std::uint64_t first = op.offset;
            for (size_t d = 0; d < nd; ++d)
                first += operandIndex(op, dims, d, start[d]) * op.stride[d];
            const std::uint64_t firstByte = first * op.elementBytes;
            PlanBinding b;
            b.offsetBytes = firstByte / limits.alignment * limits.alignment;
            b.localOffset = (firstByte - b.offsetBytes) / op.elementBytes;
            const std::uint64_t touched = firstByte - b.offsetBytes + span(op, dims, chunk.count) * op.elementBytes;
            b.rangeBytes = std::min((touched + kWord - 1) / kWord * kWord, op.bufferBytes - b.offsetBytes);
            chunk.bindings.push_back(b);
        }
        chunks.push_back(std::move(chunk));
        // Advance the innermost dimension first.
        size_t d = nd;
        while (d > 0) {
            --d;
            start[d] += count[d];
            if (start[d] < dims[d].size)
                break;
            start[d] = 0;
            if (d == 0)
                return chunks;
        }
    }
}

} // namespace attnscope::vk
