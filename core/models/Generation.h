#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/attention/QkAttention.h"
#include "core/models/TransformerModel.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace attnscope {

// What one call of DecoderCache::append gives for its n new tokens, the sequence then holding
// first + n: each layer's and head's rows of the causal map (n by first + n, row i over keys
// 0 .. first + i, zero beyond) and the next-token logits of each new token (n by vocab, after
// any final soft-cap).
struct CacheRows {
    std::int64_t first = 0;
    std::vector<MatrixF> attentions; // [L·H], layer-major
    MatrixF logits;

    const MatrixF &attention(int layer, int head, int heads) const
    {
        return attentions[std::size_t(layer) * std::size_t(heads) + std::size_t(head)];
    }
};

// A decoder's key/value cache (design.md, "Contract: generation"): per layer the keys as the
// attention kernel received them (after projections, biases, q/k norms and RoPE; one column block
// per key/value head) and the values, so that running the model on more tokens computes only
// their rows: their embeddings, their q against every cached key (causal, sliding windows,
// soft-cap, sinks, grouped heads as the full forward), the MLPs and the logits. The rows equal
// those of TransformerModel::forward over the whole sequence. The model must outlive the cache.
class DecoderCache
{
public:
    // Refused for BERT ("bert has no language-model head").
    static Result<DecoderCache> start(const TransformerModel &model);

    // Runs the model on ids, appended after the cached tokens; refused past the model's
    // positions. Cancelled (kind Cancelled) between layers once `cancel` is set.
    Result<CacheRows> append(const std::vector<std::int32_t> &ids, const std::atomic<bool> *cancel = nullptr);

    std::int64_t length() const { return m_length; }

private:
    struct Layer {
        QkLayer qk;     // k: the cached keys; q: the last call's queries
        MatrixF values; // T by KV·dV
    };
    explicit DecoderCache(const TransformerModel &model) : m_model(&model) {}
    const TransformerModel *m_model;
    std::vector<Layer> m_layers;
    std::int64_t m_length = 0;
};

// The decoding settings of design.md: greedy when temperature is 0; otherwise temperature, then
// top-k (0: off), then top-p (1: off), as transformers' warpers, and a draw from a
// std::mt19937_64 seeded with `seed`.
struct GenerationSettings {
    std::int64_t maxNewTokens = 16;
    double temperature = 0.0;
    std::int64_t topK = 0;
    double topP = 1.0;
    std::uint64_t seed = 0;
    std::vector<std::int32_t> eosIds; // generation stops after one of these, kept as the last id
};

// One line for the first setting out of range: temperature < 0 (or not finite), top-k < 0,
// top-p outside (0, 1], max-new-tokens < 1.
Status checkGenerationSettings(const GenerationSettings &settings);

struct Candidate {
    std::int32_t id = 0;
    std::string token;
    float p = 0; // float32 softmax of the final logits over the whole vocabulary
};

struct GenerationStep {
    std::int32_t id = 0; // the chosen token
    std::string token;
    float p = 0;                       // its probability (as Candidate::p)
    std::vector<Candidate> candidates; // the 10 most probable, most probable first (ties: lower id)
};

struct Generation {
    std::vector<std::int32_t> ids; // prompt, then generated
    std::vector<std::string> tokens;
    std::int64_t promptLength = 0;
    std::vector<GenerationStep> steps;
    bool stoppedAtEos = false;
};

// Probabilities of a row of logits as design.md defines them: the float32 softmax over the
// whole vocabulary (sums in double).
VectorF tokenProbabilities(const Eigen::Ref<const VectorF> &logits);

// The id the settings choose from a row of logits: the first largest when greedy; otherwise
// temperature, top-k (every logit tied with the k-th kept), top-p (the smallest set of most
// probable tokens whose probability reaches top-p, at least one; equal probabilities ordered by
// id, lower first), then one uniform draw from `rng` (53 bits, by hand) over the rest.
std::int32_t chooseToken(const Eigen::Ref<const VectorF> &logits, const GenerationSettings &settings,
                         std::mt19937_64 &rng);

// Generates after `prompt` with a DecoderCache: per step the chosen id, its probability and the 10
// best candidates (onStep is called with each as it is chosen), until maxNewTokens or an eos id.
// Stops early, without error, where the model has no more positions. Cancelled (kind Cancelled)
// between steps, and between layers, once `cancel` is set.
Result<Generation> generate(const TransformerModel &model, const Encoding &prompt, const GenerationSettings &settings,
                            const std::atomic<bool> *cancel = nullptr,
                            const std::function<void(const GenerationStep &)> &onStep = {});

// A model folder's end-of-sequence ids: `eos_token_id` of generation_config.json when it sets
// one, else of config.json (an int or a list); none when neither does. A value that is neither
// is refused naming the file and field.
Result<std::vector<std::int32_t>> readEosIds(const std::string &modelDir);

} // namespace attnscope
