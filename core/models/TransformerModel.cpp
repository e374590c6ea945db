#include "core/models/TransformerModel.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/HeadLayout.h"
#include "core/attention/Validation.h"
#include "core/formats/Safetensors.h"
#include "core/io/FolderConfinement.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/models/ForwardEngine.h"
#include "core/models/ModelLoaders.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include <sys/mman.h>
#include <unistd.h>

namespace attnscope {

MatrixF normalizeRows(const MatrixF &x, const LayerNormWeights &w, double eps)
{
    MatrixF out(x.rows(), x.cols());
    const double n = double(x.cols());
    const bool rms = w.bias.size() == 0;
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const auto row = x.row(r);
        double mean = 0;
        if (!rms) {
            for (Eigen::Index c = 0; c < x.cols(); ++c)
                mean += row(c);
            mean /= n;
        }
        double var = 0;
        for (Eigen::Index c = 0; c < x.cols(); ++c)
            var += (row(c) - mean) * (row(c) - mean);
        const float inv = float(1.0 / std::sqrt(var / n + eps)), m = float(mean);
        if (rms)
            out.row(r) = (row.array() * inv * w.weight.array()).matrix();
        else
            out.row(r) = ((row.array() - m) * inv * w.weight.array() + w.bias.array()).matrix();
    }
    return out;
}

void activate(MatrixF &x, Activation activation)
{
    float *v = x.data();
    const Eigen::Index n = x.size();
    constexpr Eigen::Index kRange = 1 << 14; // ranges over the caller's threads
    if (activation == Activation::GeluTanh) {
        // gelu_new (NewGELUActivation), gelu_pytorch_tanh.
        const float c = float(std::sqrt(2.0 / M_PI));
#pragma omp parallel for schedule(static) if (n > (1 << 16))
        for (Eigen::Index from = 0; from < n; from += kRange) {
            auto a = Eigen::Map<Eigen::ArrayXf>(v + from, std::min(kRange, n - from));
            a = 0.5f * a * (1.0f + (c * (a + 0.044715f * a.cube())).tanh());
        }
        return;
    }
    if (activation == Activation::Silu) {
#pragma omp parallel for schedule(static) if (n > (1 << 16))
        for (Eigen::Index from = 0; from < n; from += kRange)
            siluInPlace(v + from, std::min(kRange, n - from));
        return;
    }
    if (activation == Activation::Relu) {
        x = x.cwiseMax(0.0f);
        return;
    }
    // nn.functional.gelu (erf).
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (Eigen::Index i = 0; i < n; ++i)
        v[i] = 0.5f * v[i] * (1.0f + std::erf(v[i] * float(M_SQRT1_2)));
}

