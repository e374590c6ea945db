#include "gpu/VulkanPooled.h"

#include "core/ErrorCode.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "shaders/EmbeddedShaders.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace attnscope::vk {

namespace {

// Mirrors the push_constant block of shaders/pooled_common.glsl.
struct PooledPush {
    std::uint32_t tq, tk, dk, dv, qkw, vw;
    std::uint32_t nq, nk;
    std::uint32_t r0, r1;
    std::uint32_t x0, y0, h0;
    std::uint32_t flags, words;
    float scale;
    std::uint32_t window, group;
    float softcap;
};
static_assert(sizeof(PooledPush) == 76);

constexpr std::uint32_t kCausal = 1, kPadding = 2, kCustom = 4, kNegLarge = 8, kMean = 16, kCellPerThread = 32,
                        kSoftcap = 64, kSinks = 128;
constexpr std::uint32_t kCellBindings = 8;                // pooled_cells.comp; pooled_rows.comp binds kPooledBindings
constexpr std::uint32_t kWorkgroup = 64, kRowColumns = 4; // the shaders' WG and ACC

using Slot = PooledEngine::Slot;
const char *const kSlotNames[PooledEngine::SlotCount] = {"query.x",
                                                         "key.x",
                                                         "value.x",
                                                         "weights.q",
                                                         "weights.k",
                                                         "weights.v",
                                                         "weights.o",
                                                         "weights.qBias",
                                                         "weights.kBias",
                                                         "weights.vBias",
                                                         "weights.oBias",
                                                         "weights.sinks",
                                                         "RoPE table (queries)",
                                                         "RoPE table (keys)",
                                                         "weights.qNorm",
                                                         "weights.kNorm",
                                                         "key padding",
                                                         "mask.allowed",
                                                         "row bins",
                                                         "key bins",
                                                         "Q",
                                                         "K",
                                                         "V",
                                                         "row statistics",
                                                         "context",
                                                         "entropy",
                                                         "weights_pooled",
                                                         "output"};

bool isInput(int s)
{
    return s < PooledEngine::Q;
}

bool isOutput(int s)
{
    return s >= PooledEngine::Context;
}

// Read whole by the pooled shaders, so one binding must hold all of it.
bool boundWhole(int s)
{
    return s == PooledEngine::Sinks || s == PooledEngine::PadBits || s == PooledEngine::CustomBits ||
           s == PooledEngine::RowStart || s == PooledEngine::KeyStart ||
           (s >= PooledEngine::Q && s <= PooledEngine::Pooled);
}

std::string bytesText(std::uint64_t bytes)
{
    return std::to_string(bytes) + " bytes";
}

} // namespace

PooledEngine::~PooledEngine() = default;

Result<std::unique_ptr<PooledEngine>> PooledEngine::create(const Device &device)
{
    std::unique_ptr<PooledEngine> e(new PooledEngine);
    const std::uint32_t rowsSpec[] = {kWorkgroup, kRowColumns};
    auto rows = ComputePipeline::create(device, "pooled_rows.comp", shaders::pooledRowsSpirv(), kPooledBindings,
                                        sizeof(PooledPush), rowsSpec);
    if (!rows)
        return rows.error();
    e->m_rows = std::move(*rows);
    const std::uint32_t cellsSpec[] = {kWorkgroup};
    auto cells = ComputePipeline::create(device, "pooled_cells.comp", shaders::pooledCellsSpirv(), kCellBindings,
                                         sizeof(PooledPush), cellsSpec);
    if (!cells)
        return cells.error();
    e->m_cells = std::move(*cells);
    return e;
}

