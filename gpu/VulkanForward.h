#pragma once

// A model's whole forward pass on Vulkan (core/models/ForwardEngine.h; docs/architecture.md,
// "Forward engines"), a translation model's (encoder and decoder) too. The weights go to the
// device once, when a model is first loaded: the checkpoint's mapped matrices (token embedding,
// MLP) as stored, float16 and bfloat16 converted in the shader; the rest (attention weights,
// norms, biases, as the model holds them in memory) in float32. A forward uploads only its ids,
// masks and RoPE tables. Every layer is recorded: shaders/embed.comp, shaders/rownorm.comp (LayerNorm, RMSNorm), the
// attention passes of gpu/VulkanPasses.h, gemm.comp for the MLP with the residual sum fused into the output and down
// projections, shaders/elementwise.comp (activations, the gated product, residual sums where a norm comes between).
// Layers go to the device in batches of `layersPerSubmission`, recorded into one of two command buffers while the other
// runs, so a forward of L layers is ceil(L / N) submissions. Only what the forward keeps comes back: each layer's
// weights (H x T x T) and the L + 1 hidden states; the attention inputs follow from the hidden states on the host.

#include "core/attention/AttentionBackend.h"
#include "core/models/TransformerModel.h"
#include "gpu/VulkanEngineShared.h"

#include <array>
#include <atomic>
#include <memory>
#include <vector>

namespace attnscope {
class TranslationModel;
struct TranslationRun;
} // namespace attnscope

namespace attnscope::vk {

// Layers recorded into one submission by default: about a hundred dispatches for a model
// whose block is twenty-odd, as llama.cpp's Vulkan backend batches its graph.
inline constexpr std::uint32_t kLayersPerSubmission = 4;

// What the backend lends the forward engine, and the layers it records per submission.
struct ForwardShared : EngineShared {
    std::uint32_t layersPerSubmission = kLayersPerSubmission;
};

struct ForwardStats {
    std::uint64_t submissions = 0;
    std::uint64_t uploaded = 0, readBack = 0; // bytes (see VulkanBackend::transfers)
};

// One of the forward's passes on its own, for the per-op checks against the CPU
// (tests/gpu/tst_vulkan_forward.cpp, after ggml's test-backend-ops).
enum class ModelOp {
    Norm,     // rownorm.comp: normalizeRows(x, {weight, bias}, eps)
    Add,      // elementwise.comp: x + other
    Activate, // elementwise.comp: act(x)
    Gate,     // elementwise.comp: x·act(other)
    Embed,    // embed.comp: rows of x (the token table) at ids · scale, + other's rows (positions), + bias
    Dense,    // gemm.comp with the fused residual: other + x·matrix + bias
};

struct ModelOpInput {
    ModelOp op = ModelOp::Norm;
    MatrixF x, other, matrix;
    // Dense's matrix or Embed's token table as a checkpoint's mapped weight (F16, BF16, F32;
    // transposed or not), kept on the device as stored; where not mapped, `matrix` or `x`.
    WeightMatrix stored;
    VectorF weight, bias;
    std::vector<std::int32_t> ids;
    Activation activation = Activation::GeluTanh;
    double eps = 1e-5;
    float scale = 1.0f;
};

class ModelForward
{
public:
    static Result<std::unique_ptr<ModelForward>> create(const Device &device);
    ~ModelForward();

    // The keeps this engine computes: the maps and hidden states (not pooled maps, not queries
    // and keys: those run the layer loop).
    static bool runs(const ForwardKeep &keep);
    // Uploads the model's weights unless they are the ones on the device already.
    Status load(const ForwardShared &shared, const TransformerModel &model, ForwardStats &stats);
    Result<std::shared_ptr<const ModelRun>> forward(const ForwardShared &shared, const TransformerModel &model,
                                                    const Encoding &input, const ForwardKeep &keep,
                                                    const std::atomic<bool> *cancel, ForwardStats &stats);
    // A translation model's teacher-forced pass (TranslationModel::forward): the encoder's
    // layers, then the decoder's (self-attention, cross-attention over the encoder's output kept
    // on the device, MLP), batched across both stacks, so ceil((Le + Ld) / N) submissions. Read
    // back: every map, hidden state and cross input the run keeps; the logits follow from the
    // last hidden state on the host.
    Result<std::shared_ptr<const TranslationRun>> translate(const ForwardShared &shared, const TranslationModel &model,
                                                            const Encoding &source, const Encoding &target,
                                                            const std::atomic<bool> *cancel, ForwardStats &stats);
    // The device bytes the loaded weights take (0 before a load).
    std::uint64_t weightBytes() const;
    // One pass on its own: uploads the input, records the pass, reads the result back.
    Result<MatrixF> runOp(const ForwardShared &shared, const ModelOpInput &input, ForwardStats &stats);

    struct Weights;
    struct Arena;

private:
    ModelForward() = default;
    // Waits for whatever the two command buffers still run (a forward that failed after a
    // submission returns without waiting), before anything they use is reset or freed.
    Status drain(const ForwardShared &shared);
    // Uploads the weights `fill` puts unless those of `key` are on the device already.
    template <typename Fill>
    Status loadWeights(const ForwardShared &shared, const void *key, std::shared_ptr<const void> source,
                       const ModelTensors *tensors, Fill &&fill, ForwardStats &stats);
    Status loadTranslation(const ForwardShared &shared, const TranslationModel &model, ForwardStats &stats);
    // The per-forward buffers for T tokens of the loaded model (kept while T stays the same).
    Status allocate(const ForwardShared &shared, const TransformerModel &model, std::int64_t tokens);
    Status allocateTranslation(const ForwardShared &shared, const TranslationModel &model, std::int64_t sourceTokens,
                               std::int64_t targetTokens);

    const Device *m_device = nullptr;
    std::unique_ptr<ComputePipeline> m_rowNorm, m_elementwise, m_embed;
    std::array<std::unique_ptr<CommandContext>, 2> m_commands;
    std::unique_ptr<DescriptorArena> m_descriptors;
    std::unique_ptr<Weights> m_weights;
    std::unique_ptr<Arena> m_arena;
};

} // namespace attnscope::vk