namespace {

// Maps the whole pages of [p, p + bytes) for writing in one call (MADV_POPULATE_WRITE, Linux
// 5.14): a first write page by page costs a fault each, about a fifth of a forward at T = 1024
// where the run's attentions are 1.4 GB. Advice only: where the kernel has no such call the
// writes fault as usual.
void prefault(void *p, std::size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    static const std::uintptr_t page = std::uintptr_t(sysconf(_SC_PAGESIZE));
    const std::uintptr_t begin = std::uintptr_t(p), end = begin + bytes;
    const std::uintptr_t from = (begin + page - 1) / page * page, to = end / page * page;
    if (to > from)
        madvise(reinterpret_cast<void *>(from), to - from, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

// x·W + b (b may be empty: no bias).
MatrixF dense(const MatrixF &x, const WeightMatrix &w, const VectorF &b)
{
    MatrixF y = w.product(x);
    if (b.size() > 0)
        y.rowwise() += b;
    return y;
}

} // namespace

MatrixF feedForward(const MatrixF &x, const TransformerLayer &layer, Activation activation)
{
    MatrixF up = dense(x, layer.up, layer.upBias);
    if (layer.gate) {
        MatrixF gate = dense(x, *layer.gate, layer.gateBias);
        activate(gate, activation);
        up.array() *= gate.array();
    } else {
        activate(up, activation);
    }
    return dense(up, layer.down, layer.downBias);
}

namespace {

Status checkShape(const char *what, const MatrixF &m, std::int64_t rows, std::int64_t cols)
{
    if (m.rows() != rows || m.cols() != cols)
        return Error{std::string(what) + ": expected " + shapeString(rows, cols) + ", found " + shapeOf(m)};
    return Ok{};
}

Status checkShape(const char *what, const WeightMatrix &m, std::int64_t rows, std::int64_t cols)
{
    if (m.rows() != rows || m.cols() != cols)
        return Error{std::string(what) + ": expected " + shapeString(rows, cols) + ", found " +
                     shapeString(m.rows(), m.cols())};
    return Ok{};
}

// A bias or norm the config says is there (`present`) has `size` values; one it says is not
// there is absent.
Status checkOptional(const char *what, std::int64_t given, bool present, std::int64_t size)
{
    if (present ? given != size : given != 0)
        return Error{std::string(what) + ": expected " + std::to_string(present ? size : 0) + " values, found " +
                     std::to_string(given)};
    return Ok{};
}

std::int64_t sizeOf(const std::optional<VectorF> &v)
{
    return v ? v->size() : 0;
}

// The scale as a project names it: inv_sqrt_dk where it is that (every BERT, GPT-2 by default),
// so a head opened in the editor reads like the tutorials' examples.
void setScale(AttentionSpec &spec, double scale)
{
    spec.scaleMode = scale == 1.0 / std::sqrt(double(spec.headDimQK)) ? ScaleMode::InvSqrtDk
                     : scale == 1.0                                   ? ScaleMode::None
                                                                      : ScaleMode::Custom;
    spec.scaleValue = scale;
}

// Layer l's attention as forward() computes it: every head, W_O, the scale, RoPE, the q/k norms,
// the soft-cap and the mask (causal, sliding window) on input x; without the weights where w is
// null.
AttentionProblem formLayerProblem(const ModelConfig &c, const TransformerWeights *w, int layer, MatrixF x)
{
    AttentionProblem p;
    p.spec.mode = AttentionMode::Self;
    p.spec.heads = c.heads;
    p.spec.kvHeads = c.keyValueHeads() == c.heads ? 0 : c.keyValueHeads();
    p.spec.headDimQK = p.spec.headDimV = c.headDim();
    setScale(p.spec, c.attentionScale(layer));
    p.spec.maskFill = MaskFill::NegInf;
    p.spec.rope = c.rope(layer, x.rows());
    p.spec.softcap = c.attnSoftcap;
    p.spec.qkNormEps = c.layerNormEps;
    p.mask.causal = c.recipe().causal;
    p.mask.window = std::size_t(layer) < c.windows.size() ? c.windows[std::size_t(layer)] : 0;
    p.xq = std::move(x);
    if (w)
        p.weights = w->layers[std::size_t(layer)].attention;
    return p;
}

} // namespace

Status checkWeightShapes(const ModelConfig &c, const TransformerWeights &w)
{
    const BlockRecipe &r = c.recipe();
    const std::int64_t d = c.width, inner = c.intermediate, hd = c.headDim();
    const std::int64_t q = hd * c.heads, kv = hd * c.keyValueHeads();
    const bool layerNorm = r.norm == NormKind::LayerNorm;
    if (Status s = checkShape("token embedding", w.tokenEmbedding, c.vocabSize, d); !s)
        return s;
    if (r.learnedPositions)
        if (Status s = checkShape("position embedding", w.positionEmbedding, c.positions, d); !s)
            return s;
    if (w.lmHead)
        if (Status s = checkShape("lm head", *w.lmHead, c.vocabSize, d); !s)
            return s;
    for (Status s : {checkOptional("token type embedding", w.tokenType0.size(), r.tokenTypes, d),
                     checkOptional("embedding norm", w.embeddingNorm.weight.size(), r.embeddingNorm, d),
                     checkOptional("embedding norm bias", w.embeddingNorm.bias.size(), r.embeddingNorm && layerNorm, d),
                     checkOptional("final norm", w.finalNorm.weight.size(), r.finalNorm, d),
                     checkOptional("final norm bias", w.finalNorm.bias.size(), r.finalNorm && layerNorm, d)})
        if (!s)
            return s;
    if (std::int64_t(w.layers.size()) != c.layers)
        return Error{"layers: expected " + std::to_string(c.layers) + ", found " + std::to_string(w.layers.size())};
    const bool sandwich = r.placement == NormPlacement::Sandwich;
    for (const TransformerLayer &l : w.layers) {
        const AttentionWeights &a = l.attention;
        for (Status s :
             {checkShape("attention q", a.q, d, q),
              checkShape("attention k", a.k, d, kv),
              checkShape("attention v", a.v, d, kv),
              checkShape("attention o", a.o.value_or(MatrixF()), q, d),
              checkOptional("attention q bias", sizeOf(a.qBias), c.qkvBias, q),
              checkOptional("attention k bias", sizeOf(a.kBias), c.qkvBias, kv),
              checkOptional("attention v bias", sizeOf(a.vBias), c.qkvBias, kv),
              checkOptional("attention o bias", sizeOf(a.oBias), c.oBias, d),
              checkOptional("q norm", sizeOf(a.qNorm), r.qkNorm, hd),
              checkOptional("k norm", sizeOf(a.kNorm), r.qkNorm, hd),
              checkShape("mlp up", l.up, d, inner),
              checkShape("mlp down", l.down, inner, d),
              checkShape("mlp gate", l.gate.value_or(WeightMatrix()), r.gatedMlp ? d : 0, r.gatedMlp ? inner : 0),
              checkOptional("mlp up bias", l.upBias.size(), c.mlpBias, inner),
              checkOptional("mlp gate bias", l.gateBias.size(), c.mlpBias && r.gatedMlp, inner),
              checkOptional("mlp down bias", l.downBias.size(), c.mlpBias, d),
              checkOptional("norm 1", l.norm1.weight.size(), true, d),
              checkOptional("norm 1 bias", l.norm1.bias.size(), layerNorm, d),
              checkOptional("norm 2", l.norm2.weight.size(), true, d),
              checkOptional("norm 2 bias", l.norm2.bias.size(), layerNorm, d),
              checkOptional("post-attention norm", l.postAttentionNorm.weight.size(), sandwich, d),
              checkOptional("post-MLP norm", l.postMlpNorm.weight.size(), sandwich, d)})
            if (!s)
                return s;
    }
    return Ok{};
}

Result<TransformerModel> TransformerModel::load(const std::string &modelDir)
{
    auto config = readModelConfig(modelDir);
    if (!config)
        return config.error();
    auto tokenizer = loadTokenizer(modelDir);
    if (!tokenizer)
        return tokenizer.error();
    auto tensors = ModelTensors::open(modelDir, config->architecture().names.prefixes);
    if (!tensors)
        return tensors.error();
    if (Status s = checkFitsInMemory(saturatingMul(4, modelWeightCount(*config)), "the model's weights in float32"); !s)
        return Error{printableText(modelDir, 200) + ": " + s.message(), s.kind()};
    auto shared = std::make_shared<const ModelTensors>(std::move(*tensors));
    auto weights = loadWeights(shared, *config);
    // The conversion read the mapped weights: a checkpoint rewritten meanwhile gave zeros or a
    // mix of two files, whatever the shapes said.
    if (Status s = shared->checkUnchanged(); !s)
        return s.error();
    if (!weights)
        return weights.error();
    return fromWeights(*config, std::move(*weights), std::move(*tokenizer));
}

Result<TransformerModel> TransformerModel::fromWeights(const ModelConfig &config, TransformerWeights weights,
                                                       std::optional<Tokenizer> tokenizer)
{
    if (Status s = checkWeightShapes(config, weights); !s)
        return s.error();
    TransformerModel model;
    model.m_config = config;
    model.m_weights = std::make_shared<const TransformerWeights>(std::move(weights));
    model.m_tokenizer = std::move(tokenizer);
    return model;
}

Result<Encoding> TransformerModel::encode(std::string_view text) const
{
    if (!m_tokenizer)
        return Error{"this model has no tokenizer; give ids instead of text"};
    Encoding e = m_tokenizer->encode(text);
    if (e.ids.empty())
        return Error{"the text gives no tokens; a model needs at least one"};
    if (std::int64_t(e.ids.size()) > m_config.maxTokens())
        return Error{"the text gives " + std::to_string(e.ids.size()) + " tokens; this model takes at most " +
                     std::to_string(m_config.maxTokens()) + " (its position embeddings)"};
    auto checked = input(std::move(e.ids));
    if (checked)
        checked->words = std::move(e.words); // the tokenizer's own word boundaries
    return checked;
}

Result<Encoding> TransformerModel::input(std::vector<std::int32_t> ids) const
{
    if (ids.empty())
        return Error{"ids: none given; a model needs at least one"};
    if (std::int64_t(ids.size()) > m_config.maxTokens())
        return Error{"ids: " + std::to_string(ids.size()) + " given; this model takes at most " +
                     std::to_string(m_config.maxTokens()) + " (its position embeddings)"};
    Encoding e;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= m_config.vocabSize)
            return Error{"ids[" + std::to_string(i) + "]: " + std::to_string(ids[i]) +
                         " is not in the vocabulary (ids from 0 to " + std::to_string(m_config.vocabSize - 1) + ")"};
        std::optional<std::string> token = m_tokenizer ? m_tokenizer->token(ids[i]) : std::nullopt;
        e.tokens.push_back(token ? *token : "<id " + std::to_string(ids[i]) + ">");
    }
    e.ids = std::move(ids);
    return e;
}