Status PooledEngine::allocate(const PooledShared &sh, const std::array<std::uint64_t, SlotCount> &bytes)
{
    if (bytes == m_bytes && m_staged == sh.forceStaging && m_tensors[Q].bytes != 0)
        return Ok{};
    m_tensors = {}; // release the old set before allocating the new one
    m_bytes = {};
    if (sh.fault == VulkanFault::OutOfMemory)
        return vkError("query.x: vkAllocateMemory (injected fault)", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    for (int s = 0; s < SlotCount; ++s) {
        if (bytes[size_t(s)] == 0)
            continue;
        Tensor &t = m_tensors[size_t(s)];
        t.bytes = bytes[size_t(s)];
        auto buffer = Buffer::create(sh.device, t.bytes, MemoryUse::Device, kSlotNames[s]);
        if (!buffer)
            return buffer.error();
        t.device = std::move(*buffer);
        if ((isInput(s) || isOutput(s)) && (!t.device.mapped() || sh.forceStaging)) {
            auto staging = Buffer::create(sh.device, t.bytes, isInput(s) ? MemoryUse::Upload : MemoryUse::Readback,
                                          std::string(kSlotNames[s]) + " (staging)");
            if (!staging)
                return staging.error();
            t.staging = std::move(*staging);
        }
    }
    m_bytes = bytes;
    m_staged = sh.forceStaging;
    return Ok{};
}

Result<PooledResult> PooledEngine::run(const PooledShared &sh, const AttentionProblem &p, const PoolOptions &options,
                                       PooledRunStats &stats)
{
    const HeadLayout layout = HeadLayout::of(p.spec);
    const std::uint64_t f = sizeof(float), tq = std::uint64_t(p.tq()), tk = std::uint64_t(p.tk()),
                        heads = std::uint64_t(layout.heads), kvHeads = std::uint64_t(layout.kvHeads),
                        dk = std::uint64_t(layout.headDimQK), dv = std::uint64_t(layout.headDimV),
                        qkw = std::uint64_t(layout.queryWidth()), kw = std::uint64_t(layout.keyWidth()),
                        vw = std::uint64_t(layout.contextWidth()), kvw = std::uint64_t(layout.valueWidth()),
                        dout = std::uint64_t(p.dOut());
    // The block pooled (the GUI's zoom): rows [q0, q1) against keys [k0, k1), each row's weights
    // normalised over every key; the bins split the block. Its cells hold absolute indices.
    const std::uint64_t q0 = std::uint64_t(options.queryBegin), k0 = std::uint64_t(options.keyBegin);
    const std::uint64_t q1 = options.queryEnd < 0 ? tq : std::uint64_t(options.queryEnd),
                        k1 = options.keyEnd < 0 ? tk : std::uint64_t(options.keyEnd);
    if (options.queryBegin < 0 || options.keyBegin < 0 || q0 >= q1 || q1 > tq || k0 >= k1 || k1 > tk)
        return Error{"pool: expected a block inside the " + std::to_string(tq) + " x " + std::to_string(tk) +
                     " problem, found rows [" + std::to_string(options.queryBegin) + ", " + std::to_string(q1) +
                     ") and keys [" + std::to_string(options.keyBegin) + ", " + std::to_string(k1) + ")"};
    const std::uint64_t rows = q1 - q0, keys = k1 - k0;
    const bool allKeys = k0 == 0 && k1 == tk;
    const std::uint64_t nq = std::min<std::uint64_t>(std::uint64_t(options.bins), rows),
                        nk = std::min<std::uint64_t>(std::uint64_t(options.bins), keys);
    // The head mean has its own slot after the heads' (pooled_cells.comp).
    const std::uint64_t slots = heads + (options.headMean ? 1 : 0);
    const std::uint64_t words = (tk + 31) / 32;
    const bool cross = p.spec.mode == AttentionMode::Cross;
    const auto &w = p.weights;
    // The shaders compare row indices for causal and the window. Where given RoPE positions are
    // not the row indices, they compare positions instead: then the host evaluates the whole
    // structural mask (core's StructuralMask, so exactly the CPU's) into the custom bits, and
    // the shaders apply no structural part of their own.
    const bool maskOnHost = !positionsAreIndices(p) && (p.mask.causal || p.mask.window > 0);
    // A window of Tq rows or more masks nothing when positions are row indices.
    const std::uint64_t window =
        maskOnHost || p.mask.window <= 0 || std::uint64_t(p.mask.window) >= tq ? 0 : std::uint64_t(p.mask.window);
    const std::uint64_t ropeRow = p.spec.rope ? dk * f : 0; // a cos and a sin per pair
    auto size = [&](const auto *m) { return m ? std::uint64_t(m->size()) * f : 0; };

    std::array<std::uint64_t, SlotCount> bytes{};
    bytes[Xq] = tq * std::uint64_t(p.dq()) * f;
    bytes[Xkv] = cross ? tk * std::uint64_t(p.dkv()) * f : 0;
    bytes[Xv] = p.hasSeparateValue() ? tk * std::uint64_t(p.dvIn()) * f : 0;
    bytes[Wq] = size(&w.q);
    bytes[Wk] = size(&w.k);
    bytes[Wv] = size(&w.v);
    bytes[Wo] = size(w.o ? &*w.o : nullptr);
    bytes[Bq] = size(w.qBias ? &*w.qBias : nullptr);
    bytes[Bk] = size(w.kBias ? &*w.kBias : nullptr);
    bytes[Bv] = size(w.vBias ? &*w.vBias : nullptr);
    bytes[Bo] = size(w.oBias ? &*w.oBias : nullptr);
    bytes[Sinks] = w.sinks ? heads * f : 0;
    bytes[RopeQ] = tq * ropeRow;
    bytes[RopeK] = tk * ropeRow;
    bytes[QNorm] = size(w.qNorm ? &*w.qNorm : nullptr);
    bytes[KNorm] = size(w.kNorm ? &*w.kNorm : nullptr);
    bytes[PadBits] = p.mask.keyPadding.empty() || maskOnHost ? 0 : words * 4;
    bytes[CustomBits] = p.mask.allowed || maskOnHost ? tq * words * 4 : 0;
    bytes[RowStart] = (nq + 1) * 4;
    bytes[KeyStart] = (nk + 1) * 4;
    bytes[Q] = tq * qkw * f;
    bytes[K] = tk * kw * f;
    bytes[V] = tk * kvw * f;
    bytes[Stats] = 2 * heads * tq * f;
    bytes[Context] = tq * vw * f;
    bytes[Entropy] = heads * tq * f;
    bytes[Pooled] = slots * nq * nk * f;
    bytes[Output] = w.o ? tq * dout * f : 0;

    // Refuse what does not fit this device before allocating any of it.
    const std::string device = sh.device.info().label();
    for (int s = 0; s < SlotCount; ++s) {
        if (bytes[size_t(s)] > sh.maxAllocationBytes)
            return codedError("vulkan.tooLarge.allocation",
                              {"pooled " + std::string(kSlotNames[s]), bytesText(bytes[size_t(s)]),
                               bytesText(sh.maxAllocationBytes), device},
                              ErrorKind::TooLarge);
        if (boundWhole(s) && bytes[size_t(s)] > sh.limits.binding.maxRangeBytes)
            return codedError("vulkan.tooLarge.binding",
                              {"pooled " + std::string(kSlotNames[s]), bytesText(bytes[size_t(s)]),
                               bytesText(sh.limits.binding.maxRangeBytes)},
                              ErrorKind::TooLarge);
    }
    if (Status s = allocate(sh, bytes); !s)
        return s.error();

    // Inputs: the matrices as they are, the mask as bits (1 = allowed), the bin boundaries.
    auto hostOf = [&](Slot s) {
        Tensor &t = m_tensors[s];
        return t.staging.handle() != VK_NULL_HANDLE ? t.staging.mapped() : t.device.mapped();
    };
    stats = {};
    auto put = [&](Slot s, const void *data) {
        if (bytes[s])
            std::memcpy(hostOf(s), data, size_t(bytes[s]));
        stats.uploaded += bytes[s];
    };
    put(Xq, p.xq.data());
    if (cross)
        put(Xkv, p.xkv.data());
    if (p.hasSeparateValue())
        put(Xv, p.valueInput().data());
    put(Wq, w.q.data());
    put(Wk, w.k.data());
    put(Wv, w.v.data());
    if (w.o)
        put(Wo, w.o->data());
    if (w.qBias)
        put(Bq, w.qBias->data());
    if (w.kBias)
        put(Bk, w.kBias->data());
    if (w.vBias)
        put(Bv, w.vBias->data());
    if (w.oBias)
        put(Bo, w.oBias->data());
    if (w.sinks)
        put(Sinks, w.sinks->data());
    if (w.qNorm)
        put(QNorm, w.qNorm->data());
    if (w.kNorm)
        put(KNorm, w.kNorm->data());
    if (p.spec.rope) {
        put(RopeQ, ropeTableForGpu(queryPositions(p), *p.spec.rope, int(dk)).data());
        put(RopeK, ropeTableForGpu(keyPositions(p), *p.spec.rope, int(dk)).data());
    }
    if (bytes[PadBits]) {
        std::vector<std::uint32_t> bits(size_t(words), 0u);
        for (std::uint64_t j = 0; j < tk; ++j)
            if (p.mask.keyPadding[size_t(j)])
                bits[size_t(j / 32)] |= 1u << (j % 32);
        put(PadBits, bits.data());
    }
    if (bytes[CustomBits]) {
        auto *bits = static_cast<std::uint32_t *>(hostOf(CustomBits));
        std::memset(bits, 0, size_t(bytes[CustomBits]));
        stats.uploaded += bytes[CustomBits];
        const StructuralMask structural(p);
        auto allowed = [&](std::uint64_t i, std::uint64_t j) {
            return maskOnHost ? structural.allowed(Eigen::Index(i), Eigen::Index(j))
                              : (*p.mask.allowed)(Eigen::Index(i), Eigen::Index(j)) != 0;
        };
        for (std::uint64_t i = 0; i < tq; ++i)
            for (std::uint64_t j = 0; j < tk; ++j)
                if (allowed(i, j))
                    bits[i * words + j / 32] |= 1u << (j % 32);
    }
    for (auto [slot, first, count, n] : {std::tuple{RowStart, q0, rows, nq}, std::tuple{KeyStart, k0, keys, nk}}) {
        std::vector<std::uint32_t> starts(size_t(n) + 1);
        for (std::uint64_t b = 0; b <= n; ++b)
            starts[size_t(b)] =
                std::uint32_t(first + std::uint64_t(binStart(std::int64_t(b), std::int64_t(count), std::int64_t(n))));
        put(slot, starts.data());
    }

    // Chunks of query rows of bounded cost: per row, two sweeps of scores and one of weights·V
    // in the row pass and one sweep of scores in the cell pass, over every key and head. The
    // cell pass indexes (rows of a chunk) x (keys of a bin) in 32 bits.
    const std::uint64_t budget = sh.workPerSubmission ? sh.workPerSubmission : kDefaultPooledWork;
    const std::uint64_t workPerRow = std::max<std::uint64_t>(1, tk * heads * (3 * dk + dv));
    const std::uint64_t chunkRows = std::clamp<std::uint64_t>(budget / workPerRow, 1, 0xffffffffull / tk);

    PooledPush base{};
    base.tq = std::uint32_t(tq);
    base.tk = std::uint32_t(tk);
    base.dk = std::uint32_t(dk);
    base.dv = std::uint32_t(dv);
    base.qkw = std::uint32_t(qkw);
    base.vw = std::uint32_t(vw);
    base.nq = std::uint32_t(nq);
    base.nk = std::uint32_t(nk);
    base.flags = (p.mask.causal && !maskOnHost ? kCausal : 0) | (bytes[PadBits] ? kPadding : 0) |
                 (bytes[CustomBits] ? kCustom : 0) | (p.spec.maskFill == MaskFill::NegLarge ? kNegLarge : 0) |
                 (options.mode == PoolMode::Mean ? kMean : 0) | (p.spec.softcap ? kSoftcap : 0) |
                 (w.sinks ? kSinks : 0);
    // Small cells (N close to T) would leave most of a workgroup idle: one thread per cell.
    const std::uint64_t cellPairs = ((rows + nq - 1) / nq) * ((keys + nk - 1) / nk);
    const bool cellPerThread = cellPairs < kWorkgroup;
    if (cellPerThread)
        base.flags |= kCellPerThread;
    const std::uint64_t cellGroups = cellPerThread ? (nk + kWorkgroup - 1) / kWorkgroup : nk;
    base.words = std::uint32_t(words);
    base.scale = float(p.spec.scale());
    base.window = std::uint32_t(window);
    base.group = std::uint32_t(layout.groupSize());
    base.softcap = p.spec.softcap ? float(*p.spec.softcap) : 0.0f;

    const DeviceFunctions &fn = sh.device.fn();
    auto buffer = [&](Slot s) -> const Buffer & { return m_tensors[s].bytes ? m_tensors[s].device : sh.placeholder; };
    auto range = [&](Slot s) {
        const Buffer &b = buffer(s);
        return BufferRange{b.handle(), 0, b.bytes()};
    };
    // One pass over a grid of workgroups, split where it exceeds the device's group counts.
    auto dispatch =
        [&](VkCommandBuffer cmd, const ComputePipeline &pipeline, std::vector<BufferRange> ranges, PooledPush push,
            const std::array<std::uint64_t, 3> &groups,
            const std::function<void(PooledPush &, std::uint64_t, std::uint64_t, std::uint64_t)> &origin) -> Status {
        auto set = sh.descriptors.allocate(pipeline, ranges);
        if (!set)
            return set.error();
        fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline());
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        const std::uint32_t *maxGroups = sh.limits.maxGroups;
        for (std::uint64_t z = 0; z < groups[2]; z += maxGroups[2])
            for (std::uint64_t y = 0; y < groups[1]; y += maxGroups[1])
                for (std::uint64_t x = 0; x < groups[0]; x += maxGroups[0]) {
                    origin(push, x, y, z);
                    fn.vkCmdPushConstants(cmd, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, &push);
                    fn.vkCmdDispatch(cmd, std::uint32_t(std::min<std::uint64_t>(groups[0] - x, maxGroups[0])),
                                     std::uint32_t(std::min<std::uint64_t>(groups[1] - y, maxGroups[1])),
                                     std::uint32_t(std::min<std::uint64_t>(groups[2] - z, maxGroups[2])));
                    ++stats.dispatches;
                }
        return Ok{};
    };

    bool staged = false;
    if (options.progress) {
        options.progress->done = 0;
        options.progress->total = std::int64_t((rows + chunkRows - 1) / chunkRows);
    }
    for (std::uint64_t r0 = q0; r0 < q1; r0 += chunkRows) {
        const std::uint64_t r1 = std::min(q1, r0 + chunkRows);
        const bool first = r0 == q0, last = r1 == q1;
        // A newer request (the GUI's) stops the work between submissions.
        if (options.cancel && options.cancel->load(std::memory_order_relaxed))
            return Error{"the computation was cancelled", ErrorKind::Cancelled};
        auto begun = sh.commands.begin();
        if (!begun)
            return begun.error();
        VkCommandBuffer cmd = *begun;
        PassRecorder rec(sh.device, sh.commands, sh.descriptors, sh.gemm, sh.tiling, sh.softmax, sh.rope, sh.headNorm,
                         sh.placeholder, sh.limits);
        if (first) {
            for (int s = 0; s < SlotCount; ++s) {
                const Tensor &t = m_tensors[size_t(s)];
                if (!isInput(s) || t.staging.handle() == VK_NULL_HANDLE)
                    continue;
                const VkBufferCopy region{0, 0, t.bytes};
                fn.vkCmdCopyBuffer(cmd, t.staging.handle(), t.device.handle(), 1, &region);
                staged = true;
            }
            if (staged)
                sh.commands.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
            const Buffer &xkv = cross ? m_tensors[Xkv].device : m_tensors[Xq].device;
            const Buffer &xv = p.hasSeparateValue() ? m_tensors[Xv].device : xkv;
            auto bias = [&](Slot b) { return bytes[b] ? &m_tensors[b].device : nullptr; };
            const ProjectionPass projections[] = {
                {"pooled projection Q", &m_tensors[Xq].device, tq, std::uint64_t(p.dq()), qkw, &m_tensors[Wq].device,
                 bias(Bq), &m_tensors[Q].device},
                {"pooled projection K", &xkv, tk, std::uint64_t(p.dkv()), kw, &m_tensors[Wk].device, bias(Bk),
                 &m_tensors[K].device},
                {"pooled projection V", &xv, tk, std::uint64_t(p.dvIn()), kvw, &m_tensors[Wv].device, bias(Bv),
                 &m_tensors[V].device},
            };
            for (const ProjectionPass &pr : projections)
                if (Status s = rec.projection(pr); !s)
                    return s.error();
            rec.computeBarrier();
            if (w.qNorm || w.kNorm) { // per-head q/k norms in place, before RoPE (as the CPU engine)
                const float eps = float(p.spec.qkNormEps);
                if (w.qNorm)
                    if (Status s = rec.headNorm(
                            {"pooled q norm", tq, heads, dk, &m_tensors[Q].device, &m_tensors[QNorm].device, eps});
                        !s)
                        return s.error();
                if (w.kNorm)
                    if (Status s = rec.headNorm(
                            {"pooled k norm", tk, kvHeads, dk, &m_tensors[K].device, &m_tensors[KNorm].device, eps});
                        !s)
                        return s.error();
                rec.computeBarrier();
            }
            if (p.spec.rope) { // rotated in place: the pooled path keeps no vectors before RoPE
                const Buffer &q = m_tensors[Q].device, &k = m_tensors[K].device;
                const RopePass ropes[] = {
                    {"pooled RoPE Q", tq, heads, dk, &q, &q, &m_tensors[RopeQ].device},
                    {"pooled RoPE K", tk, kvHeads, dk, &k, &k, &m_tensors[RopeK].device},
                };
                for (const RopePass &r : ropes)
                    if (Status s = rec.rope(r); !s)
                        return s.error();
                rec.computeBarrier();
            }
        }

        PooledPush push = base;
        push.r0 = std::uint32_t(r0);
        push.r1 = std::uint32_t(r1);
        if (Status s = dispatch(cmd, *m_rows,
                                {range(Q), range(K), range(PadBits), range(CustomBits), range(V), range(Context),
                                 range(Entropy), range(Stats), range(Sinks)},
                                push, {r1 - r0, heads, 1},
                                [](PooledPush &pp, std::uint64_t x, std::uint64_t y, std::uint64_t) {
                                    pp.x0 = std::uint32_t(x);
                                    pp.h0 = std::uint32_t(y);
                                });
            !s)
            return s.error();
        rec.computeBarrier();
        // The query bins this chunk's rows fall in.
        const std::uint64_t a0 = std::uint64_t(binOf(std::int64_t(r0 - q0), std::int64_t(rows), std::int64_t(nq))),
                            a1 = std::uint64_t(binOf(std::int64_t(r1 - 1 - q0), std::int64_t(rows), std::int64_t(nq)));
        std::uint64_t aFirst = a0, aLast = a1; // binStart may round: widen by one, the shader clips
        if (aFirst > 0)
            --aFirst;
        aLast = std::min(aLast + 1, nq - 1);
        push.x0 = push.y0 = push.h0 = 0;
        if (Status s = dispatch(cmd, *m_cells,
                                {range(Q), range(K), range(PadBits), range(CustomBits), range(Stats), range(Pooled),
                                 range(RowStart), range(KeyStart)},
                                push, {cellGroups, aLast - aFirst + 1, slots},
                                [aFirst](PooledPush &pp, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
                                    pp.x0 = std::uint32_t(x);
                                    pp.y0 = std::uint32_t(aFirst + y);
                                    pp.h0 = std::uint32_t(z);
                                });
            !s)
            return s.error();
        rec.computeBarrier();

        if (last) {
            if (w.o && allKeys) { // the block's rows (a context row needs every key)
                GemmPass out;
                out.name = "pooled output projection";
                out.m = rows;
                out.n = dout;
                out.k = vw;
                out.a = {&m_tensors[Context].device, q0 * vw, vw, 1, 0};
                out.b = {&m_tensors[Wo].device, 0, dout, 1, 0};
                out.c = {&m_tensors[Output].device, q0 * dout, dout, 1, 0};
                out.bias = bytes[Bo] ? &m_tensors[Bo].device : nullptr;
                if (Status s = rec.gemm(out); !s)
                    return s.error();
            }
            bool readStaged = false;
            for (int s = 0; s < SlotCount; ++s)
                readStaged |= isOutput(s) && m_tensors[size_t(s)].staging.handle() != VK_NULL_HANDLE;
            if (readStaged) {
                sh.commands.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
                for (int s = 0; s < SlotCount; ++s) {
                    const Tensor &t = m_tensors[size_t(s)];
                    if (!isOutput(s) || t.staging.handle() == VK_NULL_HANDLE)
                        continue;
                    const VkBufferCopy region{0, 0, t.bytes};
                    fn.vkCmdCopyBuffer(cmd, t.device.handle(), t.staging.handle(), 1, &region);
                }
                sh.commands.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
            } else {
                sh.commands.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
            }
            staged |= readStaged;
        }
        stats.dispatches += std::uint64_t(rec.dispatches());

        if (sh.fault == VulkanFault::Timeout) {
            // Submitted for real, then given up on without waiting, as a timed-out wait leaves it.
            if (Status s = sh.commands.submit(); !s)
                return s.error();
            return vkError("vkWaitForFences (injected fault: gave up without waiting)", VK_TIMEOUT);
        }
        if (Status s = sh.commands.submitAndWait(sh.submitTimeoutNs); !s)
            return s.error();
        ++stats.submissions;
        if (last)
            for (int s = 0; s < SlotCount; ++s)
                stats.readBack += isOutput(s) ? bytes[size_t(s)] : 0;
        sh.descriptors.reset(); // the submission is finished: its descriptor sets are free
        if (options.progress)
            options.progress->done.fetch_add(1, std::memory_order_relaxed);
        if (sh.fault == VulkanFault::DeviceLost)
            return vkError("vkWaitForFences (injected fault)", VK_ERROR_DEVICE_LOST);
    }
    stats.staging = staged;

    auto view = [&](Slot s) {
        const Tensor &t = m_tensors[s];
        return static_cast<const float *>(t.staging.handle() != VK_NULL_HANDLE ? t.staging.mapped()
                                                                               : t.device.mapped());
    };
    using ConstMap = Eigen::Map<const MatrixF>;
    PooledResult result;
    const Eigen::Index eq = Eigen::Index(nq), ek = Eigen::Index(nk);
    const auto cellsOf = [&](std::uint64_t slot, double by) {
        MatrixF cells = ConstMap(view(Pooled) + slot * nq * nk, eq, ek);
        for (Eigen::Index a = 0; a < eq; ++a)
            for (Eigen::Index b = 0; b < ek; ++b) {
                const double area =
                    options.mode == PoolMode::Mean
                        ? double((binStart(a + 1, std::int64_t(rows), eq) - binStart(a, std::int64_t(rows), eq)) *
                                 (binStart(b + 1, std::int64_t(keys), ek) - binStart(b, std::int64_t(keys), ek)))
                        : 1.0;
                cells(a, b) = float(double(cells(a, b)) / (by * area));
            }
        return cells;
    };
    for (std::uint64_t h = 0; h < heads; ++h)
        result.pooled.push_back(cellsOf(h, 1.0));
    if (options.headMean)
        result.headMean = cellsOf(heads, double(heads)); // the slot holds the sum over heads
    // Entropies and the output need every key's weight: only for blocks of all keys, and only
    // the block's rows (as the CPU engine returns them).
    if (allKeys) {
        const Eigen::Index first = Eigen::Index(q0), count = Eigen::Index(rows);
        result.entropy = ConstMap(view(Entropy), p.spec.heads, p.tq()).middleCols(first, count);
        result.output = w.o ? MatrixF(ConstMap(view(Output), p.tq(), p.dOut()).middleRows(first, count))
                            : MatrixF(ConstMap(view(Context), p.tq(), p.vWidth()).middleRows(first, count));
    }
    return result;
}

} // namespace attnscope::vk
