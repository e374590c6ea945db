#include "gpu/VulkanPasses.h"

#include "core/attention/Rope.h"

namespace attnscope::vk {

namespace {

// Mirrors the push_constant blocks of shaders/gemm.comp, shaders/softmax.comp, shaders/rope.comp
// and shaders/headnorm.comp.
struct GemmPush {
    std::uint32_t m, n, k;
    std::uint32_t aOff, aRs, aCs, aHs;
    std::uint32_t bOff, bRs, bCs, bHs;
    std::uint32_t cOff, cRs, cHs;
    std::uint32_t biasOff;
    std::uint32_t flags;
    float alpha;
    std::uint32_t group;
    float softcap;
};
static_assert(sizeof(GemmPush) == kGemmPushBytes);

struct SoftmaxPush {
    std::uint32_t n;
    std::uint32_t sOff, wOff;
    std::uint32_t rowStride, headStride;
    std::uint32_t mOff, mRs;
    std::uint32_t fill;
    std::uint32_t sinkOff, hasSinks;
};
static_assert(sizeof(SoftmaxPush) == kSoftmaxPushBytes);

struct RopePush {
    std::uint32_t pairs, halfDim;
    std::uint32_t srcOff, dstOff, tabOff;
    std::uint32_t rowStride, headStride, tabRowStride;
};
static_assert(sizeof(RopePush) == kRopePushBytes);

struct HeadNormPush {
    std::uint32_t rows, headDim;
    std::uint32_t xOff, wOff;
    std::uint32_t rowStride, headStride;
    float eps;
};
static_assert(sizeof(HeadNormPush) == kHeadNormPushBytes);

constexpr std::uint32_t kFlagBias = 1, kFlagAccumulate = 2, kFlagSoftcap = 4, kFlagBHalf = 8,
                        kFlagBBF16 = 16; // shaders/common.glsl
constexpr std::uint32_t kFillNegInf = 0, kFillNegLarge = 1;

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b)
{
    return (a + b - 1) / b;
}

// Strides inside one binding never exceed maxStorageBufferRange / 4, so they fit 32 bits;
// this refuses the rare device whose range would allow more.
bool fits32(std::uint64_t v)
{
    return v <= 0xffffffffull;
}

} // namespace

std::vector<float> ropeTableForGpu(const std::vector<std::int64_t> &positions, const RopeSpec &rope, int headDimQK)
{
    const RopeTable t = ropeTable(positions, rope, headDimQK);
    std::vector<float> out(size_t(t.cos.size()) * 2);
    for (Eigen::Index r = 0; r < t.cos.rows(); ++r)
        for (Eigen::Index i = 0; i < t.cos.cols(); ++i) {
            const size_t at = size_t(r * t.cos.cols() + i) * 2;
            out[at] = t.cos(r, i);
            out[at + 1] = t.sin(r, i);
        }
    return out;
}

AttentionShape AttentionShape::of(const AttentionProblem &p)
{
    AttentionShape s;
    s.layout = HeadLayout::of(p.spec);
    s.tq = std::uint64_t(p.tq());
    s.tk = std::uint64_t(p.tk());
    s.dq = std::uint64_t(p.dq());
    s.dkv = std::uint64_t(p.dkv());
    s.dvIn = std::uint64_t(p.dvIn());
    s.dOut = std::uint64_t(p.dOut());
    s.scale = float(p.spec.scale());
    s.softcap = p.spec.softcap ? float(*p.spec.softcap) : 0.0f;
    s.qkNormEps = float(p.spec.qkNormEps);
    s.rope = p.spec.rope.has_value();
    s.negLargeFill = p.spec.maskFill == MaskFill::NegLarge;
    return s;
}