AttentionProblem TransformerModel::layerProblem(int layer, MatrixF x) const
{
    return formLayerProblem(m_config, m_weights.get(), layer, std::move(x));
}

AttentionProblem TransformerModel::layerShape(int layer, std::int64_t tokens) const
{
    return formLayerProblem(m_config, nullptr, layer, MatrixF(tokens, m_config.width));
}

Result<MatrixF> TransformerModel::logits(const MatrixF &lastHidden) const
{
    if (m_config.type == ModelType::Bert)
        return Error{"logits: this BERT model has no LM head here", ErrorKind::Unsupported};
    const WeightMatrix &head = m_weights->lmHead ? *m_weights->lmHead : m_weights->tokenEmbedding;
    if (lastHidden.cols() != head.cols())
        return Error{"logits: expected rows of " + std::to_string(head.cols()) + " values, found " +
                     std::to_string(lastHidden.cols())};
    MatrixF out = head.productTransposed(lastHidden);
    if (m_weights->source)
        if (Status s = m_weights->source->checkUnchanged(); !s)
            return s.error();
    if (m_config.finalSoftcap) {
        const float cap = float(*m_config.finalSoftcap);
        out = (out.array() / cap).tanh() * cap;
    }
    return out;
}

MatrixF TransformerModel::embed(const std::vector<std::int32_t> &ids, std::int64_t first) const
{
    const TransformerWeights &w = *m_weights;
    const BlockRecipe &recipe = m_config.recipe();
    const std::int64_t t = std::int64_t(ids.size()), d = m_config.width;
    MatrixF x(t, d);
    for (std::int64_t i = 0; i < t; ++i)
        x.row(i) = w.tokenEmbedding.row(ids[std::size_t(i)]);
    if (recipe.learnedPositions)
        x += w.positionEmbedding.middleRows(first, t);
    if (recipe.tokenTypes)
        x.rowwise() += w.tokenType0;
    if (recipe.embeddingNorm)
        x = normalizeRows(x, w.embeddingNorm, m_config.layerNormEps);
    if (recipe.embeddingScale) // Gemma: √d rounded to the hidden dtype first, as transformers does
        x *= float(std::sqrt(double(d)));
    return x;
}

