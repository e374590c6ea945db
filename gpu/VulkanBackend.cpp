#include "gpu/VulkanBackend.h"

#include "core/ErrorCode.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Mask.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"
#include "core/models/ForwardEngine.h"
#include "gpu/VulkanForward.h"
#include "gpu/VulkanPasses.h"
#include "gpu/VulkanPooled.h"
#include "gpu/VulkanResources.h"
#include "shaders/EmbeddedShaders.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace attnscope {

using namespace vk;

namespace {

// Ten minutes: long enough for lavapipe on a large problem, short enough that a hung GPU
// turns into an error (and a CPU fallback) instead of a frozen app.
constexpr std::uint64_t kSubmitTimeoutNs = 600ull * 1000 * 1000 * 1000;
constexpr std::uint32_t kSoftmaxWorkgroup = 128;

// The buffers of one compute. Inputs are uploaded, outputs read back into the trace. Under RoPE
// the projections write QPre and KPre (the trace's vectors before the rotation) and rope.comp
// rotates them into Q and K with core's cos/sin tables (RopeQ, RopeK); without it QPre, KPre
// and the tables are empty and the projections write Q and K. Per-head q/k norms (QNorm, KNorm:
// dK weights each) normalise what the projections wrote in place, before RoPE, so QPre and KPre
// hold the normalised vectors (the CPU's qBeforeRope).
enum Slot {
    Xq,
    Xkv,
    Xv,
    Wq,
    Wk,
    Wv,
    Wo,
    Bq,
    Bk,
    Bv,
    Bo,
    MaskBits,
    Sinks,
    RopeQ,
    RopeK,
    QNorm,
    KNorm,
    QPre,
    KPre,
    Q,
    K,
    V,
    S,
    W,
    C,
    O,
    SlotCount
};
constexpr Slot kFirstOutput = QPre;
const char *const kSlotNames[SlotCount] = {"query.x",
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
                                           "mask",
                                           "weights.sinks",
                                           "RoPE table (queries)",
                                           "RoPE table (keys)",
                                           "weights.qNorm",
                                           "weights.kNorm",
                                           "Q before RoPE",
                                           "K before RoPE",
                                           "Q",
                                           "K",
                                           "V",
                                           "scores",
                                           "weights",
                                           "context",
                                           "output"};

struct GpuTensor {
    Buffer device;
    Buffer staging; // only where the device buffer is not host-visible (or staging is forced)
    std::uint64_t bytes = 0;
};

// Everything the buffer set depends on; the numbers themselves may change freely.
using ShapeKey = std::array<std::int64_t, 17>;

ShapeKey shapeKey(const AttentionProblem &p)
{
    const auto &w = p.weights;
    return {p.tq(),
            p.tk(),
            p.dq(),
            p.dkv(),
            p.spec.heads,
            p.spec.headDimQK,
            p.spec.headDimV,
            p.dOut(),
            p.spec.mode == AttentionMode::Cross,
            w.o.has_value(),
            (w.qBias ? 1 : 0) | (w.kBias ? 2 : 0) | (w.vBias ? 4 : 0),
            w.oBias.has_value(),
            p.hasSeparateValue() ? p.dvIn() : 0,
            p.spec.keyValueHeads(),
            p.spec.rope.has_value(),
            w.sinks.has_value(),
            (w.qNorm ? 1 : 0) | (w.kNorm ? 2 : 0)};
}

GemmTiling tilingFor(const DeviceInfo &info)
{
    GemmTiling t;
    // 256 invocations and 8 KiB of shared memory; halve the x extent on devices at the
    // Vulkan minimum of 128 invocations.
    if (info.maxWorkGroupInvocations < t.wgX * t.wgY)
        t.wgX = 8;
    return t;
}

} // namespace

struct VulkanBackend::State {
    ~State();

