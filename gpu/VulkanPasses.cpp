#include "gpu/VulkanPasses.h"

namespace attnscope::vk {

namespace {

// Mirrors the push_constant blocks of shaders/gemm.comp and shaders/softmax.comp.
struct GemmPush {
    std::uint32_t m, n, k;
    std::uint32_t aOff, aRs, aCs, aHs;
    std::uint32_t bOff, bRs, bCs, bHs;
    std::uint32_t cOff, cRs, cHs;
    std::uint32_t biasOff;
    std::uint32_t flags;
    float alpha;
};
static_assert(sizeof(GemmPush) == 68);

struct SoftmaxPush {
    std::uint32_t n;
    std::uint32_t sOff, wOff;
    std::uint32_t rowStride, headStride;
    std::uint32_t mOff, mRs;
    std::uint32_t fill;
};
static_assert(sizeof(SoftmaxPush) == 32);

constexpr std::uint32_t kFlagBias = 1, kFlagAccumulate = 2; // shaders/common.glsl
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
    const std::vector<PlanDim> dims = {
        {p.k, 0, 0},
        {p.heads, 1, m_limits.maxGroups[2]},
        {p.m, m_tiling.tileM(), m_limits.maxGroups[1]},
        {p.n, m_tiling.tileN(), m_limits.maxGroups[0]},
    };
    std::vector<PlanOperand> ops = {
        {p.name + " (A)", p.a.offset, {p.a.colStride, p.a.headStride, p.a.rowStride, 0}, 1, p.a.buffer->bytes()},
        {p.name + " (B)", p.b.offset, {p.b.rowStride, p.b.headStride, 0, p.b.colStride}, 1, p.b.buffer->bytes()},
        {p.name + " (C)", p.c.offset, {0, p.c.headStride, p.c.rowStride, 1}, 1, p.c.buffer->bytes()},
    };
    if (p.bias)
        ops.push_back({p.name + " (bias)", 0, {0, 0, 0, 1}, 1, p.bias->bytes()});
    auto chunks = planChunks(p.name, dims, ops, m_limits.binding);
    if (!chunks)
        return chunks.error();
    for (std::uint64_t v : {p.a.rowStride, p.a.colStride, p.a.headStride, p.b.rowStride, p.b.colStride, p.b.headStride,
                            p.c.rowStride, p.c.headStride, p.m, p.n, p.k})
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
        const bool firstDepthStep = c.start[0] == 0;
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
        push.flags = (p.bias && firstDepthStep ? kFlagBias : 0) | (firstDepthStep ? 0 : kFlagAccumulate);
        push.alpha = p.alpha;
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
    const std::vector<PlanOperand> ops = {
        {"softmax (scores)", 0, {headStride, p.keys}, p.keys, p.scores->bytes()},
        {"softmax (weights)", 0, {headStride, p.keys}, p.keys, p.weights->bytes()},
        {"softmax (mask)", 0, {0, words}, words, p.maskBits->bytes()},
    };
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
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m_softmax.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        fn.vkCmdPushConstants(cmd, m_softmax.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
        fn.vkCmdDispatch(cmd, std::uint32_t(c.count[1]), std::uint32_t(c.count[0]), 1);
        ++m_dispatches;
    }
    return Ok{};
}

} // namespace attnscope::vk
