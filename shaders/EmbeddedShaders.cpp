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
} // namespace

std::span<const std::uint32_t> gemmSpirv()
{
    return kGemm;
}
std::span<const std::uint32_t> softmaxSpirv()
{
    return kSoftmax;
}

} // namespace attnscope::shaders