    VulkanBackendOptions options;
    VulkanFault fault = VulkanFault::None;
    std::unique_ptr<Device> device;
    std::uint64_t pipelineCacheLoaded = 0;
    std::unique_ptr<ComputePipeline> gemm, softmax, rope, headNorm;
    std::unique_ptr<PooledEngine> pooled;
    std::unique_ptr<ModelForward> forward;
    ForwardStats forwardStats;
    GemmTiling tiling;
    std::unique_ptr<CommandContext> commands;
    std::unique_ptr<DescriptorArena> descriptors;
    Buffer placeholder;
    PassLimits limits;

    std::array<GpuTensor, SlotCount> tensors;
    ShapeKey key{};
    bool haveBuffers = false;
    std::uint64_t maxAllocationBytes = 0; // the device's, or the tighter test limit
    bool lost = false;
    DeviceTransfers transfers; // bytes only: submissions are the CommandContext's
    Error lostError;           // why the device was given up (wrapped: "the device stopped answering: ...")
    VulkanStats stats;

    // What the pooled and forward engines borrow.
    EngineShared engineShared() const
    {
        return {*device,   *gemm,           tiling, *softmax,           *rope,
                *headNorm, placeholder,     limits, maxAllocationBytes, options.forceStaging,
                fault,     kSubmitTimeoutNs};
    }
    Status allocate(const AttentionProblem &p);
    void upload(Slot slot, const void *data, std::uint64_t bytes);
    const void *readback(Slot slot) const;
    Status record(const AttentionProblem &p, int &dispatches);
    Status run(const AttentionProblem &p);
    // Turns a failure during a compute into the backend's state: a lost device stays lost.
    Error fail(Error error);
};

VulkanBackend::State::~State()
{
    // Nothing below may be destroyed while a submission can still use it: after a timed-out
    // wait the GPU may still be running the last compute. Members are destroyed in reverse
    // order (buffers, descriptor pools, the command pool, pipelines), all after this wait,
    // and the device itself last.
    if (device)
        device->waitIdle();
}

Error VulkanBackend::State::fail(Error error)
{
    if (error.kind == ErrorKind::DeviceLost) {
        // The buffers, descriptor sets and command buffer of a submission that timed out may
        // still be in use: they are kept until the backend is destroyed, after its wait.
        lost = true;
        error = wrappingError("vulkan.deviceLost", error, ErrorKind::DeviceLost);
        lostError = error;
    }
    return prefixedError("Vulkan (" + device->info().label() + "): ", std::move(error));
}

