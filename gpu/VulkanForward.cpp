#include "gpu/VulkanForward.h"

#include "core/attention/Mask.h"
#include "core/io/MemoryLimits.h"
#include "core/models/ModelTensors.h"
#include "shaders/EmbeddedShaders.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnscope::vk {

namespace {

// The shaders' interfaces (mirroring their push_constant blocks).
struct RowNormPush {
    std::uint32_t rows, cols, flags;
    float eps;
};
struct ElementwisePush {
    std::uint32_t count, op, activation;
};
struct EmbedPush {
    std::uint32_t rows, cols, first, flags;
    float scale;
    std::uint32_t vocabStart, vocabCount;
};
constexpr std::uint32_t kRowNormBindings = 4, kElementwiseBindings = 2, kEmbedBindings = 5;
constexpr std::uint32_t kRowNormWorkgroup = 128, kElementwiseWorkgroup = 256, kEmbedWorkgroup = 256;
constexpr std::uint32_t kFlagNormLayer = 1, kFlagEmbedPositions = 1, kFlagEmbedTokenType = 2; // common.glsl
constexpr std::uint32_t kOpAdd = 0, kOpActivate = 1, kOpGate = 2;                             // elementwise.comp

// elementwise.comp's ACT_* in core's Activation order.
std::uint32_t activationCode(Activation a)
{
    switch (a) {
    case Activation::GeluTanh:
        return 0;
    case Activation::GeluErf:
        return 1;
    case Activation::Silu:
        return 2;
    case Activation::Relu:
        return 3;
    }
    return 0;
}

constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

// Every write so far, shader or copy, before every later read or write: the steps of a layer
// depend on each other in a chain, and a copy out must finish before the buffer is written again.
void fullBarrier(CommandContext &commands)
{
    commands.barrier(kWorkStages, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, kWorkStages,
                     VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                         VK_ACCESS_TRANSFER_WRITE_BIT);
}

// A tensor the host writes before a forward (ids, masks, RoPE tables), with its staging buffer
// where the device buffer is not host-visible.
struct InputTensor {
    Buffer device;
    Buffer staging;
    std::uint64_t bytes = 0;
};

} // namespace

// One layer's weights on the device; a tensor the layer does not have is an empty Buffer.
struct LayerOnDevice {
    Buffer q, k, v, o, qBias, kBias, vBias, oBias, qNorm, kNorm, sinks;
    Buffer norm1, norm1Bias, postAttentionNorm, norm2, norm2Bias, postMlpNorm;
    Buffer up, upBias, gate, gateBias, down, downBias;
};

struct ModelForward::Weights {
    const TransformerWeights *key = nullptr; // the weights these are (kept alive by `source`)
    std::shared_ptr<const TransformerWeights> source;
    Buffer tokens, positions, tokenType, embeddingNorm, embeddingNormBias, finalNorm, finalNormBias;
    std::vector<LayerOnDevice> layers;
    std::uint64_t bytes = 0;
};

struct ModelForward::Arena {
    const TransformerWeights *model = nullptr;
    std::int64_t tokens = 0;
    // The residual stream and a second buffer of its shape (post-norm layers swap them), the
    // attention's output where a norm follows it, the attention's own tensors, the MLP's.
    Buffer x, y, attended;
    Buffer qPre, kPre, q, k, v, scores, weights, context;
    Buffer up, gate;
    InputTensor ids;
    std::vector<InputTensor> masks, ropes;            // distinct ones
    std::vector<int> maskOf, ropeOf;                  // per layer: an index into masks, ropes (-1: none)
    std::vector<Buffer> hidden, maps;                 // read back: L + 1 hidden states, L maps
    std::vector<std::vector<std::uint32_t>> maskData; // what masks hold, uploaded per forward
    std::vector<std::vector<float>> ropeData;         // what ropes hold
};

namespace {

// Creates a buffer of `bytes` for `use`, refusing one above the backend's (test) allocation limit.
Result<Buffer> makeBuffer(const ForwardShared &shared, std::uint64_t bytes, MemoryUse use, const std::string &what)
{
    if (bytes > shared.maxAllocationBytes)
        return Error{"vulkan forward: " + what + " needs " + formatBytes(std::int64_t(bytes)) + "; the device allows " +
                         formatBytes(std::int64_t(shared.maxAllocationBytes)) + " in one allocation",
                     ErrorKind::TooLarge};
    return Buffer::create(shared.device, bytes, use, what);
}

// Copies into the device, through staging buffers where the device memory is not mapped:
// everything staged is copied in one submission per batch of about 256 MiB.
class Uploader
{
public:
    Uploader(const ForwardShared &shared, CommandContext &commands, ForwardStats &stats)
        : m_shared(shared), m_commands(commands), m_stats(stats)
    {
    }

    // A device buffer holding `count` floats from `data` (nothing for count 0).
    Result<Buffer> tensor(const float *data, std::uint64_t count, const std::string &what)
    {
        if (count == 0)
            return Buffer();
        const std::uint64_t bytes = count * sizeof(float);
        auto device = makeBuffer(m_shared, bytes, MemoryUse::Device, what);
        if (!device)
            return device.error();
        m_stats.uploaded += bytes;
        if (device->mapped() && !m_shared.forceStaging) {
            std::memcpy(device->mapped(), data, bytes);
            return device;
        }
        auto staging = makeBuffer(m_shared, bytes, MemoryUse::Upload, what + " (staging)");
        if (!staging)
            return staging.error();
        std::memcpy(staging->mapped(), data, bytes);
        m_pending.push_back({std::move(*staging), device->handle(), bytes});
        m_pendingBytes += bytes;
        if (m_pendingBytes >= (std::uint64_t(256) << 20))
            if (Status s = flush(); !s)
                return s.error();
        return device;
    }

