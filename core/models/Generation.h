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

// Which new tokens' logits DecoderCache::append computes: every one, or only the last (what
// generation chooses from; a prompt's other rows would cost a vocabulary of logits each).
enum class CacheLogits { AllRows, LastRow };

// What one call of DecoderCache::append gives for its n new tokens, the sequence then holding
// first + n: each layer's and head's rows of the causal map (n by first + n, row i over keys
// 0 .. first + i, zero beyond) and the next-token logits of each new token (n by vocab, after
// any final soft-cap; 1 by vocab, the last token's, for CacheLogits::LastRow).
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
    Result<CacheRows> append(const std::vector<std::int32_t> &ids, CacheLogits logits = CacheLogits::AllRows,
                             const std::atomic<bool> *cancel = nullptr);

    std::int64_t length() const { return m_length; }
    // Forgets every token from `length` on (a shorter sequence than length() only): the next
    // append continues from there, its rows as if those tokens had never been run.
    void truncate(std::int64_t length);

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
    float p = 0;       // float32 softmax of the final logits over the whole vocabulary
    float sampled = 0; // its probability in the draw (samplingProbabilities): after temperature and filtering
};

struct GenerationStep {
    std::int32_t id = 0; // the chosen token
    std::string token;
    float p = 0;                       // its probability (as Candidate::p)
    float sampled = 0;                 // its probability in the draw (as Candidate::sampled)
    bool forced = false;               // the user chose it instead of the settings
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

// The distribution the settings draw from, over the whole vocabulary: 1 at the first largest
// logit when greedy; otherwise the softmax after temperature, top-k and top-p as chooseToken
// applies them (filtered tokens 0).
VectorF samplingProbabilities(const Eigen::Ref<const VectorF> &logits, const GenerationSettings &settings);

// The id the settings choose from a row of logits: the first largest when greedy; otherwise
// temperature, top-k (every logit tied with the k-th kept), top-p (the smallest set of most
// probable tokens whose probability reaches top-p, at least one; equal probabilities ordered by
// id, lower first), then one uniform draw from `rng` (53 bits, by hand) over the rest.
std::int32_t chooseToken(const Eigen::Ref<const VectorF> &logits, const GenerationSettings &settings,
                         std::mt19937_64 &rng);

// Generation one token at a time, as the window steps it: a DecoderCache over the prompt, then per
// step() a token chosen from the last token's logits (or one the user forces) and appended.
// Settings may change between steps (the window's controls); rewind() goes back to an earlier step
// to choose it again, where the generator keeps its history. The model must outlive it.
class Generator
{
public:
    struct Options {
        bool keepMaps = false;    // maps(): every head's causal map of the sequence so far
        bool keepHistory = false; // rewind(): each step's logits and random state (a vocabulary of floats per step)
    };
    // Runs the prompt (checked as TransformerModel::input checks ids). Settings are checked here.
    static Result<Generator> start(const TransformerModel &model, const Encoding &prompt,
                                   const GenerationSettings &settings, Options options,
                                   const std::atomic<bool> *cancel = nullptr);

    // Chooses the next token from the last token's logits (or takes `forced`, which must be in
    // the vocabulary) and records its step; the token is run through the model on the next call
    // or settle(). Refused once finished().
    Result<GenerationStep> step(std::optional<std::int32_t> forced = std::nullopt,
                                const std::atomic<bool> *cancel = nullptr);
    // Runs the last chosen token through the model, so that maps() hold its row; nothing to do
    // when it ran already. A generation that reached the model's last position keeps its last
    // token unrun (its row is then missing from maps()).
    Status settle(const std::atomic<bool> *cancel = nullptr);
    // Forgets steps `index` onwards (index <= steps): the next step() chooses step `index` again,
    // from its logits and the random state it had. Needs Options::keepHistory.
    Status rewind(std::size_t index);

    // Stopped: the last step chose an eos id, maxNewTokens steps were taken, or the model has
    // no more positions.
    bool finished() const;
    bool stoppedAtEos() const { return m_generation.stoppedAtEos; }
    const Generation &generation() const { return m_generation; }
    const GenerationSettings &settings() const { return m_settings; }
    Status setSettings(const GenerationSettings &settings); // checked; applies from the next step
    // [L·H] layer-major, each T by T over the tokens run so far (causal: zero above the diagonal).
    const std::vector<MatrixF> &maps() const { return m_maps; }
    std::int64_t tokensRun() const { return m_cache.length(); }
    const TransformerModel &model() const { return *m_model; }

private:
    Generator(const TransformerModel &model, DecoderCache cache) : m_model(&model), m_cache(std::move(cache)) {}
    Status run(const std::vector<std::int32_t> &ids, const std::atomic<bool> *cancel);
    std::string spelling(std::int32_t id) const;

    const TransformerModel *m_model;
    DecoderCache m_cache;
    GenerationSettings m_settings;
    Options m_options;
    Generation m_generation;
    std::mt19937_64 m_rng;
    VectorF m_logits; // of the last token run: the next step chooses from them
    std::vector<MatrixF> m_maps;
    std::vector<VectorF> m_stepLogits;         // keepHistory: what each step chose from
    std::vector<std::mt19937_64> m_stepRandom; // and the random state before it chose
};

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

// The decoding a model folder asks for, as transformers' GenerationConfig reads
// generation_config.json: greedy unless `do_sample` is true, then `temperature` (default 1),
// `top_k` (default 50; 0 or null: off) and `top_p` (default 1); `max_new_tokens` (default 16
// here); the eos ids of readEosIds. No file gives greedy, 16 tokens. A field of the wrong type is
// refused naming the file and the field.
Result<GenerationSettings> readGenerationDefaults(const std::string &modelDir);

// tokens.json of design.md's generation contract: ids, tokens, promptLength and the steps (a
// forced step says "forced": true), one line of JSON and a newline.
std::string generationTokensJson(const Generation &generation);

} // namespace attnscope
