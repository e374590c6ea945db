#include "gpu/VulkanPooled.h"

#include "gpu/VulkanPooledSource.h"

#include "core/ErrorCode.h"
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

constexpr std::uint32_t kCellBindings = 9;                // pooled_cells.comp; pooled_rows.comp binds kPooledBindings
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
                                                         "positions",
                                                         "Q",
                                                         "K",
                                                         "V",
                                                         "row statistics",
                                                         "context",
                                                         "entropy",
                                                         "weights_pooled",
                                                         "output"};

bool isOutput(int s)
{
    return s >= PooledEngine::Context;
}

// Read whole by the pooled shaders, so one binding must hold all of it.
bool boundWhole(int s)
{
    return s == PooledEngine::Sinks || s == PooledEngine::PadBits || s == PooledEngine::CustomBits ||
           s == PooledEngine::RowStart || s == PooledEngine::KeyStart || s == PooledEngine::Positions ||
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

Status PooledEngine::allocate(const PooledShared &sh, const std::array<std::uint64_t, SlotCount> &bytes,
                              const std::array<bool, SlotCount> &upload)
{
    if (bytes == m_bytes && upload == m_upload && m_staged == sh.forceStaging && m_tensors[Q].bytes != 0)
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
        const bool in = upload[size_t(s)];
        if ((in || isOutput(s)) && (!t.device.mapped() || sh.forceStaging)) {
            auto staging = Buffer::create(sh.device, t.bytes, in ? MemoryUse::Upload : MemoryUse::Readback,
                                          std::string(kSlotNames[s]) + " (staging)");
            if (!staging)
                return staging.error();
            t.staging = std::move(*staging);
        }
    }
    m_bytes = bytes;
    m_upload = upload;
    m_staged = sh.forceStaging;
    return Ok{};
}

Result<PooledResult> PooledEngine::execute(const PooledShared &sh, const PooledSource &src, const PoolOptions &options,
                                           PooledRunStats &stats)
{
    const std::uint64_t f = sizeof(float), tq = src.tq, tk = src.tk, heads = src.heads;
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

    std::array<std::uint64_t, SlotCount> bytes = src.bytes;
    std::array<bool, SlotCount> upload = src.upload;
    bytes[RowStart] = (nq + 1) * 4;
    bytes[KeyStart] = (nk + 1) * 4;
    bytes[Stats] = 2 * heads * tq * f;
    bytes[Entropy] = heads * tq * f;
    bytes[Pooled] = slots * nq * nk * f;
    upload[RowStart] = upload[KeyStart] = true;
    for (int s = 0; s < SlotCount; ++s)
        upload[size_t(s)] = upload[size_t(s)] && bytes[size_t(s)] != 0;

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
    if (Status s = allocate(sh, bytes, upload); !s)
        return s.error();

    // Inputs: the source's, then the bin boundaries.
    auto hostOf = [&](Slot s) -> void * {
        Tensor &t = m_tensors[s];
        return t.staging.handle() != VK_NULL_HANDLE ? t.staging.mapped() : t.device.mapped();
    };
    stats = {};
    src.fill(hostOf);
    for (auto [slot, first, count, n] : {std::tuple{RowStart, q0, rows, nq}, std::tuple{KeyStart, k0, keys, nk}}) {
        auto *starts = static_cast<std::uint32_t *>(hostOf(slot));
        for (std::uint64_t b = 0; b <= n; ++b)
            starts[size_t(b)] =
                std::uint32_t(first + std::uint64_t(binStart(std::int64_t(b), std::int64_t(count), std::int64_t(n))));
    }
    for (int s = 0; s < SlotCount; ++s)
        stats.uploaded += upload[size_t(s)] ? bytes[size_t(s)] : 0;

    // Chunks of query rows of bounded cost: per row, two sweeps of scores and one of weights·V
    // in the row pass and one sweep of scores in the cell pass, over every key and head. The
    // cell pass indexes (rows of a chunk) x (keys of a bin) in 32 bits.
    const std::uint64_t budget = sh.workPerSubmission ? sh.workPerSubmission : kDefaultPooledWork;
    const std::uint64_t workPerRow = std::max<std::uint64_t>(1, tk * heads * (3 * src.dk + src.dv));
    const std::uint64_t chunkRows = std::clamp<std::uint64_t>(budget / workPerRow, 1, 0xffffffffull / tk);

    PooledPush base{};
    base.tq = std::uint32_t(tq);
    base.tk = std::uint32_t(tk);
    base.dk = std::uint32_t(src.dk);
    base.dv = std::uint32_t(src.dv);
    base.qkw = std::uint32_t(src.qkw);
    base.vw = std::uint32_t(src.vw);
    base.nq = std::uint32_t(nq);
    base.nk = std::uint32_t(nk);
    base.flags = src.maskFlags | (options.mode == PoolMode::Mean ? kMean : 0) | (src.softcap ? kSoftcap : 0);
    // Small cells (N close to T) would leave most of a workgroup idle: one thread per cell.
    const std::uint64_t cellPairs = ((rows + nq - 1) / nq) * ((keys + nk - 1) / nk);
    const bool cellPerThread = cellPairs < kWorkgroup;
    if (cellPerThread)
        base.flags |= kCellPerThread;
    const std::uint64_t cellGroups = cellPerThread ? (nk + kWorkgroup - 1) / kWorkgroup : nk;
    base.words = std::uint32_t((tk + 31) / 32);
    base.scale = src.scale;
    base.window = std::uint32_t(src.window);
    base.group = std::uint32_t(src.group);
    base.softcap = src.softcap.value_or(0.0f);

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
                if (!m_upload[size_t(s)] || t.staging.handle() == VK_NULL_HANDLE)
                    continue;
                const VkBufferCopy region{0, 0, t.bytes};
                fn.vkCmdCopyBuffer(cmd, t.staging.handle(), t.device.handle(), 1, &region);
                staged = true;
            }
            if (staged)
                sh.commands.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
            if (src.prepare)
                if (Status s = src.prepare(rec, buffer); !s)
                    return s.error();
        }

        PooledPush push = base;
        push.r0 = std::uint32_t(r0);
        push.r1 = std::uint32_t(r1);
        if (Status s = dispatch(cmd, *m_rows,
                                {range(Q), range(K), range(PadBits), range(CustomBits), range(Positions), range(V),
                                 range(Context), range(Entropy), range(Stats), range(Sinks)},
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
                                {range(Q), range(K), range(PadBits), range(CustomBits), range(Positions), range(Stats),
                                 range(Pooled), range(RowStart), range(KeyStart)},
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
            if (src.finish && allKeys) // the block's rows (a context row needs every key)
                if (Status s = src.finish(rec, buffer, q0, rows); !s)
                    return s.error();
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

    auto view = [&](Slot s) -> const float * {
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
        result.entropy = ConstMap(view(Entropy), Eigen::Index(heads), Eigen::Index(tq)).middleCols(first, count);
        if (src.output)
            result.output = src.output(view, first, count);
    }
    return result;
}

} // namespace attnscope::vk