Status recordAttention(PassRecorder &rec, const AttentionBuffers &b, const AttentionShape &s)
{
    const HeadLayout &layout = s.layout;
    const std::uint64_t tq = s.tq, tk = s.tk, heads = std::uint64_t(layout.heads),
                        kvHeads = std::uint64_t(layout.kvHeads), group = std::uint64_t(layout.groupSize()),
                        dk = std::uint64_t(layout.headDimQK), dv = std::uint64_t(layout.headDimV),
                        qkw = std::uint64_t(layout.queryWidth()), kw = std::uint64_t(layout.keyWidth()),
                        vw = std::uint64_t(layout.contextWidth()), kvw = std::uint64_t(layout.valueWidth());

    // Projections: Q = Xq·Wq + bq, K = Xkv·Wk + bk, V = Xv·Wv + bv (independent: no barriers);
    // under RoPE, Q and K then rotated out of QPre and KPre.
    const ProjectionPass projections[] = {
        {"projection Q", b.xq, tq, s.dq, qkw, b.wq, b.bq, s.rope ? b.qPre : b.q},
        {"projection K", b.xkv, tk, s.dkv, kw, b.wk, b.bk, s.rope ? b.kPre : b.k},
        {"projection V", b.xv, tk, s.dvIn, kvw, b.wv, b.bv, b.v},
    };
    for (const ProjectionPass &pr : projections)
        if (Status st = rec.projection(pr); !st)
            return st;
    rec.computeBarrier();
    if (b.qNorm || b.kNorm) { // in place, before RoPE: QPre and KPre are the normalised vectors
        if (b.qNorm)
            if (Status st = rec.headNorm({"q norm", tq, heads, dk, s.rope ? b.qPre : b.q, b.qNorm, s.qkNormEps}); !st)
                return st;
        if (b.kNorm)
            if (Status st = rec.headNorm({"k norm", tk, kvHeads, dk, s.rope ? b.kPre : b.k, b.kNorm, s.qkNormEps}); !st)
                return st;
        rec.computeBarrier();
    }
    if (s.rope) {
        const RopePass ropes[] = {
            {"RoPE Q", tq, heads, dk, b.qPre, b.q, b.ropeQ},
            {"RoPE K", tk, kvHeads, dk, b.kPre, b.k, b.ropeK},
        };
        for (const RopePass &r : ropes)
            if (Status st = rec.rope(r); !st)
                return st;
        rec.computeBarrier();
    }

    // scores[h] = softcap(scale · Q_h·K_gᵀ), g = h / group: Kᵀ is K read with its strides swapped.
    GemmPass scores;
    scores.name = "scores";
    scores.m = tq;
    scores.n = tk;
    scores.k = dk;
    scores.heads = heads;
    scores.group = group;
    scores.a = {b.q, 0, qkw, 1, dk};
    scores.b = {b.k, 0, 1, kw, dk};
    scores.c = {b.scores, 0, tk, 1, tq * tk};
    scores.alpha = s.scale;
    scores.softcap = s.softcap;
    if (Status st = rec.gemm(scores); !st)
        return st;
    rec.computeBarrier();

    SoftmaxPass sm;
    sm.rows = tq;
    sm.keys = tk;
    sm.heads = heads;
    sm.scores = b.scores;
    sm.weights = b.weights;
    sm.maskBits = b.maskBits;
    sm.sinks = b.sinks;
    sm.negLargeFill = s.negLargeFill;
    if (Status st = rec.softmax(sm); !st)
        return st;
    rec.computeBarrier();

    // headOutputs: weights_h·V_g written straight into columns [h·dV, (h+1)·dV) of the context.
    GemmPass pv;
    pv.name = "weights·V";
    pv.m = tq;
    pv.n = dv;
    pv.k = tk;
    pv.heads = heads;
    pv.group = group;
    pv.a = {b.weights, 0, tk, 1, tq * tk};
    pv.b = {b.v, 0, kvw, 1, dv};
    pv.c = {b.context, 0, vw, 1, dv};
    if (Status st = rec.gemm(pv); !st)
        return st;

    if (b.wo) {
        rec.computeBarrier();
        GemmPass out;
        out.name = "output projection";
        out.m = tq;
        out.n = s.dOut;
        out.k = vw;
        out.a = {b.context, 0, vw, 1, 0};
        out.b = {b.wo, 0, s.dOut, 1, 0};
        out.c = {b.output, 0, s.dOut, 1, 0};
        out.bias = b.bo;
        out.accumulate = b.outputAccumulates;
        if (Status st = rec.gemm(out); !st)
            return st;
    }
    return Ok{};
}