Status VulkanBackend::State::allocate(const AttentionProblem &p)
{
    const ShapeKey k = shapeKey(p);
    if (haveBuffers && k == key)
        return Ok{};
    tensors = {}; // release the old set before allocating the new one
    haveBuffers = false;
    if (fault == VulkanFault::OutOfMemory)
        return vkError("query.x: vkAllocateMemory (injected fault)", VK_ERROR_OUT_OF_DEVICE_MEMORY);

    const std::uint64_t f = sizeof(float), tq = std::uint64_t(p.tq()), tk = std::uint64_t(p.tk()),
                        heads = std::uint64_t(p.spec.heads);
    // A cos and a sin per (row, pair): rows x dK floats.
    const std::uint64_t ropeRow = p.spec.rope ? std::uint64_t(p.spec.headDimQK) * f : 0;
    std::array<std::uint64_t, SlotCount> bytes{};
    bytes[Xq] = tq * std::uint64_t(p.dq()) * f;
    bytes[Xkv] = p.spec.mode == AttentionMode::Cross ? tk * std::uint64_t(p.dkv()) * f : 0;
    bytes[Xv] = p.hasSeparateValue() ? tk * std::uint64_t(p.dvIn()) * f : 0;
    bytes[Wq] = std::uint64_t(p.weights.q.size()) * f;
    bytes[Wk] = std::uint64_t(p.weights.k.size()) * f;
    bytes[Wv] = std::uint64_t(p.weights.v.size()) * f;
    bytes[Wo] = p.weights.o ? std::uint64_t(p.weights.o->size()) * f : 0;
    bytes[Bq] = p.weights.qBias ? std::uint64_t(p.weights.qBias->size()) * f : 0;
    bytes[Bk] = p.weights.kBias ? std::uint64_t(p.weights.kBias->size()) * f : 0;
    bytes[Bv] = p.weights.vBias ? std::uint64_t(p.weights.vBias->size()) * f : 0;
    bytes[Bo] = p.weights.oBias ? std::uint64_t(p.weights.oBias->size()) * f : 0;
    bytes[MaskBits] = tq * ((tk + 31) / 32) * 4;
    bytes[Sinks] = p.weights.sinks ? heads * f : 0;
    bytes[RopeQ] = tq * ropeRow;
    bytes[RopeK] = tk * ropeRow;
    bytes[QNorm] = p.weights.qNorm ? std::uint64_t(p.weights.qNorm->size()) * f : 0;
    bytes[KNorm] = p.weights.kNorm ? std::uint64_t(p.weights.kNorm->size()) * f : 0;
    bytes[Q] = tq * std::uint64_t(p.qkWidth()) * f;
    bytes[K] = tk * std::uint64_t(p.kWidth()) * f;
    bytes[V] = tk * std::uint64_t(p.kvVWidth()) * f;
    bytes[QPre] = p.spec.rope ? bytes[Q] : 0;
    bytes[KPre] = p.spec.rope ? bytes[K] : 0;
    bytes[S] = heads * tq * tk * f;
    bytes[W] = bytes[S];
    bytes[C] = tq * std::uint64_t(p.vWidth()) * f;
    bytes[O] = p.weights.o ? tq * std::uint64_t(p.dOut()) * f : 0;

    // Refuse a problem too large for this device before allocating any of it.
    for (int s = 0; s < SlotCount; ++s)
        if (bytes[size_t(s)] > maxAllocationBytes)
            return codedError("vulkan.tooLarge.allocation",
                              {kSlotNames[s], formatBytes(std::int64_t(bytes[size_t(s)])),
                               formatBytes(std::int64_t(maxAllocationBytes)), device->info().label()},
                              ErrorKind::TooLarge);
    for (int s = 0; s < SlotCount; ++s) {
        if (bytes[size_t(s)] == 0)
            continue;
        GpuTensor &t = tensors[size_t(s)];
        t.bytes = bytes[size_t(s)];
        auto buffer = Buffer::create(*device, t.bytes, MemoryUse::Device, kSlotNames[s]);
        if (!buffer)
            return buffer.error();
        t.device = std::move(*buffer);
        if (!t.device.mapped() || options.forceStaging) {
            auto staging = Buffer::create(*device, t.bytes, s < kFirstOutput ? MemoryUse::Upload : MemoryUse::Readback,
                                          std::string(kSlotNames[s]) + " (staging)");
            if (!staging)
                return staging.error();
            t.staging = std::move(*staging);
        }
    }
    key = k;
    haveBuffers = true;
    ++stats.bufferAllocations;
    return Ok{};
}

void VulkanBackend::State::upload(Slot slot, const void *data, std::uint64_t bytes)
{
    GpuTensor &t = tensors[slot];
    void *dst = t.staging.handle() != VK_NULL_HANDLE ? t.staging.mapped() : t.device.mapped();
    std::memcpy(dst, data, size_t(bytes));
    transfers.uploaded += bytes;
}

const void *VulkanBackend::State::readback(Slot slot) const
{
    const GpuTensor &t = tensors[slot];
    return t.staging.handle() != VK_NULL_HANDLE ? t.staging.mapped() : t.device.mapped();
}

