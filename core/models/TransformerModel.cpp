#include "core/models/TransformerModel.h"

#include "core/attention/HeadLayout.h"
#include "core/attention/Validation.h"
#include "core/formats/Safetensors.h"
#include "core/io/FolderConfinement.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/models/ModelLoaders.h"

#include <cmath>
#include <filesystem>
#include <system_error>

namespace attnscope {

namespace {

// transformers' LayerNorm: biased variance over the row, in float32 storage; the row's mean
// and variance are accumulated in double so long rows lose nothing.
MatrixF layerNorm(const MatrixF &x, const LayerNormWeights &w, double eps)
{
    MatrixF out(x.rows(), x.cols());
    const double n = double(x.cols());
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const auto row = x.row(r);
        double mean = 0;
        for (Eigen::Index c = 0; c < x.cols(); ++c)
            mean += row(c);
        mean /= n;
        double var = 0;
        for (Eigen::Index c = 0; c < x.cols(); ++c)
            var += (row(c) - mean) * (row(c) - mean);
        const float inv = float(1.0 / std::sqrt(var / n + eps)), m = float(mean);
        out.row(r) = ((row.array() - m) * inv * w.weight.array() + w.bias.array()).matrix();
    }
    return out;
}

void activate(MatrixF &x, Activation activation)
{
    if (activation == Activation::GeluTanh) {
        // gelu_new (NewGELUActivation).
        const float c = float(std::sqrt(2.0 / M_PI));
        auto a = x.array();
        a = 0.5f * a * (1.0f + (c * (a + 0.044715f * a.cube())).tanh());
        return;
    }
    // nn.functional.gelu (erf).
    float *v = x.data();
    for (Eigen::Index i = 0; i < x.size(); ++i)
        v[i] = 0.5f * v[i] * (1.0f + std::erf(v[i] * float(M_SQRT1_2)));
}

// x·W + b, then the activation when given.
MatrixF dense(const MatrixF &x, const MatrixF &w, const VectorF &b)
{
    MatrixF y(x.rows(), w.cols());
    y.noalias() = x * w;
    y.rowwise() += b;
    return y;
}

Status checkShape(const char *what, const MatrixF &m, std::int64_t rows, std::int64_t cols)
{
    if (m.rows() != rows || m.cols() != cols)
        return Error{std::string(what) + ": expected " + shapeString(rows, cols) + ", found " + shapeOf(m)};
    return Ok{};
}

Status checkSize(const char *what, const std::optional<VectorF> &v, std::int64_t size)
{
    if (!v || v->size() != size)
        return Error{std::string(what) + ": expected " + std::to_string(size) + " values, found " +
                     std::to_string(v ? v->size() : 0)};
    return Ok{};
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

double layerScale(const ModelConfig &c, int layer)
{
    double scale = c.type == ModelType::Bert || c.scaleAttnWeights ? 1.0 / std::sqrt(double(c.headDim())) : 1.0;
    if (c.type == ModelType::Gpt2 && c.scaleByInverseLayerIdx)
        scale /= double(layer + 1);
    return scale;
}

} // namespace

Status checkWeightShapes(const ModelConfig &c, const TransformerWeights &w)
{
    const std::int64_t d = c.width, inner = c.intermediate;
    for (Status s : {checkShape("token embedding", w.tokenEmbedding, c.vocabSize, d),
                     checkShape("position embedding", w.positionEmbedding, c.positions, d)})
        if (!s)
            return s;
    if (c.type == ModelType::Bert && w.tokenType0.size() != d)
        return Error{"token type embedding: expected " + std::to_string(d) + " values"};
    if (w.finalNorm.weight.size() != d || w.finalNorm.bias.size() != d)
        return Error{"final layer norm: expected " + std::to_string(d) + " values"};
    if (std::int64_t(w.layers.size()) != c.layers)
        return Error{"layers: expected " + std::to_string(c.layers) + ", found " + std::to_string(w.layers.size())};
    for (const TransformerLayer &l : w.layers) {
        const AttentionWeights &a = l.attention;
        for (Status s : {checkShape("attention q", a.q, d, d), checkShape("attention k", a.k, d, d),
                         checkShape("attention v", a.v, d, d), checkShape("attention o", a.o.value_or(MatrixF()), d, d),
                         checkSize("attention q bias", a.qBias, d), checkSize("attention k bias", a.kBias, d),
                         checkSize("attention v bias", a.vBias, d), checkSize("attention o bias", a.oBias, d),
                         checkShape("mlp up", l.up, d, inner), checkShape("mlp down", l.down, inner, d),
                         checkSize("mlp up bias", l.upBias, inner), checkSize("mlp down bias", l.downBias, d)})
            if (!s)
                return s;
        for (const LayerNormWeights *n : {&l.norm1, &l.norm2})
            if (n->weight.size() != d || n->bias.size() != d)
                return Error{"layer norm: expected " + std::to_string(d) + " values"};
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
    const auto inside = modelFolderFile(modelDir, "model.safetensors");
    if (!inside)
        return inside.error();
    const std::string &path = *inside;
    const std::string shown = printableText(path, 200);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Error{shown + ": no such file (a model folder as transformers saves it holds model.safetensors)",
                     ErrorKind::Io};
    if (Status s = checkFitsInMemory(saturatingMul(4, modelWeightCount(*config)), "the model's weights in float32"); !s)
        return Error{shown + ": " + s.message(), s.kind()};
    auto file = SafetensorsFile::open(path);
    if (!file)
        return Error{printableText(file.message(), 400), file.kind()};
    const bool gpt2 = config->type == ModelType::Gpt2;
    const ModelTensors tensors(*file, gpt2 ? "transformer." : "bert.", shown);
    auto weights = gpt2 ? loadGpt2Weights(tensors, *config) : loadBertWeights(tensors, *config);
    // The conversion read the mapped weights: a checkpoint rewritten meanwhile gave zeros or a
    // mix of two files, whatever the shapes said.
    if (Status s = file->checkUnchanged(); !s)
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
    if (std::int64_t(e.ids.size()) > m_config.positions)
        return Error{"the text gives " + std::to_string(e.ids.size()) + " tokens; this model takes at most " +
                     std::to_string(m_config.positions) + " (its position embeddings)"};
    return input(std::move(e.ids));
}

Result<Encoding> TransformerModel::input(std::vector<std::int32_t> ids) const
{
    if (ids.empty())
        return Error{"ids: none given; a model needs at least one"};
    if (std::int64_t(ids.size()) > m_config.positions)
        return Error{"ids: " + std::to_string(ids.size()) + " given; this model takes at most " +
                     std::to_string(m_config.positions) + " (its position embeddings)"};
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
    AttentionProblem p;
    p.spec.mode = AttentionMode::Self;
    p.spec.heads = m_config.heads;
    p.spec.headDimQK = p.spec.headDimV = m_config.headDim();
    setScale(p.spec, layerScale(m_config, layer));
    p.spec.maskFill = MaskFill::NegInf;
    p.mask.causal = m_config.type == ModelType::Gpt2;
    p.xq = std::move(x);
    p.weights = m_weights->layers[std::size_t(layer)].attention;
    return p;
}

Result<std::shared_ptr<const ModelRun>> TransformerModel::forward(const Encoding &encoding, AttentionBackend &backend,
                                                                  const std::atomic<bool> *cancel) const
{
    const auto cancelled = [cancel](int layer) -> std::optional<Error> {
        if (!cancel || !cancel->load(std::memory_order_relaxed))
            return std::nullopt;
        return Error{"layer " + std::to_string(layer) + ": the forward pass was cancelled", ErrorKind::Cancelled};
    };
    auto checked = input(encoding.ids);
    if (!checked)
        return checked.error();
    const ModelConfig &c = m_config;
    const std::int64_t t = std::int64_t(encoding.ids.size()), d = c.width, L = c.layers, h = c.heads;
    // Kept: attentions, hidden states and attention inputs; per layer: one trace and the MLP.
    std::int64_t bytes = saturatingMul(4, saturatingMul(saturatingMul(L, h), saturatingMul(t, t)));
    bytes = saturatingAdd(bytes, saturatingMul(4 * (2 * L + 1), saturatingMul(t, d)));
    bytes = saturatingAdd(bytes, traceBytes(h, t, t, c.headDim(), c.headDim(), d));
    bytes = saturatingAdd(bytes, saturatingMul(8, saturatingMul(t, c.intermediate + 4 * d)));
    if (Status s = checkFitsInMemory(bytes, "its attentions and hidden states"); !s)
        return s.error();

    auto run = std::make_shared<ModelRun>();
    run->type = c.type;
    run->ids = encoding.ids;
    run->tokens = encoding.tokens.size() == encoding.ids.size() ? encoding.tokens : checked->tokens;
    run->layers = c.layers;
    run->heads = c.heads;
    run->length = t;
    run->weights = m_weights;
    run->attentions.resize(std::size_t(L * h * t * t));
    const TransformerWeights &w = *m_weights;

    MatrixF x(t, d);
    for (std::int64_t i = 0; i < t; ++i)
        x.row(i) = w.tokenEmbedding.row(encoding.ids[std::size_t(i)]) + w.positionEmbedding.row(i);
    if (c.type == ModelType::Bert) {
        x.rowwise() += w.tokenType0;
        x = layerNorm(x, w.finalNorm, c.layerNormEps);
    }
    run->hiddenStates.push_back(x);
    for (int l = 0; l < c.layers; ++l) {
        if (auto stop = cancelled(l))
            return *stop;
        const TransformerLayer &layer = w.layers[std::size_t(l)];
        const bool gpt2 = c.type == ModelType::Gpt2;
        AttentionProblem problem = layerProblem(l, gpt2 ? layerNorm(x, layer.norm1, c.layerNormEps) : x);
        run->scales.push_back(problem.spec.scale());
        auto trace = backend.compute(problem);
        if (!trace)
            return Error{"layer " + std::to_string(l) + ": " + trace.message(), trace.kind()};
        for (int head = 0; head < c.heads; ++head)
            std::copy_n(trace->weights[std::size_t(head)].data(), t * t,
                        run->attentions.begin() + (std::int64_t(l) * h + head) * t * t);
        run->attentionInputs.push_back(std::move(problem.xq));
        if (auto stop = cancelled(l)) // the attention was the long part: the MLP need not follow
            return *stop;
        if (gpt2) {
            x += trace->output;
            MatrixF up = dense(layerNorm(x, layer.norm2, c.layerNormEps), layer.up, layer.upBias);
            trace = Error{}; // the trace's memory goes before the MLP's
            activate(up, c.activation);
            x.noalias() += up * layer.down;
            x.rowwise() += layer.downBias;
        } else {
            const MatrixF attended = layerNorm(trace->output + x, layer.norm1, c.layerNormEps);
            trace = Error{};
            MatrixF up = dense(attended, layer.up, layer.upBias);
            activate(up, c.activation);
            MatrixF down = dense(up, layer.down, layer.downBias);
            x = layerNorm(down + attended, layer.norm2, c.layerNormEps);
        }
        if (!x.allFinite())
            return Error{"layer " + std::to_string(l) + ": the hidden state overflowed to Inf or NaN",
                         ErrorKind::NonFinite};
        run->hiddenStates.push_back(gpt2 && l + 1 == c.layers ? layerNorm(x, w.finalNorm, c.layerNormEps) : x);
    }
    return std::shared_ptr<const ModelRun>(std::move(run));
}

Eigen::Map<const MatrixF> ModelRun::attention(int layer, int head) const
{
    return Eigen::Map<const MatrixF>(attentions.data() + (std::int64_t(layer) * heads + head) * length * length, length,
                                     length);
}

AttentionProblem layerProblem(const ModelRun &run, int layer)
{
    AttentionProblem p;
    p.spec.mode = AttentionMode::Self;
    p.spec.heads = run.heads;
    p.spec.headDimQK = p.spec.headDimV = int(run.weights->layers[std::size_t(layer)].attention.q.cols() / run.heads);
    setScale(p.spec, run.scales[std::size_t(layer)]);
    p.spec.maskFill = MaskFill::NegInf;
    p.mask.causal = run.type == ModelType::Gpt2;
    p.xq = run.attentionInputs[std::size_t(layer)];
    p.weights = run.weights->layers[std::size_t(layer)].attention;
    return p;
}

AttentionProblem headProblem(const ModelRun &run, int layer, int head)
{
    // The head's context is what the editor shows: W_O mixes every head and is dropped.
    return singleHeadProblem(layerProblem(run, layer), head);
}

Result<AttentionSet> attentionSetFromRun(std::shared_ptr<const ModelRun> run)
{
    const float *data = run->attentions.data();
    auto set = AttentionSet::fromContiguous(run, data, AttentionStorage::Float32, 1, run->layers, run->heads,
                                            run->length, run->length);
    if (!set)
        return set.error();
    if (Status s = set->setTokens(run->tokens, run->tokens); !s)
        return s.error();
    for (int l = 0; l < run->layers; ++l)
        set->layerFacts.push_back({run->heads, run->heads, 0, run->scales[std::size_t(l)]});
    return set;
}

} // namespace attnscope
