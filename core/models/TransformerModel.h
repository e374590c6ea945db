#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/analysis/AttentionSet.h"
#include "core/attention/AttentionBackend.h"
#include "core/attention/AttentionProblem.h"
#include "core/models/ModelConfig.h"
#include "core/models/ModelTensors.h"
#include "core/models/WeightMatrix.h"
#include "core/tokenizers/Tokenizer.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// A LayerNorm's weight and bias, or an RMSNorm's weight (bias empty). Gemma's RMSNorm, which
// multiplies by (1 + w), is stored with the 1 already added.
struct LayerNormWeights {
    VectorF weight; // d
    VectorF bias;   // d; empty for RMSNorm

    bool isSet() const { return weight.size() > 0; }
};

// One transformer block's weights in float32, oriented to multiply on the right (design.md's
// W): GPT-2's Conv1D weights are stored that way already, nn.Linear weights transposed.
struct TransformerLayer {
    // q: d by H·dK; k, v: d by G·dK (key/value heads G); o: H·dK by d; biases where the model
    // has them; qNorm/kNorm (Qwen 3, Gemma 3): the per-head RMSNorms before RoPE.
    AttentionWeights attention;
    LayerNormWeights norm1;             // before attention (BERT: after it, on the residual sum)
    LayerNormWeights postAttentionNorm; // Gemma: on the attention's output before the residual
    LayerNormWeights norm2;             // before the MLP (BERT: after it)
    LayerNormWeights postMlpNorm;       // Gemma: on the MLP's output before the residual
    // The MLP's weights stay mapped in their stored dtype when loaded from a checkpoint.
    WeightMatrix up;                  // d by intermediate (c_fc | intermediate.dense | up_proj)
    VectorF upBias;                   // intermediate, or empty
    std::optional<WeightMatrix> gate; // gated MLPs: d by intermediate (gate_proj)
    VectorF gateBias;                 // intermediate, or empty
    WeightMatrix down;                // intermediate by d (c_proj | output.dense | down_proj)
    VectorF downBias;                 // d, or empty
    // An encoder–decoder model's decoder layer (TranslationModel.h): the cross-attention, with
    // queries from this layer and keys and values from the encoder's output, and the norm on
    // its residual sum (encoder_attn, encoder_attn_layer_norm). Absent in every other layer.
    std::optional<AttentionWeights> crossAttention;
    LayerNormWeights crossNorm;
};

// transformers' LayerNorm (biased variance over the row) or RMSNorm (x/sqrt(mean(x²) + eps)·w,
// when the bias is empty), in float32 storage; the row's sums are accumulated in double.
MatrixF normalizeRows(const MatrixF &x, const LayerNormWeights &w, double eps);
// The MLP's activation of every element of x, in place.
void activate(MatrixF &x, Activation activation);
// A layer's MLP: down(act(up(x))), or down(act(gate(x))·up(x)) when gated, biases where given.
MatrixF feedForward(const MatrixF &x, const TransformerLayer &layer, Activation activation);

struct TransformerWeights {
    WeightMatrix tokenEmbedding;        // vocab by d (wte | word_embeddings | embed_tokens); mapped when loaded
    MatrixF positionEmbedding;          // learned positions: positions by d (wpe | position_embeddings)
    VectorF tokenType0;                 // BERT: token type 0's embedding (d); empty otherwise
    LayerNormWeights embeddingNorm;     // BERT: embeddings.LayerNorm
    LayerNormWeights finalNorm;         // after the last block (GPT-2 ln_f, norm)
    std::optional<WeightMatrix> lmHead; // vocab by d as stored; absent: the token embedding (tied)
    std::vector<TransformerLayer> layers;
    // The checkpoint the mapped weights are read from (absent for weights made in memory): a
    // forward asks it whether the files changed while it read them.
    std::shared_ptr<const ModelTensors> source;
};

// What a forward keeps of each layer's attention besides the hidden states (design.md: `model`,
// `model --pool N`, `model --qk-out`).
struct ForwardKeep {
    bool maps = true; // every head's T x T weights (ModelRun::attentions)
    // > 0: each layer's weights pooled to at most N x N cells per head and its row entropies
    // (ModelRun::pooled), never a T x T map per head: the attention runs on the backend's pooled
    // path (computePooled), which gives the layer's output too. Not with maps.
    std::int64_t poolBins = 0;
    PoolMode poolMode = PoolMode::Max;
    // Each layer's q and k as the kernel received them (ModelRun::queriesKeys): every map follows
    // from them (AttentionSet::fromQk). Without maps or pooling, the attention runs on the pooled
    // path with one cell.
    bool queriesKeys = false;
};

