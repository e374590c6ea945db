#include "core/models/Generation.h"

#include "core/attention/HeadLayout.h"
#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>

namespace attnscope {

Result<DecoderCache> DecoderCache::start(const TransformerModel &model)
{
    if (model.config().type == ModelType::Bert)
        return Error{"generate: bert has no language-model head", ErrorKind::Unsupported};
    DecoderCache cache(model);
    cache.m_layers.resize(std::size_t(model.config().layers));
    return cache;
}

Result<CacheRows> DecoderCache::append(const std::vector<std::int32_t> &ids, CacheLogits which,
                                       const std::atomic<bool> *cancel)
{
    const TransformerModel &model = *m_model;
    const ModelConfig &c = model.config();
    const std::int64_t first = m_length, n = std::int64_t(ids.size()), total = first + n;
    if (n == 0)
        return Error{"generate: no ids to add", ErrorKind::InvalidInput};
    if (total > c.maxTokens())
        return Error{"generate: " + std::to_string(total) + " tokens; this model takes at most " +
                         std::to_string(c.maxTokens()) + " (its position embeddings)",
                     ErrorKind::InvalidInput};
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= c.vocabSize)
            return Error{"ids[" + std::to_string(i) + "]: " + std::to_string(ids[i]) + " is not in the vocabulary",
                         ErrorKind::InvalidInput};
    std::vector<std::int64_t> positions(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), first);

    CacheRows rows;
    rows.first = first;
    // A call that fails (cancelled, say) leaves the cache as it found it: the layers it grew
    // shrink back to `first` tokens.
    const auto failed = [&](Error error) {
        for (Layer &layer : m_layers)
            if (layer.qk.k.rows() > first) {
                layer.qk.k.conservativeResize(first, Eigen::NoChange);
                layer.qk.keyPositions.resize(std::size_t(first));
                layer.values.conservativeResize(first, Eigen::NoChange);
            }
        return error;
    };
    MatrixF x = model.embed(ids, first);
    for (int l = 0; l < c.layers; ++l) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return failed(Error{"layer " + std::to_string(l) + ": generation was cancelled", ErrorKind::Cancelled});
        Layer &cached = m_layers[std::size_t(l)];
        AttentionProblem problem = model.layerProblem(l, model.attentionInput(l, x));
        if (problem.spec.rope) {
            problem.spec.rope = c.rope(l, total); // the frequencies of the whole sequence, as forward()
            problem.spec.rope->queryPositions = positions;
            problem.spec.rope->keyPositions = positions;
        }
        auto fresh = qkLayerOf(problem);
        if (!fresh)
            return failed(Error{"layer " + std::to_string(l) + ": " + fresh.message(), fresh.kind()});
        const HeadLayout heads = HeadLayout::of(problem.spec);
        const AttentionWeights &w = problem.weights;
        MatrixF values = problem.xq * w.v;
        if (w.vBias)
            values.rowwise() += *w.vBias;

        QkLayer &qk = cached.qk;
        if (first == 0) {
            qk = std::move(*fresh);
            qk.queryPositions = positions;
            qk.keyPositions = positions;
            cached.values = std::move(values);
        } else {
            qk.q = std::move(fresh->q);
            qk.queryPositions = positions;
            qk.k.conservativeResize(total, Eigen::NoChange);
            qk.k.bottomRows(n) = fresh->k;
            qk.keyPositions.insert(qk.keyPositions.end(), positions.begin(), positions.end());
            cached.values.conservativeResize(total, Eigen::NoChange);
            cached.values.bottomRows(n) = values;
        }

        MatrixF context(n, heads.contextWidth());
        for (int h = 0; h < heads.heads; ++h) {
            auto weights = qkWeightsBlock(qk, h, 0, n, 0, total, cancel);
            if (!weights)
                return failed(
                    Error{"layer " + std::to_string(l) + ", head " + std::to_string(h) + ": " + weights.message(),
                          weights.kind()});
            context.middleCols(heads.contextColumn(h), heads.headDimV) =
                *weights * cached.values.middleCols(heads.valueColumnOfHead(h), heads.headDimV);
            rows.attentions.push_back(std::move(*weights));
        }
        MatrixF attended = w.o ? MatrixF(context * *w.o) : std::move(context);
        if (w.o && w.oBias)
            attended.rowwise() += *w.oBias;
        x = model.finishLayer(l, std::move(x), std::move(attended));
        if (!x.allFinite())
            return failed(Error{"layer " + std::to_string(l) + ": the hidden state overflowed to Inf or NaN",
                                ErrorKind::NonFinite});
    }
    if (which == CacheLogits::LastRow && n > 1)
        x = x.bottomRows(1).eval();
    auto logits = model.logits(model.finalHidden(x));
    if (!logits)
        return failed(logits.error());
    rows.logits = std::move(*logits);
    m_length = total;
    return rows;
}

