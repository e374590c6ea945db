#pragma once

#include <cstdint>
#include <span>

namespace attnscope::shaders {

// SPIR-V of shaders/*.comp, compiled by glslc when the project builds.

// gemm.comp: strided, batched, tiled C = alpha·A·B (+ bias) (+ C), soft-capped on request.
std::span<const std::uint32_t> gemmSpirv();
// softmax.comp: masked stable row softmax (sinks included), one workgroup per (row, head).
std::span<const std::uint32_t> softmaxSpirv();
// rope.comp: RoPE's rotation of every head's (i, i + dK/2) pairs by cos/sin tables.
std::span<const std::uint32_t> ropeSpirv();
// headnorm.comp: per-head RMSNorm of q or k (Qwen 3, Gemma 3), in place, before RoPE.
std::span<const std::uint32_t> headNormSpirv();
// pooled_rows.comp: per (query row, head) max, normaliser, entropy and context row.
std::span<const std::uint32_t> pooledRowsSpirv();
// pooled_cells.comp: per (key bin, query bin, head) the max or sum of the exact weights.
std::span<const std::uint32_t> pooledCellsSpirv();
// rownorm.comp: a model's LayerNorm or RMSNorm of whole rows, one workgroup per row.
std::span<const std::uint32_t> rowNormSpirv();
// elementwise.comp: residual sums, activations and the gated MLP's product, in place.
std::span<const std::uint32_t> elementwiseSpirv();
// embed.comp: token (and position, token type) embeddings gathered by id, scaled.
std::span<const std::uint32_t> embedSpirv();

} // namespace attnscope::shaders