Status VulkanBackend::State::record(const AttentionProblem &p, int &dispatches)
{
    auto begun = commands->begin();
    if (!begun)
        return begun.error();
    VkCommandBuffer cmd = *begun;
    const DeviceFunctions &fn = device->fn();

    bool staged = false;
    for (int s = 0; s < kFirstOutput; ++s) {
        GpuTensor &t = tensors[size_t(s)];
        if (t.staging.handle() == VK_NULL_HANDLE)
            continue;
        const VkBufferCopy region{0, 0, t.bytes};
        fn.vkCmdCopyBuffer(cmd, t.staging.handle(), t.device.handle(), 1, &region);
        staged = true;
    }
    if (staged)
        commands->barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);

    descriptors->reset();
    PassRecorder rec(*device, *commands, *descriptors, *gemm, tiling, *softmax, *rope, *headNorm, placeholder, limits);
    auto buffer = [&](Slot s) { return tensors[s].bytes ? &tensors[s].device : nullptr; };
    AttentionBuffers b;
    b.xq = &tensors[Xq].device;
    b.xkv = p.spec.mode == AttentionMode::Cross ? &tensors[Xkv].device : b.xq;
    b.xv = p.hasSeparateValue() ? &tensors[Xv].device : b.xkv; // its own buffer where a problem gives one
    b.wq = &tensors[Wq].device, b.wk = &tensors[Wk].device, b.wv = &tensors[Wv].device, b.wo = buffer(Wo);
    b.bq = buffer(Bq), b.bk = buffer(Bk), b.bv = buffer(Bv), b.bo = buffer(Bo);
    b.maskBits = &tensors[MaskBits].device, b.sinks = buffer(Sinks);
    b.ropeQ = buffer(RopeQ), b.ropeK = buffer(RopeK), b.qNorm = buffer(QNorm), b.kNorm = buffer(KNorm);
    b.qPre = buffer(QPre), b.kPre = buffer(KPre), b.q = &tensors[Q].device, b.k = &tensors[K].device;
    b.v = &tensors[V].device, b.scores = &tensors[S].device, b.weights = &tensors[W].device;
    b.context = &tensors[C].device, b.output = buffer(O);
    if (Status s = recordAttention(rec, b, AttentionShape::of(p)); !s)
        return s;

    bool readStaged = false;
    for (int s = kFirstOutput; s < SlotCount; ++s)
        readStaged |= tensors[size_t(s)].staging.handle() != VK_NULL_HANDLE;
    if (readStaged) {
        commands->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        for (int s = kFirstOutput; s < SlotCount; ++s) {
            GpuTensor &t = tensors[size_t(s)];
            if (t.staging.handle() == VK_NULL_HANDLE)
                continue;
            const VkBufferCopy region{0, 0, t.bytes};
            fn.vkCmdCopyBuffer(cmd, t.device.handle(), t.staging.handle(), 1, &region);
        }
        commands->barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_ACCESS_HOST_READ_BIT);
    } else {
        commands->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          VK_ACCESS_HOST_READ_BIT);
    }
    stats.staging = staged || readStaged;
    dispatches = rec.dispatches();
    return Ok{};
}