// What one forward pass gives: exactly what transformers returns with output_attentions and
// output_hidden_states (batch axis removed), plus what reproduces any one head on its own.
struct ModelRun {
    ModelType type = ModelType::Gpt2;
    ModelConfig config; // the model's, so that each layer's problem can be formed again
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens; // the vocabulary's spelling of each id
    // The tokenizer's word of each token (Encoding::words) when the run read text; empty for ids.
    std::vector<std::int32_t> words;
    int layers = 0, heads = 0;
    std::int64_t length = 0; // T
    // [L, H, T, T] row-major float32: softmax weights of head h in layer l; empty unless
    // ForwardKeep::maps.
    FloatBuffer attentions;
    // [L] with ForwardKeep::poolBins: pooled cells of every head (pooled[H], Nq x Nk) and row
    // entropies (H x T); output left empty.
    std::vector<PooledResult> pooled;
    // [L] with ForwardKeep::queriesKeys: each layer's q and k with the facts of the layer.
    std::vector<std::shared_ptr<const QkLayer>> queriesKeys;
    // L+1 matrices T by d: the embeddings output first (BERT: after its LayerNorm), then each
    // block's output; GPT-2's last is after ln_f.
    std::vector<MatrixF> hiddenStates;
    // L matrices T by d: the x each layer's attention read (GPT-2: ln_1's output; BERT: the
    // layer's input).
    std::vector<MatrixF> attentionInputs;
    // The model's weights (shared, not copied): each layer's Q/K/V/O weights and biases.
    std::shared_ptr<const TransformerWeights> weights;
    std::vector<double> scales;         // [L] factor on Q_h·K_hᵀ per layer
    std::vector<LayerFacts> layerFacts; // [L] heads, key/value heads, window, scale

    // Head h of layer l, T by T (a view into attentions).
    Eigen::Map<const MatrixF> attention(int layer, int head) const;
};

// A Hugging Face model folder (design.md, "real models" and "today's decoder models"):
// config.json, model.safetensors (or its shards) and its tokenizer, with the forward pass of
// transformers for every architecture of core/models/Architecture.h, one loop over the block
// recipe. Attention runs through an AttentionBackend (CPU or Vulkan); embeddings, norms and MLPs
// with Eigen in float32. Immutable once loaded; forward() may run on several threads at once.
class TransformerModel
{
public:
    // Every failure is one line naming the file and the tensor or field:
    //   "m/model.safetensors: h.3.attn.c_attn.weight: expected 64 x 192, found 64 x 190".
    // Tensor names are accepted with and without the architecture's prefixes ("transformer.",
    // "bert.", "model.", ...), BERT's LayerNorm.gamma/beta for weight/bias; tensors the forward
    // does not use are ignored.
    // The weights are converted to float32 once, after checking that they fit in memory.
    static Result<TransformerModel> load(const std::string &modelDir);

    // A model from weights in memory (benchmarks, tests); shapes are checked as load() does.
    static Result<TransformerModel> fromWeights(const ModelConfig &config, TransformerWeights weights,
                                                std::optional<Tokenizer> tokenizer = std::nullopt);

    const ModelConfig &config() const { return m_config; }
    const TransformerWeights &weights() const { return *m_weights; }
    // The same weights, shared: what a run keeps, and what a device engine knows a model by.
    const std::shared_ptr<const TransformerWeights> &sharedWeights() const { return m_weights; }
    const std::optional<Tokenizer> &tokenizer() const { return m_tokenizer; }

    // The tokenizer's ids and tokens for text (BERT: [CLS] ... [SEP]), checked as input().
    Result<Encoding> encode(std::string_view text) const;
    // Ids given directly, checked (at least one, each below vocab_size, at most the positions)
    // and labelled with the vocabulary's spelling ("<id 123>" where it has none).
    Result<Encoding> input(std::vector<std::int32_t> ids) const;

