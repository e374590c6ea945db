#include "gpu/VulkanForward.h"

#include "core/attention/Mask.h"
#include "core/io/MemoryLimits.h"
#include "core/models/ModelTensors.h"
#include "core/models/TranslationModel.h"
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
constexpr std::uint32_t kFlagNormLayer = 1, kFlagEmbedPositions = 1, kFlagEmbedTokenType = 2, kFlagEmbedF16 = 4,
                        kFlagEmbedBF16 = 8;                       // common.glsl
constexpr std::uint32_t kOpAdd = 0, kOpActivate = 1, kOpGate = 2; // elementwise.comp

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

// A weight matrix M (rows x cols, as the forward uses it) on the device: a checkpoint's mapped
// weight as it is stored (float16 and bfloat16 converted in the shader; Mᵀ where transposed,
// nn.Linear's [out, in]), a weight in memory as float32 rows of M.
struct DeviceWeight {
    Buffer buffer;
    ElementType type = ElementType::F32;
    bool transposed = false;
};

// One attention's weights on the device; a tensor it does not have is an empty Buffer.
struct AttentionOnDevice {
    Buffer q, k, v, o, qBias, kBias, vBias, oBias, qNorm, kNorm, sinks;
};

// One layer's weights on the device. `cross`, crossNorm: a translation decoder's
// cross-attention and the norm after it (empty elsewhere).
struct LayerOnDevice {
    AttentionOnDevice attention, cross;
    Buffer norm1, norm1Bias, postAttentionNorm, crossNorm, crossNormBias, norm2, norm2Bias, postMlpNorm;
    DeviceWeight up, gate, down;
    Buffer upBias, gateBias, downBias;
};

struct ModelForward::Weights {
    const void *key = nullptr; // the model's weights these are (kept alive by `source`)
    std::shared_ptr<const void> source;
    // positions: a model's learned ones, or a translation model's sinusoidal table.
    DeviceWeight tokens;
    Buffer positions, tokenType, embeddingNorm, embeddingNormBias, finalNorm, finalNormBias;
    std::vector<LayerOnDevice> layers; // a translation model's encoder layers, then its decoder's
    std::uint64_t bytes = 0;
};