Status VulkanBackend::State::run(const AttentionProblem &p)
{
    if (Status s = allocate(p); !s)
        return s;

    auto put = [&](Slot s, const auto &m) { upload(s, m.data(), std::uint64_t(m.size()) * sizeof(float)); };
    put(Xq, p.xq);
    if (p.spec.mode == AttentionMode::Cross)
        put(Xkv, p.xkv);
    if (p.hasSeparateValue())
        put(Xv, *p.xv);
    put(Wq, p.weights.q);
    put(Wk, p.weights.k);
    put(Wv, p.weights.v);
    if (p.weights.o)
        put(Wo, *p.weights.o);
    if (p.weights.qBias)
        put(Bq, *p.weights.qBias);
    if (p.weights.kBias)
        put(Bk, *p.weights.kBias);
    if (p.weights.vBias)
        put(Bv, *p.weights.vBias);
    if (p.weights.oBias)
        put(Bo, *p.weights.oBias);
    if (p.weights.sinks)
        put(Sinks, *p.weights.sinks);
    if (p.weights.qNorm)
        put(QNorm, *p.weights.qNorm);
    if (p.weights.kNorm)
        put(KNorm, *p.weights.kNorm);
    if (p.spec.rope) {
        const std::vector<float> q = ropeTableForGpu(queryPositions(p), *p.spec.rope, p.spec.headDimQK);
        const std::vector<float> k = ropeTableForGpu(keyPositions(p), *p.spec.rope, p.spec.headDimQK);
        upload(RopeQ, q.data(), q.size() * sizeof(float));
        upload(RopeK, k.data(), k.size() * sizeof(float));
    }

    // The effective mask (the window and given positions included) as bits (1 = allowed), so no -inf ever reaches a
    // buffer.
    const MaskMatrix allowed = effectiveMask(p);
    const std::uint64_t words = (std::uint64_t(p.tk()) + 31) / 32;
    std::vector<std::uint32_t> bits(size_t(std::uint64_t(p.tq()) * words), 0u);
    for (Eigen::Index i = 0; i < allowed.rows(); ++i)
        for (Eigen::Index j = 0; j < allowed.cols(); ++j)
            if (allowed(i, j))
                bits[size_t(std::uint64_t(i) * words + std::uint64_t(j) / 32)] |= 1u << (j % 32);
    upload(MaskBits, bits.data(), bits.size() * sizeof(std::uint32_t));

    int dispatches = 0;
    if (Status s = record(p, dispatches); !s)
        return s;
    if (fault == VulkanFault::Timeout) {
        // Submitted for real, then given up on without waiting, exactly as a fence wait
        // that timed out leaves it: the GPU may still be reading and writing every buffer.
        if (Status s = commands->submit(); !s)
            return s;
        return vkError("vkWaitForFences (injected fault: gave up without waiting)", VK_TIMEOUT);
    }
    if (Status s = commands->submitAndWait(kSubmitTimeoutNs); !s)
        return s;
    ++stats.submissions;
    stats.dispatches = std::uint64_t(dispatches);
    for (int s = kFirstOutput; s < SlotCount; ++s)
        transfers.readBack += tensors[size_t(s)].bytes;
    if (fault == VulkanFault::DeviceLost)
        return vkError("vkWaitForFences (injected fault)", VK_ERROR_DEVICE_LOST);
    return Ok{};
}