MatrixF TransformerModel::attentionInput(int layer, const MatrixF &x) const
{
    if (m_config.recipe().placement == NormPlacement::Post)
        return x;
    return normalizeRows(x, m_weights->layers[std::size_t(layer)].norm1, m_config.layerNormEps);
}

MatrixF TransformerModel::finishLayer(int l, MatrixF x, MatrixF attended) const
{
    const TransformerLayer &layer = m_weights->layers[std::size_t(l)];
    const double eps = m_config.layerNormEps;
    const bool post = m_config.recipe().placement == NormPlacement::Post;
    if (post) {
        x = normalizeRows(attended + x, layer.norm1, eps);
    } else {
        if (layer.postAttentionNorm.isSet())
            attended = normalizeRows(attended, layer.postAttentionNorm, eps);
        x += attended;
    }
    MatrixF out = feedForward(post ? x : normalizeRows(x, layer.norm2, eps), layer, m_config.activation);
    if (post) {
        x = normalizeRows(out + x, layer.norm2, eps);
    } else {
        if (layer.postMlpNorm.isSet())
            out = normalizeRows(out, layer.postMlpNorm, eps);
        x += out;
    }
    return x;
}

MatrixF TransformerModel::finalHidden(const MatrixF &x) const
{
    if (!m_config.recipe().finalNorm)
        return x;
    return normalizeRows(x, m_weights->finalNorm, m_config.layerNormEps);
}