    Status flush()
    {
        if (m_pending.empty())
            return Ok{};
        auto cmd = m_commands.begin();
        if (!cmd)
            return cmd.error();
        for (const Pending &p : m_pending) {
            const VkBufferCopy region{0, 0, p.bytes};
            m_shared.device.fn().vkCmdCopyBuffer(*cmd, p.staging.handle(), p.device, 1, &region);
        }
        m_commands.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
        if (Status s = m_commands.submitAndWait(m_shared.submitTimeoutNs); !s)
            return s;
        ++m_stats.submissions;
        m_pending.clear();
        m_pendingBytes = 0;
        return Ok{};
    }

private:
    struct Pending {
        Buffer staging;
        VkBuffer device;
        std::uint64_t bytes;
    };
    const ForwardShared &m_shared;
    CommandContext &m_commands;
    ForwardStats &m_stats;
    std::vector<Pending> m_pending;
    std::uint64_t m_pendingBytes = 0;
};

Result<Buffer> upload(Uploader &up, const MatrixF &m, const std::string &what)
{
    return up.tensor(m.data(), std::uint64_t(m.size()), what);
}

Result<Buffer> upload(Uploader &up, const VectorF &v, const std::string &what)
{
    return up.tensor(v.data(), std::uint64_t(v.size()), what);
}

Result<Buffer> upload(Uploader &up, const std::optional<VectorF> &v, const std::string &what)
{
    return v ? upload(up, *v, what) : Result<Buffer>(Buffer());
}

Result<Buffer> upload(Uploader &up, const WeightMatrix &w, const std::string &what)
{
    if (!w.isMapped() && w.rows() == 0)
        return Buffer();
    const MatrixF m = w.toFloat(); // one matrix at a time in float32 on the host
    return upload(up, m, what);
}

// The most units of `unitBytes` one binding may hold: within the device's storage buffer range,
// and a whole number of offset alignments so the next chunk's binding may start where it ends.
std::uint64_t unitsPerBinding(std::uint64_t unitBytes, const BindingLimits &limits)
{
    std::uint64_t n = limits.maxRangeBytes / unitBytes;
    while (n > 0 && (n * unitBytes) % limits.alignment != 0)
        --n;
    return n;
}

// Records the model's own passes (norms, element-wise steps, embeddings) into a command buffer,
// each split into chunks whose bindings fit the device's storage buffer range (lavapipe's is
// 128 MiB, less than GPT-2's token embedding).
class ModelPasses
{
public:
    ModelPasses(const ForwardShared &shared, CommandContext &commands, DescriptorArena &descriptors,
                const ComputePipeline &rowNorm, const ComputePipeline &elementwise, const ComputePipeline &embed)
        : m_shared(shared), m_commands(commands), m_descriptors(descriptors), m_rowNorm(rowNorm),
          m_elementwise(elementwise), m_embed(embed)
    {
    }

    // y = norm(x) over rows of `cols` (weight w, bias b: LayerNorm; no bias: RMSNorm).
    Status rowNorm(const Buffer &x, const Buffer &y, std::uint64_t rows, std::uint64_t cols, const Buffer &w,
                   const Buffer &b, double eps)
    {
        const bool layer = b.handle() != VK_NULL_HANDLE;
        const std::uint64_t rowBytes = cols * sizeof(float), step = unitsPerBinding(rowBytes, limits());
        if (step == 0)
            return tooLarge("a row to normalise");
        for (std::uint64_t r0 = 0; r0 < rows; r0 += step) {
            const std::uint64_t n = std::min(step, rows - r0);
            RowNormPush push{std::uint32_t(n), std::uint32_t(cols), layer ? kFlagNormLayer : 0u, float(eps)};
            const BufferRange ranges[] = {{x.handle(), r0 * rowBytes, n * rowBytes},
                                          {y.handle(), r0 * rowBytes, n * rowBytes},
                                          whole(w),
                                          whole(layer ? b : m_shared.placeholder)};
            if (Status s = dispatch(m_rowNorm, ranges, &push, sizeof push, grid(n)); !s)
                return s;
        }
        return Ok{};
    }