Result<std::unique_ptr<VulkanBackend>> VulkanBackend::create(const VulkanBackendOptions &options)
{
    auto state = std::make_unique<State>();
    state->options = options;
    state->fault = options.fault;

    vk::InstanceOptions instanceOptions;
    instanceOptions.validation = options.validation;
    if (state->fault == VulkanFault::PartialInstance)
        instanceOptions.loadLimit = 0; // not even vkDestroyInstance
    auto instance = Instance::create(instanceOptions);
    if (!instance)
        return instance.error();
    const std::string selector = options.device.empty() ? deviceSelectorFromEnvironment() : options.device;
    auto index = chooseDevice((*instance)->devices(), selector);
    if (!index)
        return index.error();
    const DeviceInfo &info = (*instance)->devices()[size_t(*index)];
    if (state->fault == VulkanFault::CreateDevice)
        return vkError("vkCreateDevice on " + info.label() + " (injected fault)", VK_ERROR_INITIALIZATION_FAILED);
    // Two device functions: vkDestroyDevice loads, vkDeviceWaitIdle does not.
    auto device = Device::create(*instance, *index, state->fault == VulkanFault::PartialDevice ? 2 : -1);
    if (!device)
        return device.error();
    state->device = std::move(*device);
    state->pipelineCacheLoaded = state->device->openPipelineCache(options.pipelineCacheDir);
    const Device &d = *state->device;

    state->tiling = tilingFor(d.info());
    const GemmTiling &t = state->tiling;
    const std::uint32_t gemmSpec[] = {t.wgX, t.wgY, t.rm, t.rn, t.bk};
    auto gemm = ComputePipeline::create(d, "gemm.comp", shaders::gemmSpirv(), kGemmBindings, kGemmPushBytes, gemmSpec);
    if (!gemm)
        return gemm.error();
    state->gemm = std::move(*gemm);
    const std::uint32_t softmaxSpec[] = {kSoftmaxWorkgroup};
    auto softmax = ComputePipeline::create(d, "softmax.comp", shaders::softmaxSpirv(), kSoftmaxBindings,
                                           kSoftmaxPushBytes, softmaxSpec);
    if (!softmax)
        return softmax.error();
    state->softmax = std::move(*softmax);
    const std::uint32_t ropeSpec[] = {kRopeWorkgroup};
    auto rope = ComputePipeline::create(d, "rope.comp", shaders::ropeSpirv(), kRopeBindings, kRopePushBytes, ropeSpec);
    if (!rope)
        return rope.error();
    state->rope = std::move(*rope);
    const std::uint32_t headNormSpec[] = {kHeadNormWorkgroup};
    auto headNorm = ComputePipeline::create(d, "headnorm.comp", shaders::headNormSpirv(), kHeadNormBindings,
                                            kHeadNormPushBytes, headNormSpec);
    if (!headNorm)
        return headNorm.error();
    state->headNorm = std::move(*headNorm);
    // The pooled passes bind up to kPooledBindings storage buffers; a device allowing fewer (the
    // Vulkan minimum is 4) computes the pooled path on the CPU engine instead.
    if (d.info().maxStorageBuffersPerStage >= kPooledBindings) {
        auto pooled = PooledEngine::create(d);
        if (!pooled)
            return pooled.error();
        state->pooled = std::move(*pooled);
    }
    auto forward = ModelForward::create(d);
    if (!forward)
        return forward.error();
    state->forward = std::move(*forward);
    auto commands = CommandContext::create(d);
    if (!commands)
        return commands.error();
    state->commands = std::move(*commands);
    state->descriptors = std::make_unique<DescriptorArena>(d);
    auto placeholder = Buffer::create(d, 16, MemoryUse::Device, "placeholder");
    if (!placeholder)
        return placeholder.error();
    state->placeholder = std::move(*placeholder);

    state->maxAllocationBytes = d.maxAllocationBytes();
    if (options.maxAllocationBytes > 0)
        state->maxAllocationBytes = std::min(state->maxAllocationBytes, options.maxAllocationBytes);
    PassLimits &l = state->limits;
    l.binding.maxRangeBytes = d.info().maxStorageBufferRange;
    if (options.maxStorageBufferRange > 0)
        l.binding.maxRangeBytes = std::min(l.binding.maxRangeBytes, options.maxStorageBufferRange);
    l.binding.alignment = d.info().minStorageBufferOffsetAlignment;
    for (int i = 0; i < 3; ++i) {
        l.maxGroups[i] = d.info().maxWorkGroupCount[i];
        if (options.maxWorkGroupCount > 0)
            l.maxGroups[i] = std::min(l.maxGroups[i], options.maxWorkGroupCount);
    }
    return std::unique_ptr<VulkanBackend>(new VulkanBackend(std::move(state)));
}

// The backend's forward engine: the device's ModelForward, with the backend's lost state,
// failure handling and transfer counts.
class VulkanBackend::Forward final : public ForwardEngine
{
public:
    explicit Forward(State &state) : m_state(state) {}

    std::string name() const override { return "vulkan"; }
    bool runs(const TransformerModel &, const ForwardKeep &keep) const override { return ModelForward::runs(keep); }
    Status load(const TransformerModel &model) override
    {
        return run(
            [&](const ForwardShared &shared) { return m_state.forward->load(shared, model, m_state.forwardStats); });
    }
    Result<std::shared_ptr<const ModelRun>> forward(const TransformerModel &model, const Encoding &input,
                                                    const ForwardKeep &keep, const std::atomic<bool> *cancel) override
    {
        return run([&](const ForwardShared &shared) {
            return m_state.forward->forward(shared, model, input, keep, cancel, m_state.forwardStats);
        });
    }
    bool runsTranslation(const TranslationModel &) const override { return true; }
    Result<std::shared_ptr<const TranslationRun>> translate(const TranslationModel &model, const Encoding &source,
                                                            const Encoding &target,
                                                            const std::atomic<bool> *cancel) override
    {
        return run([&](const ForwardShared &shared) {
            return m_state.forward->translate(shared, model, source, target, cancel, m_state.forwardStats);
        });
    }
    Result<MatrixF> op(const ModelOpInput &input)
    {
        return run(
            [&](const ForwardShared &shared) { return m_state.forward->runOp(shared, input, m_state.forwardStats); });
    }

private:
    // Runs `pass` with what the engine borrows; a device failure marks the backend lost.
    template <typename Pass>
    auto run(Pass &&pass) -> decltype(pass(std::declval<const ForwardShared &>()))
    {
        State &st = m_state;
        if (st.lost)
            return prefixedError("Vulkan (" + st.device->info().label() + "): ",
                                 wrappingError("vulkan.lostEarlier", st.lostError, ErrorKind::DeviceLost));
        const ForwardShared shared{st.engineShared(), st.options.layersPerSubmission ? st.options.layersPerSubmission
                                                                                     : kLayersPerSubmission};
        auto result = pass(shared);
        if (!result && result.kind() != ErrorKind::Cancelled && result.kind() != ErrorKind::NonFinite)
            return st.fail(result.error());
        return result;
    }

