#pragma once

// An encoder–decoder translation model (design.md, "encoder–decoder translation models"): a
// Marian folder as Helsinki-NLP's opus-mt models ship it, with transformers' MarianMTModel
// semantics. Its blocks are TransformerLayers (post-LN, biases everywhere); the decoder's carry
// a cross-attention. Every attention, the cross-attention included, runs through an
// AttentionBackend, so a translation runs on the GPU where one works.

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/analysis/AttentionSet.h"
#include "core/attention/AttentionBackend.h"
#include "core/attention/AttentionProblem.h"
#include "core/models/ModelConfig.h"
#include "core/models/ModelTensors.h"
#include "core/models/TransformerModel.h"
#include "core/tokenizers/Tokenizer.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

struct TranslationWeights {
    // vocab by d: the shared embedding (model.shared.weight, or encoder/decoder embed_tokens
    // where those are the stored names), the input of both stacks; mapped in its stored dtype.
    WeightMatrix embedding;
    // vocab by d: lm_head.weight when the model does not tie it to the embedding.
    std::optional<WeightMatrix> lmHead;
    VectorF finalLogitsBias; // vocab: added to the logits
    std::vector<TransformerLayer> encoder;
    std::vector<TransformerLayer> decoder; // each with crossAttention and crossNorm
    std::shared_ptr<const ModelTensors> source;
};

// The model's three kinds of attention, each a set of one shape (sample, layer, head).
enum class TranslationAttention {
    Encoder, // encoder self-attention: source by source
    Decoder, // decoder self-attention (causal): target by target
    Cross,   // decoder queries over encoder keys: target by source
};

// One teacher-forced pass: what transformers returns with output_attentions and
// output_hidden_states (batch axis removed), plus what reproduces any one head on its own.
struct TranslationRun {
    TranslationConfig config;
    Encoding source;                          // the encoder's ids (ending in </s>)
    Encoding target;                          // the decoder's input: the start token, then the target's ids
    FloatBuffer encoderAttentions;            // [Le, He, S, S]
    FloatBuffer decoderAttentions;            // [Ld, Hd, T, T]
    FloatBuffer crossAttentions;              // [Ld, Hd, T, S]
    std::vector<MatrixF> encoderHiddenStates; // Le+1 matrices S by d: the embeddings, then each layer
    std::vector<MatrixF> decoderHiddenStates; // Ld+1 matrices T by d
    // Per decoder layer, the x its cross-attention reads as queries (its self-attention reads
    // decoderHiddenStates[l], the encoder's layers encoderHiddenStates[l]: post-LN blocks).
    std::vector<MatrixF> crossInputs;
    MatrixF logits; // T by vocab: the next-token logits after each decoder position
    std::shared_ptr<const TranslationWeights> weights;

    std::int64_t sourceLength() const { return std::int64_t(source.ids.size()); }
    std::int64_t targetLength() const { return std::int64_t(target.ids.size()); }
};

class TranslationModel
{
public:
    // config.json, generation_config.json, the weights and the tokenizer (source.spm,
    // target.spm, vocab.json). A folder with pytorch_model.bin and no model.safetensors is
    // refused with the command that converts it (scripts/convert_to_safetensors.py).
    static Result<TranslationModel> load(const std::string &modelDir);
    // A model from weights in memory (tests); shapes are checked as load() does.
    static Result<TranslationModel> fromWeights(const TranslationConfig &config, TranslationWeights weights,
                                                std::optional<TranslationTokenizers> tokenizers = std::nullopt);

    const TranslationConfig &config() const { return m_config; }
    const TranslationWeights &weights() const { return *m_weights; }
    const std::optional<TranslationTokenizers> &tokenizers() const { return m_tokenizers; }

    // tokenizer(text).input_ids: the source side, ending in </s>.
    Result<Encoding> encodeSource(std::string_view text) const;
    // The decoder's input for a target text: the start token, then
    // tokenizer(text_target=text).input_ids (ending in </s>).
    Result<Encoding> encodeTarget(std::string_view text) const;
    // Ids given directly, checked (at least one, each in the vocabulary, at most the positions)
    // and labelled with the vocabulary's spelling.
    Result<Encoding> input(std::vector<std::int32_t> ids, const char *what) const;