void PassRecorder::computeBarrier()
{
    m_commands.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

Status PassRecorder::projection(const ProjectionPass &p)
{
    GemmPass g;
    g.name = p.name;
    g.m = p.rows;
    g.n = p.outDim;
    g.k = p.inDim;
    g.a = {p.x, 0, p.inDim, 1, 0};
    g.b = {p.w, 0, p.outDim, 1, 0};
    g.c = {p.out, 0, p.outDim, 1, 0};
    g.bias = p.bias;
    return gemm(g);
}

Status PassRecorder::gemm(const GemmPass &p)
{
    if (p.m == 0 || p.n == 0 || p.heads == 0)
        return Ok{};
    // Dimensions: k (outermost: chunks along it accumulate in order), head, m, n.
    // Chunks of heads hold whole groups or lie inside one, so the shader's h / group is B's head
    // relative to the chunk's binding of B.
    const std::vector<PlanDim> dims = {
        {p.k, 0, 0},
        {p.heads, 1, m_limits.maxGroups[2], p.group},
        {p.m, m_tiling.tileM(), m_limits.maxGroups[1]},
        {p.n, m_tiling.tileN(), m_limits.maxGroups[0]},
    };
    std::vector<PlanOperand> ops = {
        {p.name + " (A)", p.a.offset, {p.a.colStride, p.a.headStride, p.a.rowStride, 0}, 1, p.a.buffer->bytes()},
        {p.name + " (B)",
         p.b.offset,
         {p.b.rowStride, p.b.headStride, 0, p.b.colStride},
         1,
         p.b.buffer->bytes(),
         {false, true, false, false},
         elementBytes(p.bType)},
        {p.name + " (C)", p.c.offset, {0, p.c.headStride, p.c.rowStride, 1}, 1, p.c.buffer->bytes()},
    };
    if (p.bias)
        ops.push_back({p.name + " (bias)", 0, {0, 0, 0, 1}, 1, p.bias->bytes()});
    auto chunks = planChunks(p.name, dims, ops, m_limits.binding);
    if (!chunks)
        return chunks.error();
    for (std::uint64_t v : {p.a.rowStride, p.a.colStride, p.a.headStride, p.b.rowStride, p.b.colStride, p.b.headStride,
                            p.c.rowStride, p.c.headStride, p.m, p.n, p.k, p.group})
        if (!fits32(v))
            return Error{p.name + ": a stride or size exceeds 32 bits", ErrorKind::TooLarge};

    const DeviceFunctions &fn = m_device.fn();
    VkCommandBuffer cmd = m_commands.commandBuffer();
    fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_gemm.pipeline());
    std::uint64_t lastK = 0;
    for (const PlanChunk &c : *chunks) {
        if (c.start[0] != lastK) {
            computeBarrier(); // the next depth step reads what this one accumulated
            lastK = c.start[0];
        }
        std::vector<BufferRange> ranges;
        const Buffer *buffers[3] = {p.a.buffer, p.b.buffer, p.c.buffer};
        for (int i = 0; i < 3; ++i)
            ranges.push_back(
                {buffers[i]->handle(), c.bindings[size_t(i)].offsetBytes, c.bindings[size_t(i)].rangeBytes});
        if (p.bias)
            ranges.push_back({p.bias->handle(), c.bindings[3].offsetBytes, c.bindings[3].rangeBytes});
        else
            ranges.push_back({m_placeholder.handle(), 0, m_placeholder.bytes()});
        auto set = m_descriptors.allocate(m_gemm, ranges);
        if (!set)
            return set.error();
        const bool firstDepthStep = c.start[0] == 0, lastDepthStep = c.start[0] + c.count[0] == p.k;
        GemmPush push{};
        push.m = std::uint32_t(c.count[2]);
        push.n = std::uint32_t(c.count[3]);
        push.k = std::uint32_t(c.count[0]);
        push.aOff = std::uint32_t(c.bindings[0].localOffset);
        push.aRs = std::uint32_t(p.a.rowStride);
        push.aCs = std::uint32_t(p.a.colStride);
        push.aHs = std::uint32_t(p.a.headStride);
        push.bOff = std::uint32_t(c.bindings[1].localOffset);
        push.bRs = std::uint32_t(p.b.rowStride);
        push.bCs = std::uint32_t(p.b.colStride);
        push.bHs = std::uint32_t(p.b.headStride);
        push.cOff = std::uint32_t(c.bindings[2].localOffset);
        push.cRs = std::uint32_t(p.c.rowStride);
        push.cHs = std::uint32_t(p.c.headStride);
        push.biasOff = p.bias ? std::uint32_t(c.bindings[3].localOffset) : 0;
        push.flags = (p.bias && firstDepthStep ? kFlagBias : 0) |
                     (firstDepthStep && !p.accumulate ? 0 : kFlagAccumulate) |
                     (p.softcap > 0.0f && lastDepthStep ? kFlagSoftcap : 0) |
                     (p.bType == ElementType::F16    ? kFlagBHalf
                      : p.bType == ElementType::BF16 ? kFlagBBF16
                                                     : 0);
        push.alpha = p.alpha;
        push.group = std::uint32_t(p.group);
        push.softcap = p.softcap;
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_gemm.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        fn.vkCmdPushConstants(cmd, m_gemm.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
        fn.vkCmdDispatch(cmd, std::uint32_t(ceilDiv(c.count[3], m_tiling.tileN())),
                         std::uint32_t(ceilDiv(c.count[2], m_tiling.tileM())), std::uint32_t(c.count[1]));
        ++m_dispatches;
    }
    return Ok{};
}

Status PassRecorder::softmax(const SoftmaxPass &p)
{
    if (p.rows == 0 || p.heads == 0)
        return Ok{};
    const std::uint64_t words = ceilDiv(p.keys, 32);
    const std::uint64_t headStride = p.rows * p.keys;
    // Dimensions: head (dispatch y), row (dispatch x); a workgroup always sees a whole row.
    const std::vector<PlanDim> dims = {
        {p.heads, 1, m_limits.maxGroups[1]},
        {p.rows, 1, m_limits.maxGroups[0]},
    };
    std::vector<PlanOperand> ops = {
        {"softmax (scores)", 0, {headStride, p.keys}, p.keys, p.scores->bytes()},
        {"softmax (weights)", 0, {headStride, p.keys}, p.keys, p.weights->bytes()},
        {"softmax (mask)", 0, {0, words}, words, p.maskBits->bytes()},
    };
    if (p.sinks)
        ops.push_back({"softmax (sinks)", 0, {1, 0}, 1, p.sinks->bytes()});
    auto chunks = planChunks("softmax", dims, ops, m_limits.binding);
    if (!chunks)
        return chunks.error();
    if (!fits32(headStride) || !fits32(p.keys))
        return Error{"softmax: a stride or size exceeds 32 bits", ErrorKind::TooLarge};

    const DeviceFunctions &fn = m_device.fn();
    VkCommandBuffer cmd = m_commands.commandBuffer();
    fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_softmax.pipeline());
    for (const PlanChunk &c : *chunks) {
        const Buffer *buffers[3] = {p.scores, p.weights, p.maskBits};
        std::vector<BufferRange> ranges;
        for (int i = 0; i < 3; ++i)
            ranges.push_back(
                {buffers[i]->handle(), c.bindings[size_t(i)].offsetBytes, c.bindings[size_t(i)].rangeBytes});
        if (p.sinks)
            ranges.push_back({p.sinks->handle(), c.bindings[3].offsetBytes, c.bindings[3].rangeBytes});
        else
            ranges.push_back({m_placeholder.handle(), 0, m_placeholder.bytes()});
        auto set = m_descriptors.allocate(m_softmax, ranges);
        if (!set)
            return set.error();
        SoftmaxPush push{};
        push.n = std::uint32_t(p.keys);
        push.sOff = std::uint32_t(c.bindings[0].localOffset);
        push.wOff = std::uint32_t(c.bindings[1].localOffset);
        push.rowStride = std::uint32_t(p.keys);
        push.headStride = std::uint32_t(headStride);
        push.mOff = std::uint32_t(c.bindings[2].localOffset);
        push.mRs = std::uint32_t(words);
        push.fill = p.negLargeFill ? kFillNegLarge : kFillNegInf;
        push.sinkOff = p.sinks ? std::uint32_t(c.bindings[3].localOffset) : 0;
        push.hasSinks = p.sinks ? 1 : 0;
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_softmax.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        fn.vkCmdPushConstants(cmd, m_softmax.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
        fn.vkCmdDispatch(cmd, std::uint32_t(c.count[1]), std::uint32_t(c.count[0]), 1);
        ++m_dispatches;
    }
    return Ok{};
}

Status PassRecorder::rope(const RopePass &p)
{
    if (p.rows == 0 || p.heads == 0)
        return Ok{};
    const std::uint64_t half = p.headDim / 2, width = p.heads * p.headDim;
    // Dimensions: head (dispatch z), row (y), pair (x). A pair reads dimension i and i + dK/2.
    const std::vector<PlanDim> dims = {
        {p.heads, 1, m_limits.maxGroups[2]},
        {p.rows, 1, m_limits.maxGroups[1]},
        {half, kRopeWorkgroup, m_limits.maxGroups[0]},
    };
    const std::vector<PlanOperand> ops = {
        {std::string(p.name) + " (source)", 0, {p.headDim, width, 1}, half + 1, p.src->bytes()},
        {std::string(p.name) + " (rotated)", 0, {p.headDim, width, 1}, half + 1, p.dst->bytes()},
        {std::string(p.name) + " (cos, sin)", 0, {0, 2 * half, 2}, 2, p.table->bytes()},
    };
    auto chunks = planChunks(p.name, dims, ops, m_limits.binding);
    if (!chunks)
        return chunks.error();
    if (!fits32(width) || !fits32(p.rows))
        return Error{std::string(p.name) + ": a stride or size exceeds 32 bits", ErrorKind::TooLarge};

    const DeviceFunctions &fn = m_device.fn();
    VkCommandBuffer cmd = m_commands.commandBuffer();
    fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_rope.pipeline());
    for (const PlanChunk &c : *chunks) {
        const Buffer *buffers[3] = {p.src, p.dst, p.table};
        std::vector<BufferRange> ranges;
        for (int i = 0; i < 3; ++i)
            ranges.push_back(
                {buffers[i]->handle(), c.bindings[size_t(i)].offsetBytes, c.bindings[size_t(i)].rangeBytes});
        auto set = m_descriptors.allocate(m_rope, ranges);
        if (!set)
            return set.error();
        RopePush push{};
        push.pairs = std::uint32_t(c.count[2]);
        push.halfDim = std::uint32_t(half);
        push.srcOff = std::uint32_t(c.bindings[0].localOffset);
        push.dstOff = std::uint32_t(c.bindings[1].localOffset);
        push.tabOff = std::uint32_t(c.bindings[2].localOffset);
        push.rowStride = std::uint32_t(width);
        push.headStride = std::uint32_t(p.headDim);
        push.tabRowStride = std::uint32_t(2 * half);
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_rope.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        fn.vkCmdPushConstants(cmd, m_rope.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
        fn.vkCmdDispatch(cmd, std::uint32_t(ceilDiv(c.count[2], kRopeWorkgroup)), std::uint32_t(c.count[1]),
                         std::uint32_t(c.count[0]));
        ++m_dispatches;
    }
    return Ok{};
}

Status PassRecorder::headNorm(const HeadNormPass &p)
{
    if (p.rows == 0 || p.heads == 0 || p.headDim == 0)
        return Ok{};
    const std::uint64_t width = p.heads * p.headDim;
    // Dimensions: head (dispatch y), row (x). An invocation reads and writes its whole slice.
    const std::vector<PlanDim> dims = {
        {p.heads, 1, m_limits.maxGroups[1]},
        {p.rows, kHeadNormWorkgroup, m_limits.maxGroups[0]},
    };
    const std::vector<PlanOperand> ops = {
        {std::string(p.name) + " (vectors)", 0, {p.headDim, width}, p.headDim, p.x->bytes()},
        {std::string(p.name) + " (weight)", 0, {0, 0}, p.headDim, p.weight->bytes()},
    };
    auto chunks = planChunks(p.name, dims, ops, m_limits.binding);
    if (!chunks)
        return chunks.error();
    if (!fits32(width) || !fits32(p.rows))
        return Error{std::string(p.name) + ": a stride or size exceeds 32 bits", ErrorKind::TooLarge};

    const DeviceFunctions &fn = m_device.fn();
    VkCommandBuffer cmd = m_commands.commandBuffer();
    fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_headNorm.pipeline());
    for (const PlanChunk &c : *chunks) {
        const Buffer *buffers[2] = {p.x, p.weight};
        std::vector<BufferRange> ranges;
        for (int i = 0; i < 2; ++i)
            ranges.push_back(
                {buffers[i]->handle(), c.bindings[size_t(i)].offsetBytes, c.bindings[size_t(i)].rangeBytes});
        auto set = m_descriptors.allocate(m_headNorm, ranges);
        if (!set)
            return set.error();
        HeadNormPush push{};
        push.rows = std::uint32_t(c.count[1]);
        push.headDim = std::uint32_t(p.headDim);
        push.xOff = std::uint32_t(c.bindings[0].localOffset);
        push.wOff = std::uint32_t(c.bindings[1].localOffset);
        push.rowStride = std::uint32_t(width);
        push.headStride = std::uint32_t(p.headDim);
        push.eps = p.eps;
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_headNorm.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        fn.vkCmdPushConstants(cmd, m_headNorm.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
        fn.vkCmdDispatch(cmd, std::uint32_t(ceilDiv(c.count[1], kHeadNormWorkgroup)), std::uint32_t(c.count[0]), 1);
        ++m_dispatches;
    }
    return Ok{};
}

} // namespace attnscope::vk
