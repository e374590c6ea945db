#pragma once

// Records the attention passes (shaders/gemm.comp, shaders/softmax.comp, shaders/rope.comp,
// shaders/headnorm.comp) into
// a command buffer, split into as many dispatches as the device's limits require (see DispatchPlan).

#include "core/attention/AttentionProblem.h"
#include "core/attention/HeadLayout.h"
#include "gpu/DispatchPlan.h"
#include "gpu/VulkanResources.h"

#include <cstdint>
#include <vector>

namespace attnscope::vk {

// What a buffer's elements are: floats, or a model's weight kept as stored (16-bit values, two
// to a word, converted in the shader).
enum class ElementType { F32, F16, BF16 };

inline std::uint64_t elementBytes(ElementType t)
{
    return t == ElementType::F32 ? 4 : 2;
}

// A matrix inside a buffer: element (h, r, c) at offset + h*headStride + r*rowStride + c*colStride
// (in elements: floats, or for a B of 16-bit type, its stored values).
struct StridedMatrix {
    const Buffer *buffer = nullptr;
    std::uint64_t offset = 0, rowStride = 0, colStride = 1, headStride = 0;
};

// C[h] = alpha * A[h]·B[h / group] (+ bias), with A[h] M x K, B[g] K x N, C[h] M x N (colStride 1):
// B's headStride steps from one of its heads to the next, and `group` heads of A share one
// (grouped-query attention: K and V have a head per group of query heads).
struct GemmPass {
    std::string name; // for messages: "projection Q"
    std::uint64_t m = 0, n = 0, k = 0, heads = 1;
    std::uint64_t group = 1; // divides heads
    StridedMatrix a, b, c;
    const Buffer *bias = nullptr; // N floats, or none
    float alpha = 1.0f;
    // c > 0: every C element becomes c·tanh(C / c) once complete (soft-capped scores).
    float softcap = 0.0f;
    // C += alpha·A·B (+ bias) from the first depth step on: a residual sum fused into the product.
    bool accumulate = false;
    // B's elements (A and C are floats): a model's weight may stay float16 or bfloat16.
    ElementType bType = ElementType::F32;
};

// Y = X·W (+ b) for one input: X rows x inDim, W inDim x outDim, Y rows x outDim, all dense.
struct ProjectionPass {
    const char *name;
    const Buffer *x;
    std::uint64_t rows, inDim, outDim;
    const Buffer *w, *bias, *out; // bias: outDim floats, or null
};

// weights[h](i, :) = masked softmax of scores[h](i, :), both [heads][rows][keys].
struct SoftmaxPass {
    std::uint64_t rows = 0, keys = 0, heads = 0;
    const Buffer *scores = nullptr, *weights = nullptr;
    const Buffer *maskBits = nullptr; // rows x ceil(keys/32) words, bit j%32 of word j/32 = allowed
    const Buffer *sinks = nullptr;    // one logit per head joining each row's softmax, or none
    bool negLargeFill = false;
};

// RoPE (core/attention/Rope.h): dst = src with every head's pairs (i, i + dK/2) of row r rotated
// by table row r. src and dst are rows x heads*dK; the table is rows x dK/2 pairs of (cos, sin),
// core's ropeTable interleaved. src and dst may be the same buffer (rotation in place).
struct RopePass {
    const char *name;
    std::uint64_t rows = 0, heads = 0, headDim = 0;
    const Buffer *src = nullptr, *dst = nullptr, *table = nullptr;
};

// The per-head q/k RMSNorm (core/attention/Rope.h applyHeadNorm), in place: every head slice
// of dK values of every row of x (rows x heads*dK) becomes x·weight / sqrt(mean(x²) + eps).
// Recorded after the projection and before RoPE. A binding must hold one whole slice.
struct HeadNormPass {
    const char *name;
    std::uint64_t rows = 0, heads = 0, headDim = 0;
    const Buffer *x = nullptr, *weight = nullptr; // weight: dK floats
    float eps = 0.0f;
};

// RopePass's table for rows at `positions`: core's ropeTable (so the GPU's angles are the CPU's),
// with each pair's cos and sin side by side.
std::vector<float> ropeTableForGpu(const std::vector<std::int64_t> &positions, const RopeSpec &rope, int headDimQK);

// The shaders' interfaces, for creating their pipelines: storage buffers bound and push-constant
// bytes (the structs in VulkanPasses.cpp mirror the push_constant blocks).
inline constexpr std::uint32_t kGemmBindings = 4, kGemmPushBytes = 76;
inline constexpr std::uint32_t kSoftmaxBindings = 4, kSoftmaxPushBytes = 40;
inline constexpr std::uint32_t kRopeBindings = 3, kRopePushBytes = 32;
inline constexpr std::uint32_t kRopeWorkgroup = 64; // pairs per workgroup: shaders/rope.comp's WG
inline constexpr std::uint32_t kHeadNormBindings = 2, kHeadNormPushBytes = 28;
inline constexpr std::uint32_t kHeadNormWorkgroup = 64; // rows per workgroup: shaders/headnorm.comp's WG

struct PassLimits {
    BindingLimits binding;
    std::uint32_t maxGroups[3] = {65535, 65535, 65535};
};

// The GEMM tiling, chosen from the device's limits and fed to the shader as
// specialization constants.
struct GemmTiling {
    std::uint32_t wgX = 16, wgY = 16, rm = 4, rn = 4, bk = 16;
    std::uint32_t tileM() const { return wgY * rm; }
    std::uint32_t tileN() const { return wgX * rn; }
};

// The buffers one attention reads and writes: the backend's per-problem set, or a model
// forward's arena (gpu/VulkanForward.h). Null where the problem has no such tensor (a bias,
// W_O, sinks, q/k norms; without RoPE qPre, kPre and the tables).
struct AttentionBuffers {
    const Buffer *xq = nullptr, *xkv = nullptr, *xv = nullptr;
    const Buffer *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
    const Buffer *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
    const Buffer *maskBits = nullptr, *sinks = nullptr, *ropeQ = nullptr, *ropeK = nullptr;
    const Buffer *qNorm = nullptr, *kNorm = nullptr;
    const Buffer *qPre = nullptr, *kPre = nullptr, *q = nullptr, *k = nullptr, *v = nullptr;
    const Buffer *scores = nullptr, *weights = nullptr, *context = nullptr, *output = nullptr;
    // output += context·W_O (+ b): a model's residual sum, fused into the output projection.
    bool outputAccumulates = false;
};

// The sizes and factors of one attention, as its problem gives them.
struct AttentionShape {
    HeadLayout layout;
    std::uint64_t tq = 0, tk = 0, dq = 0, dkv = 0, dvIn = 0, dOut = 0;
    float scale = 1.0f, softcap = 0.0f, qkNormEps = 0.0f;
    bool rope = false, negLargeFill = false;

