#pragma once

#include <cstdint>
#include <span>

namespace attnscope::shaders {

// SPIR-V of shaders/*.comp, compiled by glslc when the project builds.

// gemm.comp: strided, batched, tiled C = alpha·A·B (+ bias) (+ C).
std::span<const std::uint32_t> gemmSpirv();
// softmax.comp: masked stable row softmax, one workgroup per (row, head).
std::span<const std::uint32_t> softmaxSpirv();

} // namespace attnscope::shaders
