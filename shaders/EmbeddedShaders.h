#pragma once

#include <cstdint>
#include <span>

namespace attnscope::shaders {

// SPIR-V of shaders/*.comp, compiled by glslc when the project builds.

// gemm.comp: strided, batched, tiled C = alpha·A·B (+ bias) (+ C).
std::span<const std::uint32_t> gemmSpirv();
// softmax.comp: masked stable row softmax, one workgroup per (row, head).
std::span<const std::uint32_t> softmaxSpirv();
// pooled_rows.comp: per (query row, head) max, normaliser, entropy and context row.
std::span<const std::uint32_t> pooledRowsSpirv();
// pooled_cells.comp: per (key bin, query bin, head) the max or sum of the exact weights.
std::span<const std::uint32_t> pooledCellsSpirv();

} // namespace attnscope::shaders