std::int64_t TransformerModel::forwardBytes(std::int64_t t, const ForwardKeep &keep) const
{
    const ModelConfig &c = m_config;
    const std::int64_t d = c.width, L = c.layers, h = c.heads, hd = c.headDim(), kv = c.keyValueHeads();
    // Kept: hidden states and attention inputs; per layer: the attention's work and the MLP.
    std::int64_t bytes = saturatingMul(4 * (2 * L + 1), saturatingMul(t, d));
    bytes = saturatingAdd(bytes, saturatingMul(12, saturatingMul(t, c.intermediate + 4 * d)));
    bytes = saturatingAdd(bytes, std::int64_t(64) << 20); // a block of mapped weights in float32
    if (keep.maps) {
        bytes = saturatingAdd(bytes, saturatingMul(4, saturatingMul(saturatingMul(L, h), saturatingMul(t, t))));
        bytes = saturatingAdd(bytes, traceBytes(h, t, t, hd, hd, d));
    } else {
        PoolOptions pool;
        pool.bins = std::max<std::int64_t>(keep.poolBins, 1);
        bytes = saturatingAdd(bytes, pooledBytes(h, t, t, h * hd, h * hd, d, pool.bins, 0));
        const std::int64_t n = std::min(pool.bins, t);
        if (keep.poolBins > 0) // the cells and entropies of every layer
            bytes = saturatingAdd(bytes, saturatingMul(4, saturatingMul(L * h, saturatingAdd(n * n, t))));
    }
    if (keep.queriesKeys)
        bytes = saturatingAdd(bytes, saturatingMul(4, saturatingMul(L * t, (h + kv) * hd)));
    return bytes;
}

Result<std::shared_ptr<ModelRun>> TransformerModel::startRun(const Encoding &encoding, const ForwardKeep &keep) const
{
    if (keep.maps && keep.poolBins > 0)
        return Error{"forward: pooled maps are kept instead of whole ones, not with them", ErrorKind::InvalidInput};
    auto checked = input(encoding.ids);
    if (!checked)
        return checked.error();
    const ModelConfig &c = m_config;
    const std::int64_t t = std::int64_t(encoding.ids.size());
    if (Status s = checkFitsInMemory(forwardBytes(t, keep), keep.maps ? "its attentions and hidden states"
                                                                      : "its hidden states and pooled attention");
        !s)
        return s.error();
    auto run = std::make_shared<ModelRun>();
    run->type = c.type;
    run->config = c;
    run->ids = encoding.ids;
    run->tokens = encoding.tokens.size() == encoding.ids.size() ? encoding.tokens : checked->tokens;
    if (encoding.words.size() == encoding.ids.size())
        run->words = encoding.words;
    run->layers = c.layers;
    run->heads = c.heads;
    run->length = t;
    run->weights = m_weights;
    for (int l = 0; l < c.layers; ++l) {
        const AttentionProblem problem = layerShape(l, 0);
        run->scales.push_back(problem.spec.scale());
        run->layerFacts.push_back({c.heads, c.keyValueHeads(), problem.mask.window, problem.spec.scale()});
    }
    return run;
}