    State &m_state;
};

VulkanBackend::VulkanBackend(std::unique_ptr<State> state)
    : m_state(std::move(state)), m_forward(std::make_unique<Forward>(*m_state))
{
}

VulkanBackend::~VulkanBackend()
{
    // What the driver compiled, for the next start; a cache that cannot be written costs only
    // that compilation (a lost device's cache is not trusted).
    if (!m_state->lost)
        (void)m_state->device->savePipelineCache();
}

std::uint64_t VulkanBackend::pipelineCacheLoadedBytes() const
{
    return m_state->pipelineCacheLoaded;
}

ForwardEngine *VulkanBackend::forwardEngine()
{
    return m_forward.get();
}

Result<MatrixF> VulkanBackend::runModelOp(const ModelOpInput &input)
{
    return m_forward->op(input);
}

bool VulkanBackend::usesCpuForPooled() const
{
    return m_state->pooled == nullptr;
}

std::string VulkanBackend::deviceName() const
{
    return m_state->device->info().label();
}

const DeviceInfo &VulkanBackend::deviceInfo() const
{
    return m_state->device->info();
}

const VulkanStats &VulkanBackend::stats() const
{
    return m_state->stats;
}

std::optional<DeviceTransfers> VulkanBackend::transfers() const
{
    DeviceTransfers t = m_state->transfers;
    t.submissions = m_state->commands->submissions() + m_state->forwardStats.submissions;
    t.uploaded += m_state->forwardStats.uploaded;
    t.readBack += m_state->forwardStats.readBack;
    return t;
}

bool VulkanBackend::lost() const
{
    return m_state->lost;
}

Result<AttentionTrace> VulkanBackend::compute(const AttentionProblem &p)
{
    if (Status s = validateProblem(p); !s)
        return s.error();
    State &st = *m_state;
    if (st.lost)
        return prefixedError("Vulkan (" + deviceName() + "): ",
                             wrappingError("vulkan.lostEarlier", st.lostError, ErrorKind::DeviceLost));
    // One submission runs every pass; it cannot be stopped once submitted, so a cancelled
    // request is honoured before it and before the results are copied out.
    const Error cancelled{"the computation was cancelled", ErrorKind::Cancelled};
    if (cancelRequested())
        return cancelled;
    ++st.stats.computes;
    if (Status s = st.run(p); !s)
        return st.fail(s.error());
    if (cancelRequested())
        return cancelled;

    const HeadLayout layout = HeadLayout::of(p.spec);
    const int heads = layout.heads, kvHeads = layout.kvHeads, dk = layout.headDimQK, dv = layout.headDimV;
    const Eigen::Index tq = p.tq(), tk = p.tk();
    using ConstMap = Eigen::Map<const MatrixF>;
    auto view = [&](Slot s, Eigen::Index rows, Eigen::Index cols, std::uint64_t offset = 0) {
        return ConstMap(static_cast<const float *>(st.readback(s)) + offset, rows, cols);
    };
    AttentionTrace t;
    t.allowed = effectiveMask(p);
    t.emptyRows = emptyMaskRows(t.allowed);
    const ConstMap q = view(Q, tq, p.qkWidth()), k = view(K, tk, p.kWidth()), v = view(V, tk, p.kvVWidth());
    t.context = view(C, tq, p.vWidth());
    t.q.resize(size_t(heads));
    t.k.resize(size_t(kvHeads));
    t.v.resize(size_t(kvHeads));
    t.scores.resize(size_t(heads));
    t.weights.resize(size_t(heads));
    t.headOutputs.resize(size_t(heads));
    for (int h = 0; h < heads; ++h) {
        const size_t i = size_t(h);
        const std::uint64_t headOffset = std::uint64_t(h) * std::uint64_t(tq) * std::uint64_t(tk);
        t.q[i] = q.middleCols(layout.queryColumn(h), dk);
        t.scores[i] = view(S, tq, tk, headOffset);
        t.weights[i] = view(W, tq, tk, headOffset);
        t.headOutputs[i] = t.context.middleCols(layout.contextColumn(h), dv);
    }
    for (int g = 0; g < kvHeads; ++g) {
        t.k[size_t(g)] = k.middleCols(layout.keyColumn(g), dk);
        t.v[size_t(g)] = v.middleCols(layout.valueColumn(g), dv);
    }
    if (p.spec.rope) {
        const ConstMap qPre = view(QPre, tq, p.qkWidth()), kPre = view(KPre, tk, p.kWidth());
        for (int h = 0; h < heads; ++h)
            t.qBeforeRope.push_back(qPre.middleCols(layout.queryColumn(h), dk));
        for (int g = 0; g < kvHeads; ++g)
            t.kBeforeRope.push_back(kPre.middleCols(layout.keyColumn(g), dk));
    }
    t.output = p.weights.o ? MatrixF(view(O, tq, p.dOut())) : t.context;
    return t;
}

