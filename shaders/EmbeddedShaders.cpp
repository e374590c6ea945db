#include "shaders/EmbeddedShaders.h"

namespace attnscope::shaders {

namespace {
// glslc -mfmt=num writes a comma-separated list of 32-bit words.
constexpr std::uint32_t kGemm[] = {
#include "gemm.spv.inc"
};
constexpr std::uint32_t kSoftmax[] = {
#include "softmax.spv.inc"
};
constexpr std::uint32_t kRope[] = {
#include "rope.spv.inc"
};
constexpr std::uint32_t kHeadNorm[] = {
#include "headnorm.spv.inc"
};
constexpr std::uint32_t kPooledRows[] = {
#include "pooled_rows.spv.inc"
};
constexpr std::uint32_t kPooledCells[] = {
#include "pooled_cells.spv.inc"
};
constexpr std::uint32_t kRowNorm[] = {
#include "rownorm.spv.inc"
};
constexpr std::uint32_t kElementwise[] = {
#include "elementwise.spv.inc"
};
constexpr std::uint32_t kEmbed[] = {
#include "embed.spv.inc"
};
} // namespace

std::span<const std::uint32_t> gemmSpirv()
{
    return kGemm;
}
std::span<const std::uint32_t> softmaxSpirv()
{
    return kSoftmax;
}
std::span<const std::uint32_t> ropeSpirv()
{
    return kRope;
}

std::span<const std::uint32_t> headNormSpirv()
{
    return kHeadNorm;
}

std::span<const std::uint32_t> pooledRowsSpirv()
{
    return kPooledRows;
}
std::span<const std::uint32_t> pooledCellsSpirv()
{
    return kPooledCells;
}
std::span<const std::uint32_t> rowNormSpirv()
{
    return kRowNorm;
}
std::span<const std::uint32_t> elementwiseSpirv()
{
    return kElementwise;
}
std::span<const std::uint32_t> embedSpirv()
{
    return kEmbed;
}

} // namespace attnscope::shaders