void DecoderCache::truncate(std::int64_t length)
{
    if (length < 0 || length >= m_length)
        return;
    for (Layer &layer : m_layers) {
        layer.qk.k.conservativeResize(length, Eigen::NoChange);
        layer.qk.keyPositions.resize(std::size_t(length));
        layer.values.conservativeResize(length, Eigen::NoChange);
    }
    m_length = length;
}

namespace {

// A number as a user typed it: "-1", "1.5", "nan".
std::string numberText(double v)
{
    std::ostringstream out;
    out << v;
    return out.str();
}

} // namespace

Status checkGenerationSettings(const GenerationSettings &s)
{
    if (!std::isfinite(s.temperature) || s.temperature < 0)
        return Error{"--temperature: expected a number >= 0 (0: greedy), found " + numberText(s.temperature),
                     ErrorKind::InvalidInput};
    if (s.topK < 0)
        return Error{"--top-k: expected a whole number >= 0 (0: off), found " + std::to_string(s.topK),
                     ErrorKind::InvalidInput};
    if (!(s.topP > 0 && s.topP <= 1))
        return Error{"--top-p: expected a number in (0, 1] (1: off), found " + numberText(s.topP),
                     ErrorKind::InvalidInput};
    if (s.maxNewTokens < 1)
        return Error{"--max-new-tokens: expected a whole number >= 1, found " + std::to_string(s.maxNewTokens),
                     ErrorKind::InvalidInput};
    return Ok{};
}

VectorF tokenProbabilities(const Eigen::Ref<const VectorF> &logits)
{
    const float top = logits.maxCoeff();
    double sum = 0;
    for (Eigen::Index i = 0; i < logits.size(); ++i)
        sum += std::exp(double(logits(i)) - double(top));
    VectorF p(logits.size());
    for (Eigen::Index i = 0; i < logits.size(); ++i)
        p(i) = float(std::exp(double(logits(i)) - double(top)) / sum);
    return p;
}

namespace {

// Ids ordered by value, largest first, equal values by id (lower first).
std::vector<std::int32_t> orderByValue(const Eigen::Ref<const VectorF> &values)
{
    std::vector<std::int32_t> order(std::size_t(values.size()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return values(a) > values(b); });
    return order;
}

// orderByValue's first k ids without ordering the rest: a step's candidates are 10 of a vocabulary
// of up to 256k, and sorting all of it each step took a third of a step of the example models.
std::vector<std::int32_t> topByValue(const Eigen::Ref<const VectorF> &values, std::size_t k)
{
    std::vector<std::int32_t> order(std::size_t(values.size()));
    std::iota(order.begin(), order.end(), 0);
    k = std::min(k, order.size());
    std::partial_sort(
        order.begin(), order.begin() + std::ptrdiff_t(k), order.end(),
        [&](std::int32_t a, std::int32_t b) { return values(a) > values(b) || (values(a) == values(b) && a < b); });
    order.resize(k);
    return order;
}

// A uniform double in [0, 1) from the top 53 bits of one draw: the same on every standard library.
double uniformDraw(std::mt19937_64 &rng)
{
    return double(rng() >> 11) * 0x1.0p-53;
}

} // namespace