    // generate(num_beams=1): from the start token, the argmax of each step's logits (the pad id
    // never), a forced eos at max_length where forced_eos_token_id is set; stops after eos
    // (kept) or at max_length ids. Returns the decoder's ids, the start token first, labelled.
    // `cancel` stops it between steps (kind Cancelled).
    // The text the decoder's ids spell, without the start token, </s> and padding (the
    // translation as a reader sees it).
    std::string targetText(const std::vector<std::int32_t> &ids) const;

    Result<Encoding> greedy(const Encoding &source, AttentionBackend &backend,
                            const std::atomic<bool> *cancel = nullptr) const;

    // One teacher-forced pass over source and the decoder's input `target`. Refused before
    // allocating when its attentions and hidden states do not fit in memory. Runs on the
    // backend's forward engine where it computes translations (Vulkan: the whole pass on the
    // device), else, or where the device cannot (layerLoopMayRetry), the layer loop.
    Result<std::shared_ptr<const TranslationRun>> forward(const Encoding &source, const Encoding &target,
                                                          AttentionBackend &backend,
                                                          const std::atomic<bool> *cancel = nullptr) const;
    // The same pass, layer by layer on the host with each attention through `backend`.
    Result<std::shared_ptr<const TranslationRun>> forwardLayerByLayer(const Encoding &source, const Encoding &target,
                                                                      AttentionBackend &backend,
                                                                      const std::atomic<bool> *cancel = nullptr) const;
    // A pass's checks (the inputs, the memory) and its run with the tokens and config set and the
    // attention buffers sized, for whichever engine fills it.
    Result<std::shared_ptr<TranslationRun>> startRun(const Encoding &source, const Encoding &target) const;
    std::int64_t forwardBytes(std::int64_t sourceTokens, std::int64_t targetTokens) const;
    // The shape of a kind's attention over `queries` by `keys` tokens without its weights (zero
    // inputs): its spec and mask, for an engine that holds the weights elsewhere.
    AttentionProblem attentionShape(TranslationAttention kind, std::int64_t queries, std::int64_t keys) const;
    // The logits of each row of the decoder's last hidden state, with final_logits_bias.
    MatrixF logits(const MatrixF &lastHidden) const;
    std::shared_ptr<const TranslationWeights> sharedWeights() const { return m_weights; }

private:
    TranslationModel() = default;
    MatrixF embed(const std::vector<std::int32_t> &ids) const;
    Result<MatrixF> encoderOutput(const MatrixF &embedded, AttentionBackend &backend, TranslationRun *run,
                                  const std::atomic<bool> *cancel) const;
    Result<MatrixF> decoderOutput(const MatrixF &embedded, const MatrixF &memory, AttentionBackend &backend,
                                  TranslationRun *run, const std::atomic<bool> *cancel) const;

    TranslationConfig m_config;
    std::shared_ptr<const TranslationWeights> m_weights;
    std::optional<TranslationTokenizers> m_tokenizers;
};

// The sinusoidal positions of MarianSinusoidalPositionalEmbedding: rows 0..count-1, d columns,
// sin(p/10000^(2i/d)) in column i and cos of the same in column d/2 + i, computed in double.
MatrixF marianPositions(std::int64_t count, int width);

// One kind of a run's attention as the set every view, statistic and export works on (one
// sample; layers and heads of that stack), with the source and target tokens on its axes; the
// set keeps the run alive.
Result<AttentionSet> translationAttentionSet(std::shared_ptr<const TranslationRun> run, TranslationAttention kind);

// Layer l of one kind as forward() computed it, every head and W_O; computing it on the same
// backend gives the run's attentions of that layer again. Cross: a cross-attention problem
// with the decoder's queries and the encoder's output as keys and values.
AttentionProblem translationLayerProblem(const TranslationRun &run, TranslationAttention kind, int layer);
// Head h of it as a project's problem of its own (one head, no W_O): "open this head in the
// editor".
AttentionProblem translationHeadProblem(const TranslationRun &run, TranslationAttention kind, int layer, int head);

// True when MODEL_DIR/config.json names model_type "marian" (a translation model).
bool isTranslationModelFolder(const std::string &modelDir);

} // namespace attnscope