    // x += b, x = act(x) or x = x·act(b) over `count` elements.
    Status elementwise(const Buffer &x, const Buffer *b, std::uint64_t count, std::uint32_t op, Activation act)
    {
        const std::uint64_t step = unitsPerBinding(sizeof(float), limits());
        for (std::uint64_t e0 = 0; e0 < count; e0 += step) {
            const std::uint64_t n = std::min(step, count - e0), bytes = n * sizeof(float);
            ElementwisePush push{std::uint32_t(n), op, activationCode(act)};
            const BufferRange ranges[] = {{x.handle(), e0 * sizeof(float), bytes},
                                          b ? BufferRange{b->handle(), e0 * sizeof(float), bytes}
                                            : whole(m_shared.placeholder)};
            if (Status s = dispatch(m_elementwise, ranges, &push, sizeof push,
                                    grid((n + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup));
                !s)
                return s;
        }
        return Ok{};
    }

    // Rows of y from the token table at ids (plus positions and token type 0), times `scale`:
    // per chunk of the table's rows, per chunk of y's rows; each element is written by the one
    // chunk of the table that holds its id.
    Status embed(const Buffer &ids, const Buffer &tokens, std::uint64_t vocab, const Buffer &positions,
                 const Buffer &tokenType, const Buffer &y, std::uint64_t rows, std::uint64_t cols, float scale)
    {
        const bool pos = positions.handle() != VK_NULL_HANDLE, type = tokenType.handle() != VK_NULL_HANDLE;
        const std::uint64_t rowBytes = cols * sizeof(float), step = unitsPerBinding(rowBytes, limits());
        if (step == 0)
            return tooLarge("an embedding row");
        for (std::uint64_t v0 = 0; v0 < vocab; v0 += step) {
            const std::uint64_t nv = std::min(step, vocab - v0);
            for (std::uint64_t r0 = 0; r0 < rows; r0 += step) {
                const std::uint64_t n = std::min(step, rows - r0);
                EmbedPush push{std::uint32_t(n),
                               std::uint32_t(cols),
                               std::uint32_t(r0),
                               (pos ? kFlagEmbedPositions : 0u) | (type ? kFlagEmbedTokenType : 0u),
                               scale,
                               std::uint32_t(v0),
                               std::uint32_t(nv)};
                const BufferRange ranges[] = {whole(ids),
                                              {tokens.handle(), v0 * rowBytes, nv * rowBytes},
                                              pos ? BufferRange{positions.handle(), r0 * rowBytes, n * rowBytes}
                                                  : whole(m_shared.placeholder),
                                              whole(type ? tokenType : m_shared.placeholder),
                                              {y.handle(), r0 * rowBytes, n * rowBytes}};
                if (Status s = dispatch(m_embed, ranges, &push, sizeof push,
                                        grid((n * cols + kEmbedWorkgroup - 1) / kEmbedWorkgroup));
                    !s)
                    return s;
            }
        }
        return Ok{};
    }

private:
    const BindingLimits &limits() const { return m_shared.limits.binding; }

    Error tooLarge(const std::string &what) const
    {
        return Error{"vulkan forward: " + what + " exceeds the device's storage buffer range (" +
                         formatBytes(std::int64_t(limits().maxRangeBytes)) + ")",
                     ErrorKind::TooLarge};
    }

    BufferRange whole(const Buffer &b) const { return {b.handle(), 0, b.bytes()}; }

    // The dispatch grid for `groups` workgroups in x, spilling into y past the device's limit.
    std::array<std::uint32_t, 2> grid(std::uint64_t groups) const
    {
        const std::uint64_t x =
            std::max<std::uint64_t>(1, std::min<std::uint64_t>(groups, m_shared.limits.maxGroups[0]));
        return {std::uint32_t(x), std::uint32_t((groups + x - 1) / x)};
    }

    Status dispatch(const ComputePipeline &pipeline, std::span<const BufferRange> ranges, const void *push,
                    std::uint32_t pushBytes, std::array<std::uint32_t, 2> groups)
    {
        for (const BufferRange &r : ranges)
            if (r.bytes > limits().maxRangeBytes)
                return tooLarge("a tensor of " + formatBytes(std::int64_t(r.bytes)));
        if (groups[1] > m_shared.limits.maxGroups[1])
            return Error{"vulkan forward: too many workgroups for this device", ErrorKind::TooLarge};
        auto set = m_descriptors.allocate(pipeline, ranges);
        if (!set)
            return set.error();
        const DeviceFunctions &fn = m_shared.device.fn();
        VkCommandBuffer cmd = m_commands.commandBuffer();
        fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline());
        fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set.value(), 0,
                                   nullptr);
        fn.vkCmdPushConstants(cmd, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes, push);
        fn.vkCmdDispatch(cmd, groups[0], groups[1], 1);
        return Ok{};
    }

    const ForwardShared &m_shared;
    CommandContext &m_commands;
    DescriptorArena &m_descriptors;
    const ComputePipeline &m_rowNorm, &m_elementwise, &m_embed;
};

const Buffer *orNull(const Buffer &b)
{
    return b.handle() != VK_NULL_HANDLE ? &b : nullptr;
}

// y (+)= x·W (+ b): a dense layer of rows x inDim by inDim x outDim.
GemmPass densePass(const char *name, const Buffer &x, const Buffer &w, const Buffer &bias, const Buffer &y,
                   std::uint64_t rows, std::uint64_t inDim, std::uint64_t outDim, bool accumulate)
{
    GemmPass g;
    g.name = name;
    g.m = rows;
    g.n = outDim;
    g.k = inDim;
    g.a = {&x, 0, inDim, 1, 0};
    g.b = {&w, 0, outDim, 1, 0};
    g.c = {&y, 0, outDim, 1, 0};
    g.bias = orNull(bias);
    g.accumulate = accumulate;
    return g;
}

} // namespace

Result<std::unique_ptr<ModelForward>> ModelForward::create(const Device &device)
{
    std::unique_ptr<ModelForward> f(new ModelForward());
    f->m_device = &device;
    const std::uint32_t rowNormSpec[] = {kRowNormWorkgroup}, elementwiseSpec[] = {kElementwiseWorkgroup},
                        embedSpec[] = {kEmbedWorkgroup};
    auto rowNorm = ComputePipeline::create(device, "rownorm.comp", shaders::rowNormSpirv(), kRowNormBindings,
                                           sizeof(RowNormPush), rowNormSpec);
    if (!rowNorm)
        return rowNorm.error();
    f->m_rowNorm = std::move(*rowNorm);
    auto elementwise = ComputePipeline::create(device, "elementwise.comp", shaders::elementwiseSpirv(),
                                               kElementwiseBindings, sizeof(ElementwisePush), elementwiseSpec);
    if (!elementwise)
        return elementwise.error();
    f->m_elementwise = std::move(*elementwise);
    auto embed = ComputePipeline::create(device, "embed.comp", shaders::embedSpirv(), kEmbedBindings, sizeof(EmbedPush),
                                         embedSpec);
    if (!embed)
        return embed.error();
    f->m_embed = std::move(*embed);
    for (auto &c : f->m_commands) {
        auto commands = CommandContext::create(device);
        if (!commands)
            return commands.error();
        c = std::move(*commands);
    }
    f->m_descriptors = std::make_unique<DescriptorArena>(device);
    return f;
}