VectorF samplingProbabilities(const Eigen::Ref<const VectorF> &logits, const GenerationSettings &settings)
{
    if (settings.temperature == 0) {
        Eigen::Index best = 0;
        logits.maxCoeff(&best); // the first largest, as torch.argmax
        VectorF p = VectorF::Zero(logits.size());
        p(best) = 1;
        return p;
    }
    const float minusInf = -std::numeric_limits<float>::infinity();
    VectorF scores = logits / float(settings.temperature); // TemperatureLogitsWarper
    if (settings.topK > 0 && settings.topK < scores.size()) {
        // TopKLogitsWarper: everything below the k-th largest goes; ties with it stay.
        std::vector<float> sorted(scores.data(), scores.data() + scores.size());
        std::nth_element(sorted.begin(), sorted.begin() + (settings.topK - 1), sorted.end(), std::greater<float>());
        const float kth = sorted[std::size_t(settings.topK - 1)];
        for (Eigen::Index i = 0; i < scores.size(); ++i)
            if (scores(i) < kth)
                scores(i) = minusInf;
    }
    if (settings.topP < 1) {
        // TopPLogitsWarper: ascending order, remove while the cumulative probability stays
        // <= 1 - top_p, the most probable token always kept.
        const VectorF p = tokenProbabilities(scores);
        std::vector<std::int32_t> order = orderByValue(p);
        std::reverse(order.begin(), order.end());
        double cumulative = 0;
        for (std::size_t r = 0; r + 1 < order.size(); ++r) {
            cumulative += double(p(order[r]));
            if (cumulative <= 1.0 - settings.topP)
                scores(order[r]) = minusInf;
        }
    }
    return tokenProbabilities(scores);
}

std::int32_t chooseToken(const Eigen::Ref<const VectorF> &logits, const GenerationSettings &settings,
                         std::mt19937_64 &rng)
{
    if (settings.temperature == 0) {
        Eigen::Index best = 0;
        logits.maxCoeff(&best); // the first largest, as torch.argmax
        return std::int32_t(best);
    }
    const VectorF p = samplingProbabilities(logits, settings);
    const double u = uniformDraw(rng);
    double cumulative = 0;
    std::int32_t last = 0;
    for (Eigen::Index i = 0; i < p.size(); ++i) {
        if (p(i) <= 0)
            continue;
        last = std::int32_t(i);
        cumulative += double(p(i));
        if (u < cumulative)
            return last;
    }
    return last; // rounding left u above the sum: the last possible token
}

Result<Generator> Generator::start(const TransformerModel &model, const Encoding &prompt,
                                   const GenerationSettings &settings, Options options, const std::atomic<bool> *cancel)
{
    if (Status s = checkGenerationSettings(settings); !s)
        return s.error();
    auto checked = model.input(prompt.ids);
    if (!checked)
        return checked.error();
    auto cache = DecoderCache::start(model);
    if (!cache)
        return cache.error();
    Generator g(model, std::move(*cache));
    g.m_settings = settings;
    g.m_options = options;
    g.m_rng.seed(settings.seed);
    g.m_generation.ids = checked->ids;
    g.m_generation.tokens = checked->tokens;
    g.m_generation.promptLength = std::int64_t(checked->ids.size());
    if (Status s = g.run(checked->ids, cancel); !s)
        return s.error();
    return g;
}

Status Generator::setSettings(const GenerationSettings &settings)
{
    if (Status s = checkGenerationSettings(settings); !s)
        return s;
    if (settings.seed != m_settings.seed)
        m_rng.seed(settings.seed);
    m_settings = settings;
    return Ok{};
}

std::string Generator::spelling(std::int32_t id) const
{
    std::optional<std::string> token = m_model->tokenizer() ? m_model->tokenizer()->token(id) : std::nullopt;
    return token ? *token : "<id " + std::to_string(id) + ">";
}

Status Generator::run(const std::vector<std::int32_t> &ids, const std::atomic<bool> *cancel)
{
    auto rows = m_cache.append(ids, CacheLogits::LastRow, cancel);
    if (!rows)
        return rows.error();
    m_logits = rows->logits.row(rows->logits.rows() - 1);
    if (m_options.keepMaps) {
        const std::int64_t total = m_cache.length(), first = rows->first, n = total - first;
        m_maps.resize(rows->attentions.size());
        for (std::size_t m = 0; m < m_maps.size(); ++m) {
            MatrixF &map = m_maps[m];
            map.conservativeResize(total, total);
            map.topRightCorner(first, n).setZero();
            map.bottomRows(n) = rows->attentions[m];
        }
    }
    return Ok{};
}

bool Generator::finished() const
{
    const Generation &g = m_generation;
    return g.stoppedAtEos || std::int64_t(g.steps.size()) >= m_settings.maxNewTokens ||
           std::int64_t(g.ids.size()) >= m_model->config().maxTokens();
}

Status Generator::settle(const std::atomic<bool> *cancel)
{
    const std::int64_t length = std::int64_t(m_generation.ids.size());
    if (m_cache.length() == length || length > m_model->config().maxTokens())
        return Ok{};
    return run({m_generation.ids.back()}, cancel);
}