Result<PooledResult> VulkanBackend::computePooled(const AttentionProblem &p, const PoolOptions &options)
{
    if (options.bins < 1)
        return Error{"pool: expected a bin count of at least 1, found " + std::to_string(options.bins)};
    // Every check but the full trace's size, which this path never holds.
    if (Status s = validateProblem(p, ProblemLimits{}); !s)
        return s.error();
    // The shaders pool any block (the GUI's zoom) of any head and the head mean; without the
    // pooled pipelines the CPU engine answers.
    if (!m_state->pooled)
        return AttentionBackend::computePooled(p, options);
    return runPooled([&](PooledEngine &engine, const PooledShared &shared, PooledRunStats &run) {
        return engine.run(shared, p, options, run);
    });
}

Result<PooledResult> VulkanBackend::computePooledQk(const QkLayer &layer, const PoolOptions &options)
{
    if (options.bins < 1)
        return Error{"pool: expected a bin count of at least 1, found " + std::to_string(options.bins)};
    if (Status s = validateQkLayer(layer); !s)
        return s.error();
    if (!m_state->pooled)
        return AttentionBackend::computePooledQk(layer, options);
    return runPooled([&](PooledEngine &engine, const PooledShared &shared, PooledRunStats &run) {
        return engine.runQk(shared, layer, options, run);
    });
}

Result<PooledResult> VulkanBackend::runPooled(
    const std::function<Result<PooledResult>(PooledEngine &, const PooledShared &, PooledRunStats &)> &pass)
{
    State &st = *m_state;
    if (st.lost)
        return prefixedError("Vulkan (" + deviceName() + "): ",
                             wrappingError("vulkan.lostEarlier", st.lostError, ErrorKind::DeviceLost));
    ++st.stats.computes;
    const PooledShared shared{st.engineShared(), *st.commands, *st.descriptors, st.options.pooledWorkPerSubmission};
    PooledRunStats run;
    auto result = pass(*st.pooled, shared, run);
    st.stats.submissions += run.submissions;
    st.transfers.uploaded += run.uploaded;
    st.transfers.readBack += run.readBack;
    st.stats.dispatches = run.dispatches;
    st.stats.staging = run.staging;
    if (!result)
        return st.fail(result.error());
    return result;
}

Result<std::vector<DeviceInfo>> listVulkanDevices()
{
    auto instance = Instance::create();
    if (!instance)
        return instance.error();
    return (*instance)->devices();
}

} // namespace attnscope