ModelForward::~ModelForward()
{
    // A submission that timed out may still use the buffers and command buffers.
    if (m_device)
        m_device->waitIdle();
}

bool ModelForward::runs(const ForwardKeep &keep)
{
    return keep.maps && keep.poolBins == 0 && !keep.queriesKeys;
}

std::uint64_t ModelForward::weightBytes() const
{
    return m_weights ? m_weights->bytes : 0;
}

Status ModelForward::drain(const ForwardShared &shared)
{
    for (auto &commands : m_commands)
        if (commands->pending())
            if (Status s = commands->wait(shared.submitTimeoutNs); !s)
                return s;
    return Ok{};
}

Status ModelForward::load(const ForwardShared &shared, const TransformerModel &model, ForwardStats &stats)
{
    // A forward that failed after a submission may have left work running on what is freed below.
    if (Status s = drain(shared); !s)
        return s;
    const TransformerWeights &w = model.weights();
    if (m_weights && m_weights->key == &w)
        return Ok{};
    if (shared.fault == VulkanFault::OutOfMemory)
        return vkError("weights: vkAllocateMemory (injected fault)", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    m_arena.reset(); // the buffers of the model before
    m_weights.reset();
    const ForwardStats before = stats;
    auto weights = std::make_unique<Weights>();
    Uploader up(shared, *m_commands[0], stats);
    std::optional<Error> failed;
    auto put = [&](Buffer &to, auto &&result) {
        if (failed)
            return;
        if (!result) {
            failed = result.error();
            return;
        }
        to = std::move(*result);
    };
    put(weights->tokens, upload(up, w.tokenEmbedding, "token embedding"));
    put(weights->positions, upload(up, w.positionEmbedding, "position embedding"));
    put(weights->tokenType, upload(up, w.tokenType0, "token type embedding"));
    put(weights->embeddingNorm, upload(up, w.embeddingNorm.weight, "embedding norm"));
    put(weights->embeddingNormBias, upload(up, w.embeddingNorm.bias, "embedding norm bias"));
    put(weights->finalNorm, upload(up, w.finalNorm.weight, "final norm"));
    put(weights->finalNormBias, upload(up, w.finalNorm.bias, "final norm bias"));
    for (std::size_t l = 0; l < w.layers.size() && !failed; ++l) {
        const TransformerLayer &layer = w.layers[l];
        const AttentionWeights &a = layer.attention;
        LayerOnDevice &d = weights->layers.emplace_back();
        const std::string at = "layer " + std::to_string(l) + " ";
        put(d.q, upload(up, a.q, at + "q"));
        put(d.k, upload(up, a.k, at + "k"));
        put(d.v, upload(up, a.v, at + "v"));
        put(d.o, upload(up, a.o.value_or(MatrixF()), at + "o"));
        put(d.qBias, upload(up, a.qBias, at + "q bias"));
        put(d.kBias, upload(up, a.kBias, at + "k bias"));
        put(d.vBias, upload(up, a.vBias, at + "v bias"));
        put(d.oBias, upload(up, a.oBias, at + "o bias"));
        put(d.qNorm, upload(up, a.qNorm, at + "q norm"));
        put(d.kNorm, upload(up, a.kNorm, at + "k norm"));
        put(d.sinks, upload(up, a.sinks, at + "sinks"));
        put(d.norm1, upload(up, layer.norm1.weight, at + "norm 1"));
        put(d.norm1Bias, upload(up, layer.norm1.bias, at + "norm 1 bias"));
        put(d.postAttentionNorm, upload(up, layer.postAttentionNorm.weight, at + "post-attention norm"));
        put(d.norm2, upload(up, layer.norm2.weight, at + "norm 2"));
        put(d.norm2Bias, upload(up, layer.norm2.bias, at + "norm 2 bias"));
        put(d.postMlpNorm, upload(up, layer.postMlpNorm.weight, at + "post-MLP norm"));
        put(d.up, upload(up, layer.up, at + "mlp up"));
        put(d.upBias, upload(up, layer.upBias, at + "mlp up bias"));
        put(d.gate, upload(up, layer.gate.value_or(WeightMatrix()), at + "mlp gate"));
        put(d.gateBias, upload(up, layer.gateBias, at + "mlp gate bias"));
        put(d.down, upload(up, layer.down, at + "mlp down"));
        put(d.downBias, upload(up, layer.downBias, at + "mlp down bias"));
    }
    if (failed)
        return *failed;
    if (Status s = up.flush(); !s)
        return s;
    // The conversion read the mapped weights: a checkpoint rewritten meanwhile gave zeros.
    if (w.source)
        if (Status s = w.source->checkUnchanged(); !s)
            return s;
    weights->bytes = stats.uploaded - before.uploaded;
    weights->key = &w;
    weights->source = model.sharedWeights();
    m_weights = std::move(weights);
    return Ok{};
}

Status ModelForward::allocate(const ForwardShared &shared, const TransformerModel &model, std::int64_t tokens)
{
    const TransformerWeights *key = &model.weights();
    if (m_arena && m_arena->model == key && m_arena->tokens == tokens)
        return Ok{};
    m_arena.reset();
    const ModelConfig &c = model.config();
    const std::uint64_t f = sizeof(float), t = std::uint64_t(tokens), d = std::uint64_t(c.width),
                        h = std::uint64_t(c.heads), hd = std::uint64_t(c.headDim()),
                        kv = std::uint64_t(c.keyValueHeads()), inner = std::uint64_t(c.intermediate);
    auto a = std::make_unique<Arena>();
    a->model = key;
    a->tokens = tokens;
    struct Want {
        Buffer *to;
        std::uint64_t bytes;
        const char *what;
    };
    const bool rope = !c.recipe().learnedPositions;
    const Want wants[] = {
        {&a->x, t * d * f, "hidden state"},
        {&a->y, t * d * f, "normalised hidden state"},
        {&a->attended, t * d * f, "attention output"},
        {&a->qPre, rope ? t * h * hd * f : 0, "Q before RoPE"},
        {&a->kPre, rope ? t * kv * hd * f : 0, "K before RoPE"},
        {&a->q, t * h * hd * f, "Q"},
        {&a->k, t * kv * hd * f, "K"},
        {&a->v, t * kv * hd * f, "V"},
        {&a->scores, h * t * t * f, "scores"},
        {&a->weights, h * t * t * f, "weights"},
        {&a->context, t * h * hd * f, "context"},
        {&a->up, t * inner * f, "MLP up projection"},
        {&a->gate, c.recipe().gatedMlp ? t * inner * f : 0, "MLP gate projection"},
    };
    if (shared.fault == VulkanFault::OutOfMemory)
        return vkError("hidden state: vkAllocateMemory (injected fault)", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    for (const Want &w : wants) {
        if (w.bytes == 0)
            continue;
        auto b = makeBuffer(shared, w.bytes, MemoryUse::Device, w.what);
        if (!b)
            return b.error();
        *w.to = std::move(*b);
    }
    for (int s = 0; s <= c.layers; ++s) {
        auto b = makeBuffer(shared, t * d * f, MemoryUse::Readback, "hidden state " + std::to_string(s));
        if (!b)
            return b.error();
        a->hidden.push_back(std::move(*b));
    }
    for (int l = 0; l < c.layers; ++l) {
        auto b = makeBuffer(shared, h * t * t * f, MemoryUse::Readback, "attentions of layer " + std::to_string(l));
        if (!b)
            return b.error();
        a->maps.push_back(std::move(*b));
    }

    // Masks and RoPE tables depend on the layer (windows, local and global bases) and on T:
    // one buffer for each distinct one.
    auto input = [&](std::uint64_t bytes, const std::string &what) -> Result<InputTensor> {
        InputTensor in;
        in.bytes = bytes;
        auto device = makeBuffer(shared, bytes, MemoryUse::Device, what);
        if (!device)
            return device.error();
        in.device = std::move(*device);
        if (!in.device.mapped() || shared.forceStaging) {
            auto staging = makeBuffer(shared, bytes, MemoryUse::Upload, what + " (staging)");
            if (!staging)
                return staging.error();
            in.staging = std::move(*staging);
        }
        return in;
    };
    auto ids = input(t * 4, "ids");
    if (!ids)
        return ids.error();
    a->ids = std::move(*ids);
    const std::uint64_t words = (t + 31) / 32;
    for (int l = 0; l < c.layers; ++l) {
        const AttentionProblem p = model.layerShape(l, tokens);
        const MaskMatrix allowed = effectiveMask(p);
        std::vector<std::uint32_t> bits(std::size_t(t * words), 0u);
        for (Eigen::Index i = 0; i < allowed.rows(); ++i)
            for (Eigen::Index j = 0; j < allowed.cols(); ++j)
                if (allowed(i, j))
                    bits[std::size_t(std::uint64_t(i) * words + std::uint64_t(j) / 32)] |= 1u << (j % 32);
        auto same = std::find(a->maskData.begin(), a->maskData.end(), bits);
        if (same == a->maskData.end()) {
            auto mask = input(bits.size() * 4, "mask of layer " + std::to_string(l));
            if (!mask)
                return mask.error();
            a->masks.push_back(std::move(*mask));
            a->maskData.push_back(std::move(bits));
            same = a->maskData.end() - 1;
        }
        a->maskOf.push_back(int(same - a->maskData.begin()));
        if (!p.spec.rope) {
            a->ropeOf.push_back(-1);
            continue;
        }
        std::vector<float> table = ropeTableForGpu(queryPositions(p), *p.spec.rope, p.spec.headDimQK);
        auto sameRope = std::find(a->ropeData.begin(), a->ropeData.end(), table);
        if (sameRope == a->ropeData.end()) {
            auto r = input(table.size() * f, "RoPE table of layer " + std::to_string(l));
            if (!r)
                return r.error();
            a->ropes.push_back(std::move(*r));
            a->ropeData.push_back(std::move(table));
            sameRope = a->ropeData.end() - 1;
        }
        a->ropeOf.push_back(int(sameRope - a->ropeData.begin()));
    }
    m_arena = std::move(a);
    return Ok{};
}

Result<MatrixF> ModelForward::runOp(const ForwardShared &shared, const ModelOpInput &in, ForwardStats &stats)
{
    if (Status s = drain(shared); !s) // the descriptor sets are reset below
        return s.error();
    Uploader up(shared, *m_commands[0], stats);
    std::optional<Error> failed;
    auto put = [&](auto &&result) {
        if (!result && !failed)
            failed = result.error();
        return result ? std::move(*result) : Buffer();
    };
    std::vector<float> ids(in.ids.begin(), in.ids.end()); // as uint32 bits below
    for (std::size_t i = 0; i < in.ids.size(); ++i) {
        const std::uint32_t id = std::uint32_t(in.ids[i]);
        std::memcpy(&ids[i], &id, sizeof id);
    }
    const Buffer x = put(upload(up, in.x, "x")), other = put(upload(up, in.other, "other")),
                 matrix = put(upload(up, in.matrix, "matrix")), weight = put(upload(up, in.weight, "weight")),
                 bias = put(upload(up, in.bias, "bias")),
                 idBuffer = put(up.tensor(ids.data(), std::uint64_t(ids.size()), "ids"));
    if (failed)
        return *failed;
    if (Status s = up.flush(); !s)
        return s.error();
    const bool embed = in.op == ModelOp::Embed, dense = in.op == ModelOp::Dense;
    const Eigen::Index rows = embed ? Eigen::Index(in.ids.size()) : in.x.rows(),
                       cols = dense ? in.matrix.cols() : in.x.cols();
    const std::uint64_t count = std::uint64_t(rows * cols);
    // The result: x itself for the in-place passes, its own buffer otherwise.
    Buffer result;
    if (in.op == ModelOp::Norm || embed) {
        auto b = makeBuffer(shared, count * sizeof(float), MemoryUse::Device, "result");
        if (!b)
            return b.error();
        result = std::move(*b);
    }
    const Buffer &out = in.op == ModelOp::Norm || embed ? result : dense ? other : x;
    auto readback = makeBuffer(shared, count * sizeof(float), MemoryUse::Readback, "result (read back)");
    if (!readback)
        return readback.error();

    CommandContext &commands = *m_commands[0];
    if (auto cmd = commands.begin(); !cmd)
        return cmd.error();
    m_descriptors->reset();
    ModelPasses passes(shared, commands, *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
    Status recorded = Ok{};
    switch (in.op) {
    case ModelOp::Norm:
        recorded = passes.rowNorm(x, result, std::uint64_t(rows), std::uint64_t(cols), weight, bias, in.eps);
        break;
    case ModelOp::Add:
        recorded = passes.elementwise(x, &other, count, kOpAdd, in.activation);
        break;
    case ModelOp::Activate:
        recorded = passes.elementwise(x, nullptr, count, kOpActivate, in.activation);
        break;
    case ModelOp::Gate:
        recorded = passes.elementwise(x, &other, count, kOpGate, in.activation);
        break;
    case ModelOp::Embed:
        recorded = passes.embed(idBuffer, x, std::uint64_t(in.x.rows()), other, bias, result, std::uint64_t(rows),
                                std::uint64_t(cols), in.scale);
        break;
    case ModelOp::Dense: {
        PassRecorder rec(shared.device, commands, *m_descriptors, shared.gemm, shared.tiling, shared.softmax,
                         shared.rope, shared.headNorm, shared.placeholder, shared.limits);
        recorded = rec.gemm(densePass("dense", x, matrix, bias, other, std::uint64_t(in.x.rows()),
                                      std::uint64_t(in.x.cols()), std::uint64_t(cols), true));
        break;
    }
    }
    if (!recorded)
        return recorded.error();
    fullBarrier(commands);
    const VkBufferCopy region{0, 0, count * sizeof(float)};
    shared.device.fn().vkCmdCopyBuffer(commands.commandBuffer(), out.handle(), readback->handle(), 1, &region);
    commands.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_ACCESS_HOST_READ_BIT);
    if (Status s = commands.submitAndWait(shared.submitTimeoutNs); !s)
        return s.error();
    ++stats.submissions;
    stats.readBack += count * sizeof(float);
    return MatrixF(Eigen::Map<const MatrixF>(static_cast<const float *>(readback->mapped()), rows, cols));
}

Result<std::shared_ptr<const ModelRun>> ModelForward::forward(const ForwardShared &shared,
                                                              const TransformerModel &model, const Encoding &input,
                                                              const ForwardKeep &keep, const std::atomic<bool> *cancel,
                                                              ForwardStats &stats)
{
    auto started = model.startRun(input, keep);
    if (!started)
        return started.error();
    ModelRun &run = **started;
    if (Status s = load(shared, model, stats); !s)
        return s.error();
    const ModelConfig &c = model.config();
    const BlockRecipe &recipe = c.recipe();
    const std::int64_t tokens = run.length;
    if (Status s = allocate(shared, model, tokens); !s)
        return s.error();
    Arena &a = *m_arena;
    const Weights &w = *m_weights;
    const std::uint64_t t = std::uint64_t(tokens), d = std::uint64_t(c.width), inner = std::uint64_t(c.intermediate),
                        L = std::uint64_t(c.layers), h = std::uint64_t(c.heads);
    const double eps = c.layerNormEps;

    // The inputs of this forward: ids, then the masks and tables (their bytes count each time).
    auto write = [&](InputTensor &in, const void *data) {
        void *to = in.staging.handle() != VK_NULL_HANDLE ? in.staging.mapped() : in.device.mapped();
        std::memcpy(to, data, std::size_t(in.bytes));
        stats.uploaded += in.bytes;
    };
    write(a.ids, input.ids.data());
    for (std::size_t i = 0; i < a.masks.size(); ++i)
        write(a.masks[i], a.maskData[i].data());
    for (std::size_t i = 0; i < a.ropes.size(); ++i)
        write(a.ropes[i], a.ropeData[i].data());

    const std::uint32_t perSubmission = std::max<std::uint32_t>(1, shared.layersPerSubmission);
    m_descriptors->reset();
    int current = 0;
    const Error cancelled{"the forward pass was cancelled", ErrorKind::Cancelled};
    // Waits for whatever the two command buffers still run.
    auto begin = [&]() -> Status {
        CommandContext &commands = *m_commands[std::size_t(current)];
        if (commands.pending())
            if (Status s = commands.wait(shared.submitTimeoutNs); !s)
                return s;
        auto cmd = commands.begin();
        return cmd ? Status(Ok{}) : Status(cmd.error());
    };
    auto submit = [&]() -> Status {
        if (Status s = m_commands[std::size_t(current)]->submit(); !s)
            return s;
        ++stats.submissions;
        current = 1 - current;
        return Ok{};
    };
    std::uint64_t readBack = 0; // counted once the copies are done
    auto copyOut = [&](const Buffer &from, const Buffer &to, std::uint64_t bytes) {
        const VkBufferCopy region{0, 0, bytes};
        shared.device.fn().vkCmdCopyBuffer(m_commands[std::size_t(current)]->commandBuffer(), from.handle(),
                                           to.handle(), 1, &region);
        readBack += bytes;
    };

    if (Status s = begin(); !s)
        return s.error();
    {
        CommandContext &commands = *m_commands[std::size_t(current)];
        bool staged = false;
        auto stage = [&](const InputTensor &in) {
            if (in.staging.handle() == VK_NULL_HANDLE)
                return;
            const VkBufferCopy region{0, 0, in.bytes};
            shared.device.fn().vkCmdCopyBuffer(commands.commandBuffer(), in.staging.handle(), in.device.handle(), 1,
                                               &region);
            staged = true;
        };
        stage(a.ids);
        for (const InputTensor &in : a.masks)
            stage(in);
        for (const InputTensor &in : a.ropes)
            stage(in);
        if (staged)
            fullBarrier(commands);
    }

    const Buffer *x = &a.x, *y = &a.y; // the residual stream, and the buffer a norm writes
    const NormPlacement placement = recipe.placement;
    {
        CommandContext &commands = *m_commands[std::size_t(current)];
        ModelPasses passes(shared, commands, *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
        // Gemma: √d rounded to the hidden dtype first, as TransformerModel::embed. The scale
        // comes after BERT's embedding norm there; no family has both, and the shader scales
        // before any norm.
        if (recipe.embeddingScale && recipe.embeddingNorm)
            return Error{"vulkan forward: an embedding norm and scale together", ErrorKind::Unsupported};
        const float scale = recipe.embeddingScale ? float(std::sqrt(double(d))) : 1.0f;
        if (Status s = passes.embed(a.ids.device, w.tokens, std::uint64_t(c.vocabSize), w.positions, w.tokenType, *x, t,
                                    d, scale);
            !s)
            return s.error();
        if (recipe.embeddingNorm) {
            fullBarrier(commands);
            if (Status s = passes.rowNorm(*x, *y, t, d, w.embeddingNorm, w.embeddingNormBias, eps); !s)
                return s.error();
            std::swap(x, y);
        }
        fullBarrier(commands);
        copyOut(*x, a.hidden[0], t * d * sizeof(float));
    }

    for (std::uint64_t l = 0; l < L; ++l) {
        if (l > 0 && l % perSubmission == 0) {
            if (cancel && cancel->load(std::memory_order_relaxed)) {
                (void)drain(shared);
                return cancelled;
            }
            if (Status s = submit(); !s)
                return s.error();
            if (Status s = begin(); !s)
                return s.error();
        }
        CommandContext &commands = *m_commands[std::size_t(current)];
        ModelPasses passes(shared, commands, *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
        PassRecorder rec(shared.device, commands, *m_descriptors, shared.gemm, shared.tiling, shared.softmax,
                         shared.rope, shared.headNorm, shared.placeholder, shared.limits);
        const LayerOnDevice &lw = w.layers[std::size_t(l)];
        const auto fail = [l](const Error &e) {
            return Error{"layer " + std::to_string(l) + ": " + e.message, e.kind};
        };
        fullBarrier(commands);

        // Attention: on norm1(x) (BERT: x); its output added to x in the output projection
        // unless a norm comes between (Gemma's post-attention norm).
        const Buffer *in = x;
        if (placement != NormPlacement::Post) {
            if (Status s = passes.rowNorm(*x, *y, t, d, lw.norm1, lw.norm1Bias, eps); !s)
                return fail(s.error());
            fullBarrier(commands);
            in = y;
        }
        const AttentionProblem problem = model.layerShape(int(l), tokens);
        const bool sandwich = placement == NormPlacement::Sandwich;
        // After a sub-layer: Gemma's post norm of its output (in `attended`), then the residual
        // sum; BERT's norm of the sum already in x; nothing where the sum was all.
        const auto settle = [&](const Buffer &postNorm, const Buffer &norm, const Buffer &normBias) -> Status {
            if (sandwich) {
                if (Status s = passes.rowNorm(a.attended, *y, t, d, postNorm, Buffer(), eps); !s)
                    return s;
                fullBarrier(commands);
                if (Status s = passes.elementwise(*x, y, t * d, kOpAdd, c.activation); !s)
                    return s;
            } else if (placement == NormPlacement::Post) {
                if (Status s = passes.rowNorm(*x, *y, t, d, norm, normBias, eps); !s)
                    return s;
                std::swap(x, y);
            }
            fullBarrier(commands);
            return Ok{};
        };
        AttentionBuffers b;
        b.xq = b.xkv = b.xv = in;
        b.wq = &lw.q, b.wk = &lw.k, b.wv = &lw.v, b.wo = &lw.o;
        b.bq = orNull(lw.qBias), b.bk = orNull(lw.kBias), b.bv = orNull(lw.vBias), b.bo = orNull(lw.oBias);
        b.maskBits = &a.masks[std::size_t(a.maskOf[l])].device;
        b.sinks = orNull(lw.sinks);
        const int rope = a.ropeOf[l];
        if (rope >= 0) {
            b.ropeQ = b.ropeK = &a.ropes[std::size_t(rope)].device;
            b.qPre = &a.qPre, b.kPre = &a.kPre;
        }
        b.qNorm = orNull(lw.qNorm), b.kNorm = orNull(lw.kNorm);
        b.q = &a.q, b.k = &a.k, b.v = &a.v, b.scores = &a.scores, b.weights = &a.weights, b.context = &a.context;
        b.output = sandwich ? &a.attended : x;
        b.outputAccumulates = !sandwich;
        AttentionShape shape = AttentionShape::of(problem);
        shape.dOut = d; // W_O maps the heads back to the width (the problem has no weights to say so)
        if (Status s = recordAttention(rec, b, shape); !s)
            return fail(s.error());
        fullBarrier(commands);
        copyOut(a.weights, a.maps[std::size_t(l)], h * t * t * sizeof(float));
        if (Status s = settle(lw.postAttentionNorm, lw.norm1, lw.norm1Bias); !s)
            return fail(s.error());

        // MLP: on norm2(x) (BERT: x); down(act(up)) or down(act(gate)·up), its output added to x
        // in the down projection unless a norm comes between.
        const Buffer *mlpIn = x;
        if (placement != NormPlacement::Post) {
            if (Status s = passes.rowNorm(*x, *y, t, d, lw.norm2, lw.norm2Bias, eps); !s)
                return fail(s.error());
            fullBarrier(commands);
            mlpIn = y;
        }
        if (Status s = rec.gemm(densePass("mlp up", *mlpIn, lw.up, lw.upBias, a.up, t, d, inner, false)); !s)
            return fail(s.error());
        if (recipe.gatedMlp)
            if (Status s = rec.gemm(densePass("mlp gate", *mlpIn, lw.gate, lw.gateBias, a.gate, t, d, inner, false));
                !s)
                return fail(s.error());
        fullBarrier(commands);
        if (Status s = recipe.gatedMlp ? passes.elementwise(a.up, &a.gate, t * inner, kOpGate, c.activation)
                                       : passes.elementwise(a.up, nullptr, t * inner, kOpActivate, c.activation);
            !s)
            return fail(s.error());
        fullBarrier(commands);
        if (Status s = rec.gemm(
                densePass("mlp down", a.up, lw.down, lw.downBias, sandwich ? a.attended : *x, t, inner, d, !sandwich));
            !s)
            return fail(s.error());
        fullBarrier(commands);
        if (Status s = settle(lw.postMlpNorm, lw.norm2, lw.norm2Bias); !s)
            return fail(s.error());

        // The layer's hidden state (the last one after the final norm).
        const Buffer *out = x;
        if (l + 1 == L && recipe.finalNorm) {
            if (Status s = passes.rowNorm(*x, *y, t, d, w.finalNorm, w.finalNormBias, eps); !s)
                return fail(s.error());
            fullBarrier(commands);
            out = y;
        }
        copyOut(*out, a.hidden[std::size_t(l + 1)], t * d * sizeof(float));
    }
    m_commands[std::size_t(current)]->barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                                              VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    if (cancel && cancel->load(std::memory_order_relaxed)) {
        (void)drain(shared);
        return cancelled;
    }
    if (Status s = submit(); !s)
        return s.error();
    if (shared.fault == VulkanFault::Timeout)
        return vkError("vkWaitForFences (injected fault: gave up without waiting)", VK_TIMEOUT);
    if (Status s = drain(shared); !s)
        return s.error();
    if (shared.fault == VulkanFault::DeviceLost)
        return vkError("vkWaitForFences (injected fault)", VK_ERROR_DEVICE_LOST);
    stats.readBack += readBack;
    if (cancel && cancel->load(std::memory_order_relaxed))
        return cancelled;

    // Out of the read-back buffers into the run.
    run.attentions.resize(std::size_t(L * h * t * t));
    for (std::uint64_t l = 0; l < L; ++l)
        std::memcpy(run.attentions.data() + l * h * t * t, a.maps[std::size_t(l)].mapped(),
                    std::size_t(h * t * t * sizeof(float)));
    for (std::uint64_t s = 0; s <= L; ++s) {
        MatrixF hidden =
            Eigen::Map<const MatrixF>(static_cast<const float *>(a.hidden[std::size_t(s)].mapped()), tokens, c.width);
        if (s > 0 && !hidden.allFinite())
            return Error{"layer " + std::to_string(s - 1) + ": the hidden state overflowed to Inf or NaN",
                         ErrorKind::NonFinite};
        run.hiddenStates.push_back(std::move(hidden));
    }
    for (int l = 0; l < c.layers; ++l)
        run.attentionInputs.push_back(model.attentionInput(l, run.hiddenStates[std::size_t(l)]));
    return std::shared_ptr<const ModelRun>(std::move(*started));
}

} // namespace attnscope::vk