Result<GenerationStep> Generator::step(std::optional<std::int32_t> forced, const std::atomic<bool> *cancel)
{
    Generation &g = m_generation;
    if (g.stoppedAtEos)
        return Error{"generate: the generation stopped at an end-of-sequence token", ErrorKind::InvalidInput};
    if (std::int64_t(g.steps.size()) >= m_settings.maxNewTokens)
        return Error{"generate: the generation has its " + std::to_string(m_settings.maxNewTokens) +
                         " new tokens (max-new-tokens)",
                     ErrorKind::InvalidInput};
    if (std::int64_t(g.ids.size()) >= m_model->config().maxTokens())
        return Error{"generate: " + std::to_string(g.ids.size()) + " tokens; this model takes at most " +
                         std::to_string(m_model->config().maxTokens()) + " (its position embeddings)",
                     ErrorKind::InvalidInput};
    if (forced && (*forced < 0 || *forced >= m_model->config().vocabSize))
        return Error{"generate: token id " + std::to_string(*forced) + " is not in the vocabulary",
                     ErrorKind::InvalidInput};
    if (Status s = settle(cancel); !s)
        return s.error();
    if (m_options.keepHistory) {
        m_stepLogits.push_back(m_logits);
        m_stepRandom.push_back(m_rng);
    }
    const VectorF p = tokenProbabilities(m_logits);
    const VectorF sampled = samplingProbabilities(m_logits, m_settings);
    GenerationStep chosen;
    chosen.id = chooseToken(m_logits, m_settings, m_rng);
    if (forced) {
        chosen.id = *forced;
        chosen.forced = true;
    }
    chosen.token = spelling(chosen.id);
    chosen.p = p(chosen.id);
    chosen.sampled = sampled(chosen.id);
    for (const std::int32_t id : topByValue(p, 10))
        chosen.candidates.push_back({id, spelling(id), p(id), sampled(id)});
    g.ids.push_back(chosen.id);
    g.tokens.push_back(chosen.token);
    g.steps.push_back(chosen);
    g.stoppedAtEos =
        std::find(m_settings.eosIds.begin(), m_settings.eosIds.end(), chosen.id) != m_settings.eosIds.end();
    return chosen;
}

Status Generator::rewind(std::size_t index)
{
    Generation &g = m_generation;
    if (index > g.steps.size())
        return Error{"generate: there is no step " + std::to_string(index + 1), ErrorKind::InvalidInput};
    if (index == g.steps.size())
        return Ok{};
    if (!m_options.keepHistory)
        return Error{"generate: this generation keeps no history to go back to", ErrorKind::Unsupported};
    const std::int64_t length = g.promptLength + std::int64_t(index);
    m_logits = m_stepLogits[index];
    m_rng = m_stepRandom[index];
    m_stepLogits.resize(index);
    m_stepRandom.resize(index);
    g.steps.resize(index);
    g.ids.resize(std::size_t(length));
    g.tokens.resize(std::size_t(length));
    g.stoppedAtEos = false;
    m_cache.truncate(length);
    for (MatrixF &map : m_maps)
        map.conservativeResize(std::min<Eigen::Index>(map.rows(), length), std::min<Eigen::Index>(map.cols(), length));
    return Ok{};
}

Result<Generation> generate(const TransformerModel &model, const Encoding &prompt, const GenerationSettings &settings,
                            const std::atomic<bool> *cancel, const std::function<void(const GenerationStep &)> &onStep)
{
    auto generator = Generator::start(model, prompt, settings, {}, cancel);
    if (!generator)
        return generator.error();
    while (!generator->finished()) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return Error{"step " + std::to_string(generator->generation().steps.size() + 1) +
                             ": generation was cancelled",
                         ErrorKind::Cancelled};
        auto step = generator->step(std::nullopt, cancel);
        if (!step)
            return step.error();
        if (onStep)
            onStep(*step);
    }
    return generator->generation();
}