Result<std::shared_ptr<const ModelRun>> TransformerModel::forward(const Encoding &encoding, AttentionBackend &backend,
                                                                  const std::atomic<bool> *cancel,
                                                                  const ForwardKeep &keep) const
{
    if (ForwardEngine *engine = backend.forwardEngine(); engine && engine->runs(*this, keep)) {
        auto run = engine->forward(*this, encoding, keep, cancel);
        if (run || !layerLoopMayRetry(run.kind()))
            return run;
    }
    return forwardLayerByLayer(encoding, backend, cancel, keep);
}

Result<std::shared_ptr<const ModelRun>> LayerLoopEngine::forward(const TransformerModel &model, const Encoding &input,
                                                                 const ForwardKeep &keep,
                                                                 const std::atomic<bool> *cancel)
{
    return model.forwardLayerByLayer(input, m_backend, cancel, keep);
}

Result<std::shared_ptr<const ModelRun>> TransformerModel::forwardLayerByLayer(const Encoding &encoding,
                                                                              AttentionBackend &backend,
                                                                              const std::atomic<bool> *cancel,
                                                                              const ForwardKeep &keep) const
{
    const auto cancelled = [cancel](int layer) -> std::optional<Error> {
        if (!cancel || !cancel->load(std::memory_order_relaxed))
            return std::nullopt;
        return Error{"layer " + std::to_string(layer) + ": the forward pass was cancelled", ErrorKind::Cancelled};
    };
    keepFreedMemoryForReuse(); // the MLP's buffers too, whichever backend runs the attention
    auto started = startRun(encoding, keep);
    if (!started)
        return started.error();
    ModelRun *run = started->get();
    const ModelConfig &c = m_config;
    const std::int64_t t = run->length, L = c.layers, h = c.heads;
    if (keep.maps)
        run->attentions.resize(std::size_t(L * h * t * t));
    const TransformerWeights &w = *m_weights;

    MatrixF x = embed(encoding.ids, 0);
    run->hiddenStates.push_back(x);
    for (int l = 0; l < c.layers; ++l) {
        if (auto stop = cancelled(l))
            return *stop;
        AttentionProblem problem = layerProblem(l, attentionInput(l, x));
        problem.keepScores = false; // the run keeps the weights alone
        if (keep.queriesKeys) {
            auto qk = qkLayerOf(problem);
            if (!qk)
                return Error{"layer " + std::to_string(l) + ": " + qk.message(), qk.kind()};
            run->queriesKeys.push_back(std::make_shared<const QkLayer>(std::move(*qk)));
        }
        MatrixF attended;
        if (keep.maps) {
            auto trace = backend.compute(problem);
            if (!trace)
                return Error{"layer " + std::to_string(l) + ": " + trace.message(), trace.kind()};
                // The first write of these pages: the copies run on every thread, each mapping its
                // pages in one call first rather than faulting once per 4 KiB.
#pragma omp parallel for schedule(static) if (t * t * h > (1 << 20))
            for (int head = 0; head < c.heads; ++head) {
                float *to = run->attentions.data() + (std::int64_t(l) * h + head) * t * t;
                prefault(to, std::size_t(t * t) * sizeof(float));
                std::copy_n(trace->weights[std::size_t(head)].data(), t * t, to);
            }
            attended = std::move(trace->output);
            backend.recycle(std::move(*trace)); // the next layer's maps go where these were
        } else {
            PoolOptions pool;
            pool.bins = std::max<std::int64_t>(keep.poolBins, 1);
            pool.mode = keep.poolMode;
            pool.cancel = cancel;
            auto pooled = backend.computePooled(problem, pool);
            if (!pooled)
                return Error{"layer " + std::to_string(l) + ": " + pooled.message(), pooled.kind()};
            attended = std::move(pooled->output);
            if (keep.poolBins > 0) {
                pooled->output = MatrixF();
                run->pooled.push_back(std::move(*pooled));
            }
        }
        run->attentionInputs.push_back(std::move(problem.xq));
        if (auto stop = cancelled(l)) // the attention was the long part: the MLP need not follow
            return *stop;
        x = finishLayer(l, std::move(x), std::move(attended));
        if (!x.allFinite())
            return Error{"layer " + std::to_string(l) + ": the hidden state overflowed to Inf or NaN",
                         ErrorKind::NonFinite};
        const bool last = l + 1 == c.layers;
        run->hiddenStates.push_back(last ? finalHidden(x) : x);
    }
    // The mapped weights were read during the pass: a checkpoint rewritten meanwhile gave zeros.
    if (w.source)
        if (Status s = w.source->checkUnchanged(); !s)
            return s.error();
    return std::shared_ptr<const ModelRun>(std::move(*started));
}