    // The forward pass. Refused before allocating when the attentions and hidden states do not
    // fit in memory (kind TooLarge); an attention the backend refuses is returned as its error.
    // When `cancel` is given and becomes true (from another thread), the pass stops at the next
    // layer or at the MLP of the current one and returns an error of kind Cancelled, so that a
    // superseded run frees its worker within one layer's time.
    // Where the backend offers a forward engine that runs this pass (core/models/ForwardEngine.h)
    // the whole pass runs there; where that engine fails for its device (lost, out of memory,
    // too large for it), the layer loop runs with the backend's attention instead.
    Result<std::shared_ptr<const ModelRun>> forward(const Encoding &input, AttentionBackend &backend,
                                                    const std::atomic<bool> *cancel = nullptr,
                                                    const ForwardKeep &keep = {}) const;
    // The CPU engine's pass: layer by layer, attention through `backend`, the rest with Eigen.
    Result<std::shared_ptr<const ModelRun>> forwardLayerByLayer(const Encoding &input, AttentionBackend &backend,
                                                                const std::atomic<bool> *cancel = nullptr,
                                                                const ForwardKeep &keep = {}) const;
    // What every engine does before its pass: checks the input, the keep and the memory the
    // pass needs, and returns the run with everything but the tensors (ids, tokens, words,
    // sizes, each layer's scale and facts, the weights).
    Result<std::shared_ptr<ModelRun>> startRun(const Encoding &input, const ForwardKeep &keep) const;
    // Bytes a forward over `tokens` tokens holds at its peak with `keep`.
    std::int64_t forwardBytes(std::int64_t tokens, const ForwardKeep &keep = {}) const;

    // The pieces of forward() one after the other, for a pass that adds rows (Generation.h):
    // the embeddings of ids at positions first, first + 1, ... (the first hidden state); what
    // layer l's attention reads of its input x (its first norm; BERT: x); the rest of layer l
    // after its attention (residuals, norms, MLP) given its input x and the attention's output;
    // the last hidden state (the final norm where the model has one).
    MatrixF embed(const std::vector<std::int32_t> &ids, std::int64_t first) const;
    MatrixF attentionInput(int layer, const MatrixF &x) const;
    MatrixF finishLayer(int layer, MatrixF x, MatrixF attended) const;
    MatrixF finalHidden(const MatrixF &x) const;

    // The attention problem of one layer (all heads, W_O included) on its input x (T by d).
    AttentionProblem layerProblem(int layer, MatrixF x) const;
    // The same for `tokens` tokens without the weights, and an input of that shape whose values
    // are unset: the spec, mask and positions an engine with the weights elsewhere needs.
    AttentionProblem layerShape(int layer, std::int64_t tokens) const;

    // The next-token logits of rows of the last hidden state (rows by vocab): the LM head (or
    // the tied embedding), then Gemma 2's final soft-cap. Refused for BERT (no LM head here).
    Result<MatrixF> logits(const MatrixF &lastHidden) const;

private:
    TransformerModel() = default;
    ModelConfig m_config;
    std::shared_ptr<const TransformerWeights> m_weights;
    std::optional<Tokenizer> m_tokenizer;
};

// Layer l of a run as the problem forward() computed: its attention input, every head, W_O, the
// scale, RoPE, q/k norms, soft-cap and mask (causal, sliding window). Computing it on the same backend gives the run's
// attentions of that layer again, with every intermediate tensor (Q, K, V, scores, context, output).
AttentionProblem layerProblem(const ModelRun &run, int layer);

// Head h of layer l of a run as a project's problem of its own (one head, no W_O, the layer's
// mask and positions): computing it gives attention(l, h) again. For "open this head in the editor".
AttentionProblem headProblem(const ModelRun &run, int layer, int head);

// The run's attentions as the set every view, statistic and export works on (one sample, L
// layers), with its tokens as labels; the set keeps the run alive. A run that kept queries and
// keys but no maps gives the set computed from them (AttentionSet::fromQk); one with neither is
// refused.
Result<AttentionSet> attentionSetFromRun(std::shared_ptr<const ModelRun> run);

// Checks that weights have the shapes config gives; the first mismatch names the tensor in
// transformers' terms ("h.0.attn.c_attn.weight (q): expected 24 x 24, found 24 x 23").
Status checkWeightShapes(const ModelConfig &config, const TransformerWeights &weights);

} // namespace attnscope