struct ModelForward::Arena {
    const void *model = nullptr;
    std::int64_t tokens = 0, sourceTokens = 0; // sourceTokens: a translation's encoder (0 elsewhere)
    // The residual stream and a second buffer of its shape (post-norm layers swap them), the
    // attention's output where a norm follows it, the attention's own tensors, the MLP's. A
    // translation's decoder uses x and y, its encoder sx and sy.
    Buffer x, y, attended, sx, sy;
    Buffer qPre, kPre, q, k, v, scores, weights, context;
    Buffer up, gate;
    InputTensor ids, sourceIds;
    std::vector<InputTensor> masks, ropes;            // distinct ones
    std::vector<int> maskOf, ropeOf;                  // per attention: an index into masks, ropes (-1: none)
    std::vector<Buffer> hidden, maps;                 // read back, in the run's order
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
        return raw(data, count * sizeof(float), what);
    }

    // A device buffer holding `bytes` from `data`, rounded up to whole words (shaders read words).
    Result<Buffer> raw(const void *data, std::uint64_t bytes, const std::string &what)
    {
        if (bytes == 0)
            return Buffer();
        const std::uint64_t words = (bytes + 3) / 4 * 4;
        auto device = makeBuffer(m_shared, words, MemoryUse::Device, what);
        if (!device)
            return device.error();
        m_stats.uploaded += words;
        void *to = device->mapped();
        Buffer staging;
        if (!to || m_shared.forceStaging) {
            auto s = makeBuffer(m_shared, words, MemoryUse::Upload, what + " (staging)");
            if (!s)
                return s.error();
            staging = std::move(*s);
            to = staging.mapped();
        }
        std::memcpy(to, data, std::size_t(bytes));
        std::memset(static_cast<unsigned char *>(to) + bytes, 0, std::size_t(words - bytes));
        if (staging.handle() == VK_NULL_HANDLE)
            return device;
        m_pending.push_back({std::move(staging), device->handle(), words});
        m_pendingBytes += words;
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

Result<Buffer> upload(Uploader &up, const WeightMatrix &w, const std::string &what)
{
    if (!w.isMapped() && w.rows() == 0)
        return Buffer();
    const MatrixF m = w.toFloat(); // one matrix at a time in float32 on the host
    return upload(up, m, what);
}

template <typename T>
Result<Buffer> upload(Uploader &up, const std::optional<T> &v, const std::string &what)
{
    return v ? upload(up, *v, what) : Result<Buffer>(Buffer());
}

// A weight as the checkpoint stores it where it is mapped (in M's own layout where `needRows`:
// an embedding's rows are read by id), else as float32 rows of M.
Result<DeviceWeight> uploadWeight(Uploader &up, const WeightMatrix &w, const std::string &what, bool needRows)
{
    const WeightMatrix::Stored s = w.stored();
    DeviceWeight d;
    if (!s.data || (needRows && s.transposed)) {
        auto b = upload(up, w, what);
        if (!b)
            return b.error();
        d.buffer = std::move(*b);
        return d;
    }
    auto b = up.raw(s.data, std::uint64_t(s.rows) * std::uint64_t(s.cols) * std::uint64_t(s.elementSize), what);
    if (!b)
        return b.error();
    d.buffer = std::move(*b);
    d.type = s.elementSize == 4 ? ElementType::F32 : s.brain ? ElementType::BF16 : ElementType::F16;
    d.transposed = s.transposed;
    return d;
}

// Uploads a model's tensors one by one; after a failure it uploads nothing more and keeps the
// first error.
class WeightLoader
{
public:
    explicit WeightLoader(Uploader &up) : m_up(up) {}

    template <typename T>
    void put(Buffer &to, const T &tensor, const std::string &what)
    {
        if (m_failed)
            return;
        auto result = upload(m_up, tensor, what);
        if (!result)
            m_failed = result.error();
        else
            to = std::move(*result);
    }

    void attention(AttentionOnDevice &d, const AttentionWeights &a, const std::string &at)
    {
        put(d.q, a.q, at + "q");
        put(d.k, a.k, at + "k");
        put(d.v, a.v, at + "v");
        put(d.o, a.o, at + "o");
        put(d.qBias, a.qBias, at + "q bias");
        put(d.kBias, a.kBias, at + "k bias");
        put(d.vBias, a.vBias, at + "v bias");
        put(d.oBias, a.oBias, at + "o bias");
        put(d.qNorm, a.qNorm, at + "q norm");
        put(d.kNorm, a.kNorm, at + "k norm");
        put(d.sinks, a.sinks, at + "sinks");
    }

    void layer(LayerOnDevice &d, const TransformerLayer &layer, const std::string &at)
    {
        attention(d.attention, layer.attention, at);
        if (layer.crossAttention)
            attention(d.cross, *layer.crossAttention, at + "cross-attention ");
        put(d.norm1, layer.norm1.weight, at + "norm 1");
        put(d.norm1Bias, layer.norm1.bias, at + "norm 1 bias");
        put(d.postAttentionNorm, layer.postAttentionNorm.weight, at + "post-attention norm");
        put(d.crossNorm, layer.crossNorm.weight, at + "cross-attention norm");
        put(d.crossNormBias, layer.crossNorm.bias, at + "cross-attention norm bias");
        put(d.norm2, layer.norm2.weight, at + "norm 2");
        put(d.norm2Bias, layer.norm2.bias, at + "norm 2 bias");
        put(d.postMlpNorm, layer.postMlpNorm.weight, at + "post-MLP norm");
        put(d.up, layer.up, at + "mlp up");
        put(d.upBias, layer.upBias, at + "mlp up bias");
        put(d.gate, layer.gate, at + "mlp gate");
        put(d.gateBias, layer.gateBias, at + "mlp gate bias");
        put(d.down, layer.down, at + "mlp down");
        put(d.downBias, layer.downBias, at + "mlp down bias");
    }

    void put(DeviceWeight &to, const WeightMatrix &w, const std::string &what, bool needRows = false)
    {
        if (m_failed)
            return;
        auto result = uploadWeight(m_up, w, what, needRows);
        if (!result)
            m_failed = result.error();
        else
            to = std::move(*result);
    }

    void put(DeviceWeight &to, const std::optional<WeightMatrix> &w, const std::string &what)
    {
        if (w)
            put(to, *w, what);
    }

    const std::optional<Error> &failed() const { return m_failed; }

private:
    Uploader &m_up;
    std::optional<Error> m_failed;
};

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

    // Rows of y from the token table at ids times `scale` (plus positions and token type 0): per
    // chunk of the table's rows, per chunk of y's rows; each element is written by the one chunk
    // of the table that holds its id. The table may be a checkpoint's float16 or bfloat16.
    Status embed(const Buffer &ids, const DeviceWeight &tokens, std::uint64_t vocab, const Buffer &positions,
                 const Buffer &tokenType, const Buffer &y, std::uint64_t rows, std::uint64_t cols, float scale)
    {
        const bool pos = positions.handle() != VK_NULL_HANDLE, type = tokenType.handle() != VK_NULL_HANDLE;
        const std::uint64_t rowBytes = cols * sizeof(float), step = unitsPerBinding(rowBytes, limits()),
                            tokenRowBytes = cols * elementBytes(tokens.type),
                            tokenStep = unitsPerBinding(tokenRowBytes, limits());
        if (step == 0 || tokenStep == 0)
            return tooLarge("an embedding row");
        const std::uint32_t stored = tokens.type == ElementType::F16    ? kFlagEmbedF16
                                     : tokens.type == ElementType::BF16 ? kFlagEmbedBF16
                                                                        : 0u;
        for (std::uint64_t v0 = 0; v0 < vocab; v0 += tokenStep) {
            const std::uint64_t nv = std::min(tokenStep, vocab - v0);
            // Whole words: a 16-bit table's chunk ends on a word even where its last row does not.
            const std::uint64_t tokenBytes =
                std::min((nv * tokenRowBytes + 3) / 4 * 4, tokens.buffer.bytes() - v0 * tokenRowBytes);
            for (std::uint64_t r0 = 0; r0 < rows; r0 += step) {
                const std::uint64_t n = std::min(step, rows - r0);
                EmbedPush push{std::uint32_t(n),
                               std::uint32_t(cols),
                               std::uint32_t(r0),
                               (pos ? kFlagEmbedPositions : 0u) | (type ? kFlagEmbedTokenType : 0u) | stored,
                               scale,
                               std::uint32_t(v0),
                               std::uint32_t(nv)};
                const BufferRange ranges[] = {whole(ids),
                                              {tokens.buffer.handle(), v0 * tokenRowBytes, tokenBytes},
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

// y (+)= x·W (+ b): a dense layer of rows x inDim by inDim x outDim, W as the device holds it
// (stored [outDim, inDim] where transposed: read with its strides swapped).
GemmPass densePass(const char *name, const Buffer &x, const DeviceWeight &w, const Buffer &bias, const Buffer &y,
                   std::uint64_t rows, std::uint64_t inDim, std::uint64_t outDim, bool accumulate)
{
    GemmPass g;
    g.name = name;
    g.m = rows;
    g.n = outDim;
    g.k = inDim;
    g.a = {&x, 0, inDim, 1, 0};
    g.b = w.transposed ? StridedMatrix{&w.buffer, 0, 1, inDim, 0} : StridedMatrix{&w.buffer, 0, outDim, 1, 0};
    g.bType = w.type;
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

template <typename Fill>
Status ModelForward::loadWeights(const ForwardShared &shared, const void *key, std::shared_ptr<const void> source,
                                 const ModelTensors *tensors, Fill &&fill, ForwardStats &stats)
{
    // A forward that failed after a submission may have left work running on what is freed below.
    if (Status s = drain(shared); !s)
        return s;
    if (m_weights && m_weights->key == key)
        return Ok{};
    if (shared.fault == VulkanFault::OutOfMemory)
        return vkError("weights: vkAllocateMemory (injected fault)", VK_ERROR_OUT_OF_DEVICE_MEMORY);
    m_arena.reset(); // the buffers of the model before
    m_weights.reset();
    const ForwardStats before = stats;
    auto weights = std::make_unique<Weights>();
    Uploader up(shared, *m_commands[0], stats);
    WeightLoader loader(up);
    fill(loader, *weights);
    if (loader.failed())
        return *loader.failed();
    if (Status s = up.flush(); !s)
        return s;
    // The conversion read the mapped weights: a checkpoint rewritten meanwhile gave zeros.
    if (tensors)
        if (Status s = tensors->checkUnchanged(); !s)
            return s;
    weights->bytes = stats.uploaded - before.uploaded;
    weights->key = key;
    weights->source = std::move(source);
    m_weights = std::move(weights);
    return Ok{};
}

Status ModelForward::load(const ForwardShared &shared, const TransformerModel &model, ForwardStats &stats)
{
    const TransformerWeights &w = model.weights();
    return loadWeights(
        shared, &w, model.sharedWeights(), w.source.get(),
        [&](WeightLoader &put, Weights &d) {
            put.put(d.tokens, w.tokenEmbedding, "token embedding", true);
            put.put(d.positions, w.positionEmbedding, "position embedding");
            put.put(d.tokenType, w.tokenType0, "token type embedding");
            put.put(d.embeddingNorm, w.embeddingNorm.weight, "embedding norm");
            put.put(d.embeddingNormBias, w.embeddingNorm.bias, "embedding norm bias");
            put.put(d.finalNorm, w.finalNorm.weight, "final norm");
            put.put(d.finalNormBias, w.finalNorm.bias, "final norm bias");
            for (std::size_t l = 0; l < w.layers.size(); ++l)
                put.layer(d.layers.emplace_back(), w.layers[l], "layer " + std::to_string(l) + " ");
        },
        stats);
}

Status ModelForward::loadTranslation(const ForwardShared &shared, const TranslationModel &model, ForwardStats &stats)
{
    const TranslationWeights &w = model.weights();
    const TranslationConfig &c = model.config();
    return loadWeights(
        shared, &w, model.sharedWeights(), w.source.get(),
        [&](WeightLoader &put, Weights &d) {
            // The logits are the host's, from the last hidden state: the head stays there.
            put.put(d.tokens, w.embedding, "shared embedding", true);
            put.put(d.positions, marianPositions(c.positions, c.width), "sinusoidal positions");
            for (std::size_t l = 0; l < w.encoder.size(); ++l)
                put.layer(d.layers.emplace_back(), w.encoder[l], "encoder layer " + std::to_string(l) + " ");
            for (std::size_t l = 0; l < w.decoder.size(); ++l)
                put.layer(d.layers.emplace_back(), w.decoder[l], "decoder layer " + std::to_string(l) + " ");
        },
        stats);
}

namespace {

// A buffer the forward needs, of `bytes` (none where 0).
struct Want {
    Buffer *to;
    std::uint64_t bytes;
    const char *what;
};

Status makeBuffers(const ForwardShared &shared, std::span<const Want> wants)
{
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
    return Ok{};
}

// Read-back buffers of `bytes` each, appended to `to`.
Status makeReadbacks(const ForwardShared &shared, std::vector<Buffer> &to, int count, std::uint64_t bytes,
                     const std::string &what)
{
    for (int i = 0; i < count; ++i) {
        auto b = makeBuffer(shared, bytes, MemoryUse::Readback, what + " " + std::to_string(i));
        if (!b)
            return b.error();
        to.push_back(std::move(*b));
    }
    return Ok{};
}

// A tensor the host writes per forward, with a staging buffer where the device's is not mapped.
Result<InputTensor> makeInput(const ForwardShared &shared, std::uint64_t bytes, const std::string &what)
{
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
}

// Masks depend on the attention (windows, causality) and on its lengths: one buffer for each
// distinct one, as bits. Appends the index of p's to a.maskOf.
Status addMask(const ForwardShared &shared, ModelForward::Arena &a, const AttentionProblem &p, const std::string &what)
{
    const MaskMatrix allowed = effectiveMask(p);
    const std::uint64_t words = (std::uint64_t(allowed.cols()) + 31) / 32;
    std::vector<std::uint32_t> bits(std::size_t(std::uint64_t(allowed.rows()) * words), 0u);
    for (Eigen::Index i = 0; i < allowed.rows(); ++i)
        for (Eigen::Index j = 0; j < allowed.cols(); ++j)
            if (allowed(i, j))
                bits[std::size_t(std::uint64_t(i) * words + std::uint64_t(j) / 32)] |= 1u << (j % 32);
    auto same = std::find(a.maskData.begin(), a.maskData.end(), bits);
    if (same == a.maskData.end()) {
        auto mask = makeInput(shared, bits.size() * 4, "mask of " + what);
        if (!mask)
            return mask.error();
        a.masks.push_back(std::move(*mask));
        a.maskData.push_back(std::move(bits));
        same = a.maskData.end() - 1;
    }
    a.maskOf.push_back(int(same - a.maskData.begin()));
    return Ok{};
}

} // namespace

Status ModelForward::allocate(const ForwardShared &shared, const TransformerModel &model, std::int64_t tokens)
{
    const TransformerWeights *key = &model.weights();
    if (m_arena && m_arena->model == key && m_arena->tokens == tokens && m_arena->sourceTokens == 0)
        return Ok{};
    m_arena.reset();
    const ModelConfig &c = model.config();
    const std::uint64_t f = sizeof(float), t = std::uint64_t(tokens), d = std::uint64_t(c.width),
                        h = std::uint64_t(c.heads), hd = std::uint64_t(c.headDim()),
                        kv = std::uint64_t(c.keyValueHeads()), inner = std::uint64_t(c.intermediate);
    auto a = std::make_unique<Arena>();
    a->model = key;
    a->tokens = tokens;
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
    if (Status s = makeBuffers(shared, wants); !s)
        return s;
    if (Status s = makeReadbacks(shared, a->hidden, c.layers + 1, t * d * f, "hidden state"); !s)
        return s;
    if (Status s = makeReadbacks(shared, a->maps, c.layers, h * t * t * f, "attentions of layer"); !s)
        return s;

    auto ids = makeInput(shared, t * 4, "ids");
    if (!ids)
        return ids.error();
    a->ids = std::move(*ids);
    // RoPE tables depend on the layer (local and global bases) and on T: one for each distinct one.
    for (int l = 0; l < c.layers; ++l) {
        const AttentionProblem p = model.layerShape(l, tokens);
        if (Status s = addMask(shared, *a, p, "layer " + std::to_string(l)); !s)
            return s;
        if (!p.spec.rope) {
            a->ropeOf.push_back(-1);
            continue;
        }
        std::vector<float> table = ropeTableForGpu(queryPositions(p), *p.spec.rope, p.spec.headDimQK);
        auto sameRope = std::find(a->ropeData.begin(), a->ropeData.end(), table);
        if (sameRope == a->ropeData.end()) {
            auto r = makeInput(shared, table.size() * f, "RoPE table of layer " + std::to_string(l));
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

Status ModelForward::allocateTranslation(const ForwardShared &shared, const TranslationModel &model,
                                         std::int64_t sourceTokens, std::int64_t targetTokens)
{
    const TranslationWeights *key = &model.weights();
    if (m_arena && m_arena->model == key && m_arena->tokens == targetTokens && m_arena->sourceTokens == sourceTokens)
        return Ok{};
    m_arena.reset();
    const TranslationConfig &c = model.config();
    const std::uint64_t f = sizeof(float), s = std::uint64_t(sourceTokens), t = std::uint64_t(targetTokens),
                        d = std::uint64_t(c.width), longest = std::max(s, t),
                        heads = std::uint64_t(std::max(c.encoder.heads, c.decoder.heads)),
                        width = std::max(std::uint64_t(c.encoder.heads * c.headDim(c.encoder)),
                                         std::uint64_t(c.decoder.heads * c.headDim(c.decoder))),
                        inner = std::uint64_t(std::max(c.encoder.ffn, c.decoder.ffn));
    const int le = c.encoder.layers, ld = c.decoder.layers;
    auto a = std::make_unique<Arena>();
    a->model = key;
    a->tokens = targetTokens;
    a->sourceTokens = sourceTokens;
    // The attention's tensors serve all three kinds: sized for the longer side.
    const Want wants[] = {
        {&a->sx, s * d * f, "encoder hidden state"},
        {&a->sy, s * d * f, "encoder normalised hidden state"},
        {&a->x, t * d * f, "decoder hidden state"},
        {&a->y, t * d * f, "decoder normalised hidden state"},
        {&a->q, longest * width * f, "Q"},
        {&a->k, longest * width * f, "K"},
        {&a->v, longest * width * f, "V"},
        {&a->scores, heads * longest * longest * f, "scores"},
        {&a->weights, heads * longest * longest * f, "weights"},
        {&a->context, longest * width * f, "context"},
        {&a->up, longest * inner * f, "MLP up projection"},
    };
    if (Status st = makeBuffers(shared, wants); !st)
        return st;
    // Read back in the run's order: the encoder's hidden states, the decoder's, its cross inputs;
    // the encoder's maps, the decoder's, the cross-attentions.
    const std::uint64_t he = std::uint64_t(c.encoder.heads), hd = std::uint64_t(c.decoder.heads);
    for (Status st : {makeReadbacks(shared, a->hidden, le + 1, s * d * f, "encoder hidden state"),
                      makeReadbacks(shared, a->hidden, ld + 1, t * d * f, "decoder hidden state"),
                      makeReadbacks(shared, a->hidden, ld, t * d * f, "cross input"),
                      makeReadbacks(shared, a->maps, le, he * s * s * f, "encoder attentions of layer"),
                      makeReadbacks(shared, a->maps, ld, hd * t * t * f, "decoder attentions of layer"),
                      makeReadbacks(shared, a->maps, ld, hd * t * s * f, "cross-attentions of layer")})
        if (!st)
            return st;
    auto sourceIds = makeInput(shared, s * 4, "source ids");
    if (!sourceIds)
        return sourceIds.error();
    a->sourceIds = std::move(*sourceIds);
    auto ids = makeInput(shared, t * 4, "target ids");
    if (!ids)
        return ids.error();
    a->ids = std::move(*ids);
    // One mask per kind (the same for every layer of it): maskOf[0] encoder, [1] decoder, [2] cross.
    for (Status st :
         {addMask(shared, *a, model.attentionShape(TranslationAttention::Encoder, sourceTokens, sourceTokens),
                  "the encoder"),
          addMask(shared, *a, model.attentionShape(TranslationAttention::Decoder, targetTokens, targetTokens),
                  "the decoder"),
          addMask(shared, *a, model.attentionShape(TranslationAttention::Cross, targetTokens, sourceTokens),
                  "the cross-attention")})
        if (!st)
            return st;
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
    const bool embed = in.op == ModelOp::Embed, dense = in.op == ModelOp::Dense;
    // Dense's matrix and Embed's token table: a mapped weight as the forward keeps it (stored),
    // or float32.
    const WeightMatrix table = in.stored.isMapped() ? in.stored : WeightMatrix(dense ? in.matrix : in.x);
    DeviceWeight onDevice;
    if (dense || embed) {
        auto w = uploadWeight(up, table, "weight", embed);
        if (!w)
            return w.error();
        onDevice = std::move(*w);
    }
    const Buffer x = embed ? Buffer() : put(upload(up, in.x, "x")), other = put(upload(up, in.other, "other")),
                 weight = put(upload(up, in.weight, "weight")), bias = put(upload(up, in.bias, "bias")),
                 idBuffer = put(up.tensor(ids.data(), std::uint64_t(ids.size()), "ids"));
    if (failed)
        return *failed;
    if (Status s = up.flush(); !s)
        return s.error();
    const Eigen::Index rows = embed ? Eigen::Index(in.ids.size()) : in.x.rows(),
                       cols = dense || embed ? table.cols() : in.x.cols();
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
        recorded = passes.embed(idBuffer, onDevice, std::uint64_t(table.rows()), other, bias, result,
                                std::uint64_t(rows), std::uint64_t(cols), in.scale);
        break;
    case ModelOp::Dense: {
        PassRecorder rec(shared.device, commands, *m_descriptors, shared.gemm, shared.tiling, shared.softmax,
                         shared.rope, shared.headNorm, shared.placeholder, shared.limits);
        recorded = rec.gemm(densePass("dense", x, onDevice, bias, other, std::uint64_t(in.x.rows()),
                                      std::uint64_t(table.rows()), std::uint64_t(cols), true));
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

namespace {

// The submissions of one forward: two command buffers alternating (one recorded while the other
// runs), the inputs written and staged, the copies out counted once they are done.
class Submissions
{
public:
    Submissions(const ForwardShared &shared, std::array<std::unique_ptr<CommandContext>, 2> &commands,
                ForwardStats &stats)
        : m_shared(shared), m_commands(commands), m_stats(stats)
    {
    }

    CommandContext &commands() { return *m_commands[m_current]; }

    // Writes an input where the device (or its staging buffer) reads it; its bytes count.
    void write(const InputTensor &in, const void *data)
    {
        void *to = in.staging.handle() != VK_NULL_HANDLE ? in.staging.mapped() : in.device.mapped();
        std::memcpy(to, data, std::size_t(in.bytes));
        m_stats.uploaded += in.bytes;
    }

    // Begins the first command buffer with the copies of the staged inputs.
    Status start(std::span<const InputTensor *const> inputs)
    {
        if (Status s = begin(); !s)
            return s;
        bool staged = false;
        for (const InputTensor *in : inputs) {
            if (in->staging.handle() == VK_NULL_HANDLE)
                continue;
            const VkBufferCopy region{0, 0, in->bytes};
            m_shared.device.fn().vkCmdCopyBuffer(commands().commandBuffer(), in->staging.handle(), in->device.handle(),
                                                 1, &region);
            staged = true;
        }
        if (staged)
            fullBarrier(commands());
        return Ok{};
    }

    // Before layer `layer` (counted over the whole forward): every `perSubmission` layers, the
    // batch so far is submitted and the other command buffer begun, unless the forward was
    // cancelled.
    Status layer(std::uint64_t layer, const std::atomic<bool> *cancel)
    {
        const std::uint64_t per = std::max<std::uint32_t>(1, m_shared.layersPerSubmission);
        if (layer == 0 || layer % per != 0)
            return Ok{};
        if (Status s = stopIfCancelled(cancel); !s)
            return s;
        if (Status s = submit(); !s)
            return s;
        return begin();
    }

    void copyOut(const Buffer &from, const Buffer &to, std::uint64_t bytes)
    {
        const VkBufferCopy region{0, 0, bytes};
        m_shared.device.fn().vkCmdCopyBuffer(commands().commandBuffer(), from.handle(), to.handle(), 1, &region);
        m_readBack += bytes;
    }

    // Submits the last batch and waits for both: the copies out are then the host's.
    Status finish(const std::atomic<bool> *cancel)
    {
        commands().barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_HOST_READ_BIT);
        if (Status s = stopIfCancelled(cancel); !s)
            return s;
        if (Status s = submit(); !s)
            return s;
        if (m_shared.fault == VulkanFault::Timeout)
            return vkError("vkWaitForFences (injected fault: gave up without waiting)", VK_TIMEOUT);
        if (Status s = waitForBoth(); !s)
            return s;
        if (m_shared.fault == VulkanFault::DeviceLost)
            return vkError("vkWaitForFences (injected fault)", VK_ERROR_DEVICE_LOST);
        m_stats.readBack += m_readBack;
        return cancelled(cancel) ? Status(cancelledError()) : Status(Ok{});
    }

private:
    static bool cancelled(const std::atomic<bool> *cancel) { return cancel && cancel->load(std::memory_order_relaxed); }
    static Error cancelledError() { return Error{"the forward pass was cancelled", ErrorKind::Cancelled}; }

    Status stopIfCancelled(const std::atomic<bool> *cancel)
    {
        if (!cancelled(cancel))
            return Ok{};
        (void)waitForBoth();
        return cancelledError();
    }

    // Waits for whatever the current command buffer still runs, and begins it.
    Status begin()
    {
        if (commands().pending())
            if (Status s = commands().wait(m_shared.submitTimeoutNs); !s)
                return s;
        auto cmd = commands().begin();
        return cmd ? Status(Ok{}) : Status(cmd.error());
    }

    Status submit()
    {
        if (Status s = commands().submit(); !s)
            return s;
        ++m_stats.submissions;
        m_current = 1 - m_current;
        return Ok{};
    }

    Status waitForBoth()
    {
        for (auto &commands : m_commands)
            if (commands->pending())
                if (Status s = commands->wait(m_shared.submitTimeoutNs); !s)
                    return s;
        return Ok{};
    }

    const ForwardShared &m_shared;
    std::array<std::unique_ptr<CommandContext>, 2> &m_commands;
    ForwardStats &m_stats;
    std::size_t m_current = 0;
    std::uint64_t m_readBack = 0; // counted once the copies are done
};

// The passes of one batch of layers, recorded into the current command buffer.
struct Recorders {
    Recorders(const ForwardShared &shared, CommandContext &commands, DescriptorArena &descriptors,
              const ComputePipeline &rowNorm, const ComputePipeline &elementwise, const ComputePipeline &embed)
        : passes(shared, commands, descriptors, rowNorm, elementwise, embed),
          rec(shared.device, commands, descriptors, shared.gemm, shared.tiling, shared.softmax, shared.rope,
              shared.headNorm, shared.placeholder, shared.limits),
          commands(commands)
    {
    }

    // An attention's buffers from its weights on the device (no RoPE, norms or output choice).
    static AttentionBuffers attention(const AttentionOnDevice &w)
    {
        AttentionBuffers b;
        b.wq = &w.q, b.wk = &w.k, b.wv = &w.v, b.wo = &w.o;
        b.bq = orNull(w.qBias), b.bk = orNull(w.kBias), b.bv = orNull(w.vBias), b.bo = orNull(w.oBias);
        b.sinks = orNull(w.sinks);
        b.qNorm = orNull(w.qNorm), b.kNorm = orNull(w.kNorm);
        return b;
    }

    // The MLP on `in` (rows x d): down(act(up)) or down(act(gate)·up), into `out` (added to it
    // where `accumulate`), with the barriers between its steps.
    Status mlp(const Buffer &in, const LayerOnDevice &lw, const ModelForward::Arena &a, std::uint64_t rows,
               std::uint64_t d, std::uint64_t inner, bool gated, Activation act, const Buffer &out, bool accumulate)
    {
        if (Status s = rec.gemm(densePass("mlp up", in, lw.up, lw.upBias, a.up, rows, d, inner, false)); !s)
            return s;
        if (gated)
            if (Status s = rec.gemm(densePass("mlp gate", in, lw.gate, lw.gateBias, a.gate, rows, d, inner, false)); !s)
                return s;
        fullBarrier(commands);
        if (Status s = gated ? passes.elementwise(a.up, &a.gate, rows * inner, kOpGate, act)
                             : passes.elementwise(a.up, nullptr, rows * inner, kOpActivate, act);
            !s)
            return s;
        fullBarrier(commands);
        return rec.gemm(densePass("mlp down", a.up, lw.down, lw.downBias, out, rows, inner, d, accumulate));
    }

    // x = norm(x): written into y, then the two swapped, with a barrier after.
    Status postNorm(const Buffer *&x, const Buffer *&y, std::uint64_t rows, std::uint64_t d, const Buffer &w,
                    const Buffer &b, double eps)
    {
        if (Status s = passes.rowNorm(*x, *y, rows, d, w, b, eps); !s)
            return s;
        std::swap(x, y);
        fullBarrier(commands);
        return Ok{};
    }

    ModelPasses passes;
    PassRecorder rec;
    CommandContext &commands;
};

} // namespace

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
    Submissions sub(shared, m_commands, stats);
    std::vector<const InputTensor *> inputs = {&a.ids};
    sub.write(a.ids, input.ids.data());
    for (std::size_t i = 0; i < a.masks.size(); ++i) {
        sub.write(a.masks[i], a.maskData[i].data());
        inputs.push_back(&a.masks[i]);
    }
    for (std::size_t i = 0; i < a.ropes.size(); ++i) {
        sub.write(a.ropes[i], a.ropeData[i].data());
        inputs.push_back(&a.ropes[i]);
    }
    m_descriptors->reset();
    if (Status s = sub.start(inputs); !s)
        return s.error();

    const Buffer *x = &a.x, *y = &a.y; // the residual stream, and the buffer a norm writes
    const NormPlacement placement = recipe.placement;
    {
        CommandContext &commands = sub.commands();
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
        sub.copyOut(*x, a.hidden[0], t * d * sizeof(float));
    }

    for (std::uint64_t l = 0; l < L; ++l) {
        if (Status s = sub.layer(l, cancel); !s)
            return s.error();
        Recorders r(shared, sub.commands(), *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
        CommandContext &commands = r.commands;
        const LayerOnDevice &lw = w.layers[std::size_t(l)];
        const auto fail = [l](const Error &e) {
            return Error{"layer " + std::to_string(l) + ": " + e.message, e.kind};
        };
        fullBarrier(commands);

        // Attention: on norm1(x) (BERT: x); its output added to x in the output projection
        // unless a norm comes between (Gemma's post-attention norm).
        const Buffer *in = x;
        if (placement != NormPlacement::Post) {
            if (Status s = r.passes.rowNorm(*x, *y, t, d, lw.norm1, lw.norm1Bias, eps); !s)
                return fail(s.error());
            fullBarrier(commands);
            in = y;
        }
        const AttentionProblem problem = model.layerShape(int(l), tokens);
        const bool sandwich = placement == NormPlacement::Sandwich;
        // After a sub-layer: Gemma's post norm of its output (in `attended`), then the residual
        // sum; BERT's norm of the sum already in x; nothing where the sum was all.
        const auto settle = [&](const Buffer &postNorm, const Buffer &norm, const Buffer &normBias) -> Status {
            if (placement == NormPlacement::Post)
                return r.postNorm(x, y, t, d, norm, normBias, eps);
            if (sandwich) {
                if (Status s = r.passes.rowNorm(a.attended, *y, t, d, postNorm, Buffer(), eps); !s)
                    return s;
                fullBarrier(commands);
                if (Status s = r.passes.elementwise(*x, y, t * d, kOpAdd, c.activation); !s)
                    return s;
            }
            fullBarrier(commands);
            return Ok{};
        };
        AttentionBuffers b = Recorders::attention(lw.attention);
        b.xq = b.xkv = b.xv = in;
        b.maskBits = &a.masks[std::size_t(a.maskOf[l])].device;
        const int rope = a.ropeOf[l];
        if (rope >= 0) {
            b.ropeQ = b.ropeK = &a.ropes[std::size_t(rope)].device;
            b.qPre = &a.qPre, b.kPre = &a.kPre;
        }
        b.q = &a.q, b.k = &a.k, b.v = &a.v, b.scores = &a.scores, b.weights = &a.weights, b.context = &a.context;
        b.output = sandwich ? &a.attended : x;
        b.outputAccumulates = !sandwich;
        AttentionShape shape = AttentionShape::of(problem);
        shape.dOut = d; // W_O maps the heads back to the width (the problem has no weights to say so)
        if (Status s = recordAttention(r.rec, b, shape); !s)
            return fail(s.error());
        fullBarrier(commands);
        sub.copyOut(a.weights, a.maps[std::size_t(l)], h * t * t * sizeof(float));
        if (Status s = settle(lw.postAttentionNorm, lw.norm1, lw.norm1Bias); !s)
            return fail(s.error());

        // MLP: on norm2(x) (BERT: x); its output added to x in the down projection unless a
        // norm comes between.
        const Buffer *mlpIn = x;
        if (placement != NormPlacement::Post) {
            if (Status s = r.passes.rowNorm(*x, *y, t, d, lw.norm2, lw.norm2Bias, eps); !s)
                return fail(s.error());
            fullBarrier(commands);
            mlpIn = y;
        }
        if (Status s =
                r.mlp(*mlpIn, lw, a, t, d, inner, recipe.gatedMlp, c.activation, sandwich ? a.attended : *x, !sandwich);
            !s)
            return fail(s.error());
        fullBarrier(commands);
        if (Status s = settle(lw.postMlpNorm, lw.norm2, lw.norm2Bias); !s)
            return fail(s.error());

        // The layer's hidden state (the last one after the final norm).
        const Buffer *out = x;
        if (l + 1 == L && recipe.finalNorm) {
            if (Status s = r.passes.rowNorm(*x, *y, t, d, w.finalNorm, w.finalNormBias, eps); !s)
                return fail(s.error());
            fullBarrier(commands);
            out = y;
        }
        sub.copyOut(*out, a.hidden[std::size_t(l + 1)], t * d * sizeof(float));
    }
    if (Status s = sub.finish(cancel); !s)
        return s.error();

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

Result<std::shared_ptr<const TranslationRun>>
ModelForward::translate(const ForwardShared &shared, const TranslationModel &model, const Encoding &source,
                        const Encoding &target, const std::atomic<bool> *cancel, ForwardStats &stats)
{
    auto started = model.startRun(source, target);
    if (!started)
        return started.error();
    TranslationRun &run = **started;
    if (Status st = loadTranslation(shared, model, stats); !st)
        return st.error();
    const TranslationConfig &c = model.config();
    const std::int64_t sourceTokens = run.sourceLength(), targetTokens = run.targetLength();
    if (Status st = allocateTranslation(shared, model, sourceTokens, targetTokens); !st)
        return st.error();
    Arena &a = *m_arena;
    const Weights &w = *m_weights;
    const std::uint64_t s = std::uint64_t(sourceTokens), t = std::uint64_t(targetTokens), d = std::uint64_t(c.width);
    const int le = c.encoder.layers, ld = c.decoder.layers;
    const double eps = c.layerNormEps;

    Submissions sub(shared, m_commands, stats);
    sub.write(a.sourceIds, run.source.ids.data());
    sub.write(a.ids, run.target.ids.data());
    std::vector<const InputTensor *> inputs = {&a.sourceIds, &a.ids};
    for (std::size_t i = 0; i < a.masks.size(); ++i) {
        sub.write(a.masks[i], a.maskData[i].data());
        inputs.push_back(&a.masks[i]);
    }
    m_descriptors->reset();
    if (Status st = sub.start(inputs); !st)
        return st.error();

    // Both stacks' inputs: the shared embedding (times √d where scale_embedding) plus the
    // sinusoidal positions.
    const Buffer *sx = &a.sx, *sy = &a.sy, *x = &a.x, *y = &a.y;
    {
        ModelPasses passes(shared, sub.commands(), *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
        const float scale = c.scaleEmbedding ? float(std::sqrt(double(d))) : 1.0f;
        for (Status st :
             {passes.embed(a.sourceIds.device, w.tokens, std::uint64_t(c.vocabSize), w.positions, Buffer(), *sx, s, d,
                           scale),
              passes.embed(a.ids.device, w.tokens, std::uint64_t(c.vocabSize), w.positions, Buffer(), *x, t, d, scale)})
            if (!st)
                return st.error();
        fullBarrier(sub.commands());
        sub.copyOut(*sx, a.hidden[0], s * d * sizeof(float));
        sub.copyOut(*x, a.hidden[std::size_t(le + 1)], t * d * sizeof(float));
    }

    // One attention of a layer: on `xq` (keys and values from `xkv`), its output added to `xq`,
    // its weights copied out to map `map`.
    const auto attend = [&](Recorders &r, const AttentionOnDevice &aw, TranslationAttention kind, const Buffer &xq,
                            const Buffer &xkv, int mask, std::uint64_t tq, std::uint64_t tk,
                            std::size_t map) -> Status {
        AttentionBuffers b = Recorders::attention(aw);
        b.xq = &xq;
        b.xkv = b.xv = &xkv;
        b.maskBits = &a.masks[std::size_t(a.maskOf[std::size_t(mask)])].device;
        b.q = &a.q, b.k = &a.k, b.v = &a.v, b.scores = &a.scores, b.weights = &a.weights, b.context = &a.context;
        b.output = &xq;
        b.outputAccumulates = true;
        AttentionShape shape = AttentionShape::of(model.attentionShape(kind, std::int64_t(tq), std::int64_t(tk)));
        shape.dOut = d;
        if (Status st = recordAttention(r.rec, b, shape); !st)
            return st;
        fullBarrier(r.commands);
        const TranslationConfig::Stack &stack = kind == TranslationAttention::Encoder ? c.encoder : c.decoder;
        sub.copyOut(a.weights, a.maps[map], std::uint64_t(stack.heads) * tq * tk * sizeof(float));
        return Ok{};
    };
    // The MLP with its residual sum fused, then norm2: x = norm2(x + mlp(x)).
    const auto feedForward = [&](Recorders &r, const LayerOnDevice &lw, const Buffer *&xs, const Buffer *&ys,
                                 std::uint64_t rows, const TranslationConfig::Stack &stack) -> Status {
        if (Status st = r.mlp(*xs, lw, a, rows, d, std::uint64_t(stack.ffn), false, c.activation, *xs, true); !st)
            return st;
        fullBarrier(r.commands);
        return r.postNorm(xs, ys, rows, d, lw.norm2, lw.norm2Bias, eps);
    };

    // The encoder: post-LN blocks over the source.
    for (int l = 0; l < le; ++l) {
        if (Status st = sub.layer(std::uint64_t(l), cancel); !st)
            return st.error();
        Recorders r(shared, sub.commands(), *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
        const LayerOnDevice &lw = w.layers[std::size_t(l)];
        fullBarrier(r.commands);
        Status st = attend(r, lw.attention, TranslationAttention::Encoder, *sx, *sx, 0, s, s, std::size_t(l));
        if (st)
            st = r.postNorm(sx, sy, s, d, lw.norm1, lw.norm1Bias, eps);
        if (st)
            st = feedForward(r, lw, sx, sy, s, c.encoder);
        if (!st)
            return Error{"encoder layer " + std::to_string(l) + ": " + st.message(), st.kind()};
        sub.copyOut(*sx, a.hidden[std::size_t(l + 1)], s * d * sizeof(float));
    }
    // The decoder: causal self-attention, cross-attention over the encoder's output, the MLP.
    const Buffer &memory = *sx;
    const std::size_t decoderHidden = std::size_t(le + 1), crossInputs = std::size_t(le + 1 + ld + 1);
    for (int l = 0; l < ld; ++l) {
        if (Status st = sub.layer(std::uint64_t(le + l), cancel); !st)
            return st.error();
        Recorders r(shared, sub.commands(), *m_descriptors, *m_rowNorm, *m_elementwise, *m_embed);
        const LayerOnDevice &lw = w.layers[std::size_t(le + l)];
        fullBarrier(r.commands);
        Status st = attend(r, lw.attention, TranslationAttention::Decoder, *x, *x, 1, t, t, std::size_t(le + l));
        if (st)
            st = r.postNorm(x, y, t, d, lw.norm1, lw.norm1Bias, eps);
        if (st) {
            sub.copyOut(*x, a.hidden[crossInputs + std::size_t(l)], t * d * sizeof(float));
            fullBarrier(r.commands); // the copy reads x before the cross-attention adds to it
            st = attend(r, lw.cross, TranslationAttention::Cross, *x, memory, 2, t, s, std::size_t(le + ld + l));
        }
        if (st)
            st = r.postNorm(x, y, t, d, lw.crossNorm, lw.crossNormBias, eps);
        if (st)
            st = feedForward(r, lw, x, y, t, c.decoder);
        if (!st)
            return Error{"decoder layer " + std::to_string(l) + ": " + st.message(), st.kind()};
        sub.copyOut(*x, a.hidden[decoderHidden + std::size_t(l + 1)], t * d * sizeof(float));
    }
    if (Status st = sub.finish(cancel); !st)
        return st.error();

    // Out of the read-back buffers into the run; the logits from the last hidden state.
    const auto copyMaps = [&](FloatBuffer &to, std::size_t first, int layers, std::uint64_t floats) {
        for (int l = 0; l < layers; ++l)
            std::memcpy(to.data() + std::uint64_t(l) * floats, a.maps[first + std::size_t(l)].mapped(),
                        std::size_t(floats * sizeof(float)));
    };
    const std::uint64_t he = std::uint64_t(c.encoder.heads), hd = std::uint64_t(c.decoder.heads);
    copyMaps(run.encoderAttentions, 0, le, he * s * s);
    copyMaps(run.decoderAttentions, std::size_t(le), ld, hd * t * t);
    copyMaps(run.crossAttentions, std::size_t(le + ld), ld, hd * t * s);
    // Read-back states first..first+count-1, state i being layer i - embedded's output (the
    // embeddings themselves, i < embedded, are not checked, as on the CPU).
    const auto states = [&](std::vector<MatrixF> &to, std::size_t first, int count, int embedded, std::int64_t rows,
                            const char *stack) -> Status {
        for (int i = 0; i < count; ++i) {
            MatrixF m = Eigen::Map<const MatrixF>(static_cast<const float *>(a.hidden[first + std::size_t(i)].mapped()),
                                                  rows, c.width);
            if (i >= embedded && !m.allFinite())
                return Error{std::string(stack) + " layer " + std::to_string(i - embedded) +
                                 ": the hidden state overflowed to Inf or NaN",
                             ErrorKind::NonFinite};
            to.push_back(std::move(m));
        }
        return Ok{};
    };
    for (Status st : {states(run.encoderHiddenStates, 0, le + 1, 1, sourceTokens, "encoder"),
                      states(run.decoderHiddenStates, decoderHidden, ld + 1, 1, targetTokens, "decoder"),
                      states(run.crossInputs, crossInputs, ld, 0, targetTokens, "decoder")})
        if (!st)
            return st.error();
    run.logits = model.logits(run.decoderHiddenStates.back());
    if (model.weights().source)
        if (Status st = model.weights().source->checkUnchanged(); !st)
            return st.error();
    return std::shared_ptr<const TranslationRun>(std::move(*started));
}

} // namespace attnscope::vk