Eigen::Map<const MatrixF> ModelRun::attention(int layer, int head) const
{
    return Eigen::Map<const MatrixF>(attentions.data() + (std::int64_t(layer) * heads + head) * length * length, length,
                                     length);
}

AttentionProblem layerProblem(const ModelRun &run, int layer)
{
    AttentionProblem p =
        formLayerProblem(run.config, run.weights.get(), layer, run.attentionInputs[std::size_t(layer)]);
    setScale(p.spec, run.scales[std::size_t(layer)]);
    return p;
}

AttentionProblem headProblem(const ModelRun &run, int layer, int head)
{
    // The head's context is what the editor shows: W_O mixes every head and is dropped.
    return singleHeadProblem(layerProblem(run, layer), head);
}

namespace {

// A run's queries and keys as the layers of a set (the set keeps the run alive).
class RunQueriesKeys : public QkSource
{
public:
    explicit RunQueriesKeys(std::shared_ptr<const ModelRun> run) : m_run(std::move(run)) {}
    int layers() const override { return int(m_run->queriesKeys.size()); }
    std::int64_t queries() const override { return m_run->length; }
    std::int64_t keys() const override { return m_run->length; }
    QkLayer facts(int layer) const override
    {
        const QkLayer &l = *m_run->queriesKeys[std::size_t(layer)];
        QkLayer f;
        f.heads = l.heads, f.kvHeads = l.kvHeads, f.headDim = l.headDim, f.scale = l.scale;
        f.causal = l.causal, f.window = l.window, f.softcap = l.softcap, f.sinks = l.sinks;
        f.queryPositions = l.queryPositions, f.keyPositions = l.keyPositions;
        return f;
    }
    Result<std::shared_ptr<const QkLayer>> layer(int layer) const override
    {
        return m_run->queriesKeys[std::size_t(layer)];
    }

private:
    std::shared_ptr<const ModelRun> m_run;
};

} // namespace

Result<AttentionSet> attentionSetFromRun(std::shared_ptr<const ModelRun> run)
{
    const bool fromQk = run->attentions.empty();
    if (fromQk && int(run->queriesKeys.size()) != run->layers)
        return Error{"this run kept neither attention maps nor queries and keys", ErrorKind::InvalidInput};
    const float *data = run->attentions.data();
    auto set = fromQk ? AttentionSet::fromQk(std::make_shared<RunQueriesKeys>(run))
                      : AttentionSet::fromContiguous(run, data, AttentionStorage::Float32, 1, run->layers, run->heads,
                                                     run->length, run->length);
    if (!set)
        return set.error();
    if (Status s = set->setTokens(run->tokens, run->tokens); !s)
        return s.error();
    if (!run->words.empty())
        if (Status s = set->setTokenWords(run->words); !s)
            return s.error();
    set->layerFacts = run->layerFacts;
    // A run's positions are 0..T-1 (statistics measure in rows).
    set->queryPositions.clear();
    set->keyPositions.clear();
    return set;
}

} // namespace attnscope