namespace {

// eos_token_id of one JSON file: absent or null gives nothing.
Result<std::optional<std::vector<std::int32_t>>> eosOf(const std::string &modelDir, const std::string &name)
{
    std::string shown;
    auto document = readFolderJson(modelDir, name, shown);
    if (!document)
        return document.error();
    if (!*document)
        return std::optional<std::vector<std::int32_t>>();
    const auto found = (*document)->find("eos_token_id");
    if (found == (*document)->end() || found->is_null())
        return std::optional<std::vector<std::int32_t>>();
    std::vector<std::int32_t> ids;
    const auto add = [&](const nlohmann::ordered_json &v) {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > INT32_MAX)
            return false;
        ids.push_back(v.get<std::int32_t>());
        return true;
    };
    bool ok = true;
    if (found->is_array()) {
        for (const auto &v : *found)
            ok = ok && add(v);
    } else {
        ok = add(*found);
    }
    if (!ok)
        return Error{shown + ": eos_token_id: expected an id or a list of ids, found " +
                     printableText(found->dump(), 40)};
    return std::optional<std::vector<std::int32_t>>(std::move(ids));
}

} // namespace

Result<std::vector<std::int32_t>> readEosIds(const std::string &modelDir)
{
    for (const char *name : {"generation_config.json", "config.json"}) {
        auto ids = eosOf(modelDir, name);
        if (!ids)
            return ids.error();
        if (*ids)
            return std::move(**ids);
    }
    return std::vector<std::int32_t>();
}

Result<GenerationSettings> readGenerationDefaults(const std::string &modelDir)
{
    GenerationSettings settings;
    auto eos = readEosIds(modelDir);
    if (!eos)
        return eos.error();
    settings.eosIds = std::move(*eos);
    std::string shown;
    auto document = readFolderJson(modelDir, "generation_config.json", shown);
    if (!document)
        return document.error();
    if (!*document)
        return settings;
    const nlohmann::ordered_json &config = **document;
    const auto wrong = [&](const char *field, const char *expected) {
        return Error{shown + ": " + field + ": expected " + expected + ", found " +
                     printableText(config.at(field).dump(), 40)};
    };
    const auto present = [&](const char *field) { return config.contains(field) && !config.at(field).is_null(); };
    bool sample = false;
    if (present("do_sample")) {
        if (!config.at("do_sample").is_boolean())
            return wrong("do_sample", "true or false");
        sample = config.at("do_sample").get<bool>();
    }
    double temperature = 1.0, topP = 1.0;
    std::int64_t topK = 50;
    if (present("temperature")) {
        if (!config.at("temperature").is_number() || !(config.at("temperature").get<double>() >= 0))
            return wrong("temperature", "a number >= 0");
        temperature = config.at("temperature").get<double>();
    }
    if (present("top_k")) {
        if (!config.at("top_k").is_number_integer() || config.at("top_k").get<std::int64_t>() < 0)
            return wrong("top_k", "a whole number >= 0");
        topK = config.at("top_k").get<std::int64_t>();
    }
    if (present("top_p")) {
        const double v = config.at("top_p").is_number() ? config.at("top_p").get<double>() : -1;
        if (!(v > 0 && v <= 1))
            return wrong("top_p", "a number in (0, 1]");
        topP = v;
    }
    if (present("max_new_tokens")) {
        if (!config.at("max_new_tokens").is_number_integer() || config.at("max_new_tokens").get<std::int64_t>() < 1)
            return wrong("max_new_tokens", "a whole number >= 1");
        settings.maxNewTokens = config.at("max_new_tokens").get<std::int64_t>();
    }
    // transformers samples only with do_sample; a temperature of 0 there means greedy as well.
    settings.temperature = sample ? temperature : 0.0;
    settings.topK = topK;
    settings.topP = topP;
    return settings;
}

std::string generationTokensJson(const Generation &g)
{
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const GenerationStep &step : g.steps) {
        nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
        for (const Candidate &c : step.candidates)
            candidates.push_back({{"id", c.id}, {"token", c.token}, {"p", c.p}});
        nlohmann::ordered_json entry = {{"id", step.id}, {"token", step.token}, {"p", step.p}};
        if (step.forced)
            entry["forced"] = true;
        entry["candidates"] = std::move(candidates);
        steps.push_back(std::move(entry));
    }
    nlohmann::ordered_json tokens = nlohmann::ordered_json::object();
    tokens["ids"] = g.ids;
    tokens["tokens"] = g.tokens;
    tokens["promptLength"] = g.promptLength;
    tokens["steps"] = std::move(steps);
    // Tokens are vocabulary keys, valid UTF-8 already; replace guards the dump all the same.
    return tokens.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

} // namespace attnscope