    static AttentionShape of(const AttentionProblem &problem);
};

class PassRecorder;
// Records one attention: projections, per-head q/k norms, RoPE, scaled (soft-capped) scores,
// masked softmax, weights·V into the context columns and the output projection, with the
// barriers between them (none before the first pass, none after the last).
Status recordAttention(PassRecorder &rec, const AttentionBuffers &b, const AttentionShape &s);

class PassRecorder
{
public:
    PassRecorder(const Device &device, CommandContext &commands, DescriptorArena &descriptors,
                 const ComputePipeline &gemm, const GemmTiling &tiling, const ComputePipeline &softmax,
                 const ComputePipeline &rope, const ComputePipeline &headNorm, const Buffer &placeholder,
                 const PassLimits &limits)
        : m_device(device), m_commands(commands), m_descriptors(descriptors), m_gemm(gemm), m_tiling(tiling),
          m_softmax(softmax), m_rope(rope), m_headNorm(headNorm), m_placeholder(placeholder), m_limits(limits)
    {
    }

    Status gemm(const GemmPass &pass);
    Status projection(const ProjectionPass &pass);
    Status softmax(const SoftmaxPass &pass);
    Status rope(const RopePass &pass);
    Status headNorm(const HeadNormPass &pass);
    // Makes every shader write so far visible to every later shader read or write.
    void computeBarrier();

    int dispatches() const { return m_dispatches; }

private:
    const Device &m_device;
    CommandContext &m_commands;
    DescriptorArena &m_descriptors;
    const ComputePipeline &m_gemm;
    GemmTiling m_tiling;
    const ComputePipeline &m_softmax;
    const ComputePipeline &m_rope;
    const ComputePipeline &m_headNorm;
    const Buffer &m_placeholder; // bound where a pass has no bias (or no sinks)
    PassLimits m_limits;
    int m_dispatches = 0;
};

} // namespace attnscope::vk
