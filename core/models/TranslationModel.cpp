#include "core/models/TranslationModel.h"

#include "core/attention/HeadLayout.h"
#include "core/attention/Validation.h"
#include "core/io/FolderConfinement.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/models/ForwardEngine.h"
#include "core/models/ModelLoaders.h"

#include <cmath>
#include <filesystem>
#include <limits>

namespace attnscope {

namespace {

// The stack a kind of attention belongs to.
const TranslationConfig::Stack &stackOf(const TranslationConfig &c, TranslationAttention kind)
{
    return kind == TranslationAttention::Encoder ? c.encoder : c.decoder;
}

// One attention of a Marian layer: every head, W_O, the scale head_dim^-1/2 (MarianAttention
// scales q by it), no mask but the decoder's causal one. `memory`: the encoder's output for a
// cross-attention, else nullptr.
AttentionProblem attentionProblem(const TranslationConfig &c, const TranslationConfig::Stack &stack,
                                  const AttentionWeights &weights, MatrixF x, const MatrixF *memory, bool causal)
{
    AttentionProblem p;
    p.spec.mode = memory ? AttentionMode::Cross : AttentionMode::Self;
    p.spec.heads = stack.heads;
    p.spec.headDimQK = p.spec.headDimV = c.headDim(stack);
    p.spec.scaleMode = ScaleMode::InvSqrtDk;
    p.spec.maskFill = MaskFill::NegInf;
    p.mask.causal = causal;
    p.xq = std::move(x);
    if (memory)
        p.xkv = *memory;
    p.weights = weights;
    return p;
}

class Loader
{
public:
    Loader(const ModelTensors &t, const TranslationConfig &c) : m_t(t), m_c(c) {}

    Status norm(const std::string &name, LayerNormWeights &out) const
    {
        ATTNSCOPE_ASSIGN_OR_RETURN(out.weight, m_t.vector({name + ".weight"}, m_c.width));
        ATTNSCOPE_ASSIGN_OR_RETURN(out.bias, m_t.vector({name + ".bias"}, m_c.width));
        return Ok{};
    }

    // nn.Linear in -> out, stored [out, in] with a bias.
    Status linear(const std::string &name, std::int64_t in, std::int64_t out, MatrixF &weight, VectorF &bias) const
    {
        ATTNSCOPE_ASSIGN_OR_RETURN(weight, m_t.matrix({name + ".weight"}, in, out, true));
        ATTNSCOPE_ASSIGN_OR_RETURN(bias, m_t.vector({name + ".bias"}, out));
        return Ok{};
    }

    Status attention(const std::string &p, AttentionWeights &a) const
    {
        const std::int64_t d = m_c.width;
        VectorF qb, kb, vb, ob;
        MatrixF o;
        for (Status s : {linear(p + "q_proj", d, d, a.q, qb), linear(p + "k_proj", d, d, a.k, kb),
                         linear(p + "v_proj", d, d, a.v, vb), linear(p + "out_proj", d, d, o, ob)})
            if (!s)
                return s;
        a.qBias = std::move(qb), a.kBias = std::move(kb), a.vBias = std::move(vb);
        a.o = std::move(o), a.oBias = std::move(ob);
        return Ok{};
    }

    Status layer(const std::string &p, const TranslationConfig::Stack &stack, bool decoder, TransformerLayer &l) const
    {
        const std::int64_t d = m_c.width;
        for (Status s : {attention(p + "self_attn.", l.attention), norm(p + "self_attn_layer_norm", l.norm1),
                         norm(p + "final_layer_norm", l.norm2)})
            if (!s)
                return s;
        ATTNSCOPE_ASSIGN_OR_RETURN(l.up, m_t.weight({p + "fc1.weight"}, d, stack.ffn, true));
        ATTNSCOPE_ASSIGN_OR_RETURN(l.upBias, m_t.vector({p + "fc1.bias"}, stack.ffn));
        ATTNSCOPE_ASSIGN_OR_RETURN(l.down, m_t.weight({p + "fc2.weight"}, stack.ffn, d, true));
        ATTNSCOPE_ASSIGN_OR_RETURN(l.downBias, m_t.vector({p + "fc2.bias"}, d));
        if (decoder) {
            AttentionWeights cross;
            for (Status s : {attention(p + "encoder_attn.", cross), norm(p + "encoder_attn_layer_norm", l.crossNorm)})
                if (!s)
                    return s;
            l.crossAttention = std::move(cross);
        }
        return Ok{};
    }

    Result<TranslationWeights> model() const
    {
        TranslationWeights w;
        // Shared: one table under whichever name the checkpoint kept (transformers ties them).
        ATTNSCOPE_ASSIGN_OR_RETURN(
            w.embedding, m_t.weight({"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight"},
                                    m_c.vocabSize, m_c.width, false));
        if (!m_c.tieWordEmbeddings) {
            WeightMatrix head;
            ATTNSCOPE_ASSIGN_OR_RETURN(head, m_t.weight({"lm_head.weight"}, m_c.vocabSize, m_c.width, false));
            w.lmHead = std::move(head);
        }
        MatrixF bias;
        ATTNSCOPE_ASSIGN_OR_RETURN(bias, m_t.matrix({"final_logits_bias"}, 1, m_c.vocabSize));
        w.finalLogitsBias = bias.row(0);
        for (const auto &[stack, name, layers] :
             {std::tuple{&m_c.encoder, "encoder", &w.encoder}, std::tuple{&m_c.decoder, "decoder", &w.decoder}}) {
            layers->resize(std::size_t(stack->layers));
            for (int l = 0; l < stack->layers; ++l)
                if (Status s = layer(std::string(name) + ".layers." + std::to_string(l) + ".", *stack,
                                     layers == &w.decoder, (*layers)[std::size_t(l)]);
                    !s)
                    return s.error();
        }
        return w;
    }

private:
    const ModelTensors &m_t;
    const TranslationConfig &m_c;
};

// Float32 values the loaded model keeps in memory (the attention weights and norms).
std::int64_t translationWeightCount(const TranslationConfig &c)
{
    const std::int64_t d = c.width;
    const std::int64_t attention = saturatingMul(4, saturatingMul(d + 1, d));
    const std::int64_t encoder = saturatingMul(c.encoder.layers, saturatingAdd(attention, 6 * d));
    const std::int64_t decoder = saturatingMul(c.decoder.layers, saturatingAdd(2 * attention, 8 * d));
    return saturatingAdd(saturatingAdd(encoder, decoder), c.vocabSize);
}

Status checkWidth(const char *what, std::int64_t rows, std::int64_t cols, std::int64_t wantRows, std::int64_t wantCols)
{
    if (rows != wantRows || cols != wantCols)
        return Error{std::string(what) + ": expected " + std::to_string(wantRows) + " x " + std::to_string(wantCols) +
                     ", found " + std::to_string(rows) + " x " + std::to_string(cols)};
    return Ok{};
}

Status checkTranslationWeights(const TranslationConfig &c, const TranslationWeights &w)
{
    const std::int64_t d = c.width;
    if (Status s = checkWidth("embedding", w.embedding.rows(), w.embedding.cols(), c.vocabSize, d); !s)
        return s;
    if (w.lmHead)
        if (Status s = checkWidth("lm head", w.lmHead->rows(), w.lmHead->cols(), c.vocabSize, d); !s)
            return s;
    if (!c.tieWordEmbeddings && !w.lmHead)
        return Error{"lm head: missing (tie_word_embeddings is false)"};
    if (w.finalLogitsBias.size() != c.vocabSize)
        return Error{"final_logits_bias: expected " + std::to_string(c.vocabSize) + " values, found " +
                     std::to_string(w.finalLogitsBias.size())};
    for (const auto &[stack, layers, name] :
         {std::tuple{&c.encoder, &w.encoder, "encoder"}, std::tuple{&c.decoder, &w.decoder, "decoder"}}) {
        if (std::int64_t(layers->size()) != stack->layers)
            return Error{std::string(name) + " layers: expected " + std::to_string(stack->layers) + ", found " +
                         std::to_string(layers->size())};
        for (const TransformerLayer &l : *layers) {
            std::vector<const AttentionWeights *> attentions = {&l.attention};
            if (layers == &w.decoder) {
                if (!l.crossAttention || !l.crossNorm.isSet())
                    return Error{std::string(name) + " layer: no cross-attention"};
                attentions.push_back(&*l.crossAttention);
            }
            for (const AttentionWeights *a : attentions)
                for (Status s : {checkWidth("attention q", a->q.rows(), a->q.cols(), d, d),
                                 checkWidth("attention k", a->k.rows(), a->k.cols(), d, d),
                                 checkWidth("attention v", a->v.rows(), a->v.cols(), d, d),
                                 checkWidth("attention o", a->o ? a->o->rows() : 0, a->o ? a->o->cols() : 0, d, d)})
                    if (!s)
                        return s;
            for (Status s : {checkWidth("fc1", l.up.rows(), l.up.cols(), d, stack->ffn),
                             checkWidth("fc2", l.down.rows(), l.down.cols(), stack->ffn, d),
                             checkWidth("norm 1", 1, l.norm1.weight.size(), 1, d),
                             checkWidth("norm 2", 1, l.norm2.weight.size(), 1, d)})
                if (!s)
                    return s;
        }
    }
    return Ok{};
}

// A folder holding only PyTorch's pickle: refused with the conversion, before any other file.
Status checkNotPickleOnly(const std::string &modelDir)
{
    std::error_code ec;
    const std::filesystem::path dir(modelDir);
    if (std::filesystem::exists(dir / "model.safetensors", ec) ||
        std::filesystem::exists(dir / "model.safetensors.index.json", ec) ||
        !std::filesystem::exists(dir / "pytorch_model.bin", ec))
        return Ok{};
    return Error{printableText((dir / "pytorch_model.bin").string(), 200) +
                     ": PyTorch pickles are not read (they can run code); convert the folder once with "
                     "\"python3 scripts/convert_to_safetensors.py MODEL_DIR\" (needs only python3-torch)",
                 ErrorKind::Unsupported};
}

// The row of logits with the pad id excluded and the forced eos applied, as generate()'s
// logits processors leave it; the argmax (the first of equal values, as torch.argmax).
std::int32_t nextToken(const TranslationConfig &c, const float *logits, std::int64_t vocab, std::int64_t length)
{
    if (c.forcedEosId && length == c.maxLength - 1)
        return *c.forcedEosId;
    std::int32_t best = -1;
    float bestValue = -std::numeric_limits<float>::infinity();
    for (std::int64_t v = 0; v < vocab; ++v) {
        if (v == c.padId)
            continue;
        if (best < 0 || logits[v] > bestValue)
            best = std::int32_t(v), bestValue = logits[v];
    }
    return best;
}

} // namespace

MatrixF marianPositions(std::int64_t count, int width)
{
    MatrixF out(count, width);
    const int half = width / 2;
    for (std::int64_t p = 0; p < count; ++p)
        for (int i = 0; i < half; ++i) {
            const double angle = double(p) / std::pow(10000.0, double(2 * i) / double(width));
            out(p, i) = float(std::sin(angle));
            out(p, half + i) = float(std::cos(angle));
        }
    return out;
}

bool isTranslationModelFolder(const std::string &modelDir)
{
    const auto type = readModelType(modelDir);
    return type && *type == "marian";
}

Result<TranslationModel> TranslationModel::load(const std::string &modelDir)
{
    if (Status s = checkNotPickleOnly(modelDir); !s)
        return s.error();
    auto config = readTranslationConfig(modelDir);
    if (!config)
        return config.error();
    auto tokenizers = loadTranslationTokenizers(modelDir);
    if (!tokenizers)
        return tokenizers.error();
    if (tokenizers->source.vocabularySize() != config->vocabSize)
        return Error{printableText(modelDir, 200) +
                     "/vocab.json: " + std::to_string(tokenizers->source.vocabularySize()) +
                     " tokens, but config.json's vocab_size is " + std::to_string(config->vocabSize)};
    auto tensors = ModelTensors::open(modelDir, {"model."});
    if (!tensors)
        return tensors.error();
    if (Status s =
            checkFitsInMemory(saturatingMul(4, translationWeightCount(*config)), "the model's weights in float32");
        !s)
        return Error{printableText(modelDir, 200) + ": " + s.message(), s.kind()};
    auto shared = std::make_shared<const ModelTensors>(std::move(*tensors));
    auto weights = Loader(*shared, *config).model();
    if (Status s = shared->checkUnchanged(); !s)
        return s.error();
    if (!weights)
        return weights.error();
    weights->source = shared;
    return fromWeights(*config, std::move(*weights), std::move(*tokenizers));
}

Result<TranslationModel> TranslationModel::fromWeights(const TranslationConfig &config, TranslationWeights weights,
                                                       std::optional<TranslationTokenizers> tokenizers)
{
    if (Status s = checkTranslationWeights(config, weights); !s)
        return s.error();
    TranslationModel model;
    model.m_config = config;
    model.m_weights = std::make_shared<const TranslationWeights>(std::move(weights));
    model.m_tokenizers = std::move(tokenizers);
    return model;
}

Result<Encoding> TranslationModel::input(std::vector<std::int32_t> ids, const char *what) const
{
    if (ids.empty())
        return Error{std::string(what) + ": no tokens; a translation needs at least one"};
    if (std::int64_t(ids.size()) > m_config.positions)
        return Error{std::string(what) + ": " + std::to_string(ids.size()) + " tokens; this model takes at most " +
                     std::to_string(m_config.positions) + " (max_position_embeddings)"};
    Encoding e;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= m_config.vocabSize)
            return Error{std::string(what) + "[" + std::to_string(i) + "]: " + std::to_string(ids[i]) +
                         " is not in the vocabulary (ids from 0 to " + std::to_string(m_config.vocabSize - 1) + ")"};
        std::optional<std::string> token = m_tokenizers ? m_tokenizers->source.token(ids[i]) : std::nullopt;
        e.tokens.push_back(token ? *token : "<id " + std::to_string(ids[i]) + ">");
    }
    e.ids = std::move(ids);
    return e;
}

Result<Encoding> TranslationModel::encodeSource(std::string_view text) const
{
    if (!m_tokenizers)
        return Error{"this model has no tokenizer; give ids instead of text"};
    Encoding e = m_tokenizers->source.encode(text);
    auto checked = input(std::move(e.ids), "the source");
    if (checked)
        checked->words = std::move(e.words);
    return checked;
}

Result<Encoding> TranslationModel::encodeTarget(std::string_view text) const
{
    if (!m_tokenizers)
        return Error{"this model has no tokenizer; give ids instead of text"};
    Encoding e = m_tokenizers->target.encode(text);
    std::vector<std::int32_t> ids = {m_config.decoderStartId};
    ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    auto checked = input(std::move(ids), "the target");
    if (checked) {
        checked->words = {-1};
        checked->words.insert(checked->words.end(), e.words.begin(), e.words.end());
    }
    return checked;
}

MatrixF TranslationModel::embed(const std::vector<std::int32_t> &ids) const
{
    const std::int64_t t = std::int64_t(ids.size());
    MatrixF x(t, m_config.width);
    for (std::int64_t i = 0; i < t; ++i)
        x.row(i) = m_weights->embedding.row(ids[std::size_t(i)]);
    if (m_config.scaleEmbedding)
        x *= float(std::sqrt(double(m_config.width)));
    return x + marianPositions(t, m_config.width);
}

Result<MatrixF> TranslationModel::encoderOutput(const MatrixF &embedded, AttentionBackend &backend, TranslationRun *run,
                                                const std::atomic<bool> *cancel) const
{
    const TranslationConfig &c = m_config;
    const std::int64_t s = embedded.rows(), h = c.encoder.heads;
    MatrixF x = embedded;
    if (run)
        run->encoderHiddenStates.push_back(x);
    for (int l = 0; l < c.encoder.layers; ++l) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return Error{"encoder layer " + std::to_string(l) + ": the translation was cancelled",
                         ErrorKind::Cancelled};
        const TransformerLayer &layer = m_weights->encoder[std::size_t(l)];
        AttentionProblem problem = attentionProblem(c, c.encoder, layer.attention, x, nullptr, false);
        problem.keepScores = false; // the run keeps the weights alone
        auto trace = backend.compute(problem);
        if (!trace)
            return Error{"encoder layer " + std::to_string(l) + ": " + trace.message(), trace.kind()};
        if (run)
            for (int head = 0; head < c.encoder.heads; ++head)
                std::copy_n(trace->weights[std::size_t(head)].data(), s * s,
                            run->encoderAttentions.data() + (std::int64_t(l) * h + head) * s * s);
        x = normalizeRows(trace->output + x, layer.norm1, c.layerNormEps);
        backend.recycle(std::move(*trace));
        x = normalizeRows(feedForward(x, layer, c.activation) + x, layer.norm2, c.layerNormEps);
        if (!x.allFinite())
            return Error{"encoder layer " + std::to_string(l) + ": the hidden state overflowed to Inf or NaN",
                         ErrorKind::NonFinite};
        if (run)
            run->encoderHiddenStates.push_back(x);
    }
    return x;
}

Result<MatrixF> TranslationModel::decoderOutput(const MatrixF &embedded, const MatrixF &memory,
                                                AttentionBackend &backend, TranslationRun *run,
                                                const std::atomic<bool> *cancel) const
{
    const TranslationConfig &c = m_config;
    const std::int64_t t = embedded.rows(), s = memory.rows(), h = c.decoder.heads;
    MatrixF x = embedded;
    if (run)
        run->decoderHiddenStates.push_back(x);
    for (int l = 0; l < c.decoder.layers; ++l) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return Error{"decoder layer " + std::to_string(l) + ": the translation was cancelled",
                         ErrorKind::Cancelled};
        const TransformerLayer &layer = m_weights->decoder[std::size_t(l)];
        AttentionProblem selfProblem = attentionProblem(c, c.decoder, layer.attention, x, nullptr, true);
        selfProblem.keepScores = false;
        auto self = backend.compute(selfProblem);
        if (!self)
            return Error{"decoder layer " + std::to_string(l) + ": " + self.message(), self.kind()};
        if (run)
            for (int head = 0; head < c.decoder.heads; ++head)
                std::copy_n(self->weights[std::size_t(head)].data(), t * t,
                            run->decoderAttentions.data() + (std::int64_t(l) * h + head) * t * t);
        x = normalizeRows(self->output + x, layer.norm1, c.layerNormEps);
        backend.recycle(std::move(*self));
        AttentionProblem crossProblem = attentionProblem(c, c.decoder, *layer.crossAttention, x, &memory, false);
        crossProblem.keepScores = false;
        auto cross = backend.compute(crossProblem);
        if (!cross)
            return Error{"decoder layer " + std::to_string(l) + " (cross-attention): " + cross.message(), cross.kind()};
        if (run) {
            run->crossInputs.push_back(x);
            for (int head = 0; head < c.decoder.heads; ++head)
                std::copy_n(cross->weights[std::size_t(head)].data(), t * s,
                            run->crossAttentions.data() + (std::int64_t(l) * h + head) * t * s);
        }
        x = normalizeRows(cross->output + x, layer.crossNorm, c.layerNormEps);
        backend.recycle(std::move(*cross));
        x = normalizeRows(feedForward(x, layer, c.activation) + x, layer.norm2, c.layerNormEps);
        if (!x.allFinite())
            return Error{"decoder layer " + std::to_string(l) + ": the hidden state overflowed to Inf or NaN",
                         ErrorKind::NonFinite};
        if (run)
            run->decoderHiddenStates.push_back(x);
    }
    return x;
}

MatrixF TranslationModel::logits(const MatrixF &lastHidden) const
{
    const WeightMatrix &head = m_weights->lmHead ? *m_weights->lmHead : m_weights->embedding;
    MatrixF out = head.productTransposed(lastHidden);
    out.rowwise() += m_weights->finalLogitsBias;
    return out;
}

std::int64_t TranslationModel::forwardBytes(std::int64_t s, std::int64_t t) const
{
    const TranslationConfig &c = m_config;
    const std::int64_t d = c.width;
    std::int64_t maps = saturatingMul(std::int64_t(c.encoder.layers) * c.encoder.heads, saturatingMul(s, s));
    maps = saturatingAdd(
        maps, saturatingMul(std::int64_t(c.decoder.layers) * c.decoder.heads, saturatingMul(t, saturatingAdd(t, s))));
    // Kept: the maps, hidden states, cross inputs and logits; working: one layer's trace (twice
    // the maps of a head set) and MLP.
    std::int64_t bytes = saturatingMul(4, maps);
    bytes =
        saturatingAdd(bytes, saturatingMul(4, saturatingMul(s + t, d * (c.encoder.layers + 2 * c.decoder.layers + 2))));
    bytes = saturatingAdd(bytes, saturatingMul(4, saturatingMul(t, c.vocabSize)));
    const int heads = std::max(c.encoder.heads, c.decoder.heads);
    const std::int64_t longest = std::max(s, t);
    bytes = saturatingAdd(bytes, traceBytes(heads, longest, longest, c.headDim(c.encoder), c.headDim(c.encoder), d));
    bytes =
        saturatingAdd(bytes, saturatingMul(12, saturatingMul(longest, std::max(c.encoder.ffn, c.decoder.ffn) + 4 * d)));
    return bytes;
}

Result<std::shared_ptr<TranslationRun>> TranslationModel::startRun(const Encoding &source, const Encoding &target) const
{
    auto src = input(source.ids, "the source");
    if (!src)
        return src.error();
    auto tgt = input(target.ids, "the target");
    if (!tgt)
        return tgt.error();
    const TranslationConfig &c = m_config;
    const std::int64_t s = std::int64_t(source.ids.size()), t = std::int64_t(target.ids.size());
    if (Status st = checkFitsInMemory(forwardBytes(s, t), "its attentions and hidden states"); !st)
        return st.error();
    auto run = std::make_shared<TranslationRun>();
    run->config = c;
    run->source = source.tokens.size() == source.ids.size() ? source : *src;
    run->target = target.tokens.size() == target.ids.size() ? target : *tgt;
    run->weights = m_weights;
    run->encoderAttentions.resize(std::size_t(std::int64_t(c.encoder.layers) * c.encoder.heads * s * s));
    run->decoderAttentions.resize(std::size_t(std::int64_t(c.decoder.layers) * c.decoder.heads * t * t));
    run->crossAttentions.resize(std::size_t(std::int64_t(c.decoder.layers) * c.decoder.heads * t * s));
    return run;
}

Result<std::shared_ptr<const TranslationRun>> TranslationModel::forward(const Encoding &source, const Encoding &target,
                                                                        AttentionBackend &backend,
                                                                        const std::atomic<bool> *cancel) const
{
    if (ForwardEngine *engine = backend.forwardEngine(); engine && engine->runsTranslation(*this)) {
        auto run = engine->translate(*this, source, target, cancel);
        if (run || !layerLoopMayRetry(run.kind()))
            return run;
    }
    return forwardLayerByLayer(source, target, backend, cancel);
}

Result<std::shared_ptr<const TranslationRun>> ForwardEngine::translate(const TranslationModel &, const Encoding &,
                                                                       const Encoding &, const std::atomic<bool> *)
{
    return Error{"the " + name() + " engine does not compute translation models", ErrorKind::Unsupported};
}

Result<std::shared_ptr<const TranslationRun>> LayerLoopEngine::translate(const TranslationModel &model,
                                                                         const Encoding &source, const Encoding &target,
                                                                         const std::atomic<bool> *cancel)
{
    return model.forwardLayerByLayer(source, target, m_backend, cancel);
}

Result<std::shared_ptr<const TranslationRun>>
TranslationModel::forwardLayerByLayer(const Encoding &source, const Encoding &target, AttentionBackend &backend,
                                      const std::atomic<bool> *cancel) const
{
    auto started = startRun(source, target);
    if (!started)
        return started.error();
    std::shared_ptr<TranslationRun> run = std::move(*started);
    auto memory = encoderOutput(embed(source.ids), backend, run.get(), cancel);
    if (!memory)
        return memory.error();
    auto last = decoderOutput(embed(target.ids), *memory, backend, run.get(), cancel);
    if (!last)
        return last.error();
    run->logits = logits(*last);
    if (m_weights->source)
        if (Status st = m_weights->source->checkUnchanged(); !st)
            return st.error();
    return std::shared_ptr<const TranslationRun>(std::move(run));
}

AttentionProblem TranslationModel::attentionShape(TranslationAttention kind, std::int64_t queries,
                                                  std::int64_t keys) const
{
    const TranslationConfig &c = m_config;
    const MatrixF memory(kind == TranslationAttention::Cross ? keys : 0, c.width);
    return attentionProblem(c, stackOf(c, kind), AttentionWeights{}, MatrixF(queries, c.width),
                            kind == TranslationAttention::Cross ? &memory : nullptr,
                            kind == TranslationAttention::Decoder);
}

std::string TranslationModel::targetText(const std::vector<std::int32_t> &ids) const
{
    if (!m_tokenizers)
        return std::string();
    const TranslationConfig &c = m_config;
    std::vector<std::int32_t> words;
    for (std::int32_t id : ids)
        if (id != c.decoderStartId && id != c.eosId && id != c.padId)
            words.push_back(id);
    return m_tokenizers->target.decode(words);
}

Result<Encoding> TranslationModel::greedy(const Encoding &source, AttentionBackend &backend,
                                          const std::atomic<bool> *cancel) const
{
    auto src = input(source.ids, "the source");
    if (!src)
        return src.error();
    const TranslationConfig &c = m_config;
    auto memory = encoderOutput(embed(source.ids), backend, nullptr, cancel);
    if (!memory)
        return memory.error();
    const std::int64_t limit = std::min<std::int64_t>(c.maxLength, c.positions);
    std::vector<std::int32_t> ids = {c.decoderStartId};
    while (std::int64_t(ids.size()) < limit) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return Error{"step " + std::to_string(ids.size()) + ": the translation was cancelled",
                         ErrorKind::Cancelled};
        // No cache: the decoder runs again over every id so far (translations are short).
        auto last = decoderOutput(embed(ids), *memory, backend, nullptr, cancel);
        if (!last)
            return last.error();
        const MatrixF row = logits(last->bottomRows(1));
        const std::int32_t next = nextToken(c, row.data(), row.cols(), std::int64_t(ids.size()));
        ids.push_back(next);
        if (next == c.eosId)
            break;
    }
    if (m_weights->source)
        if (Status st = m_weights->source->checkUnchanged(); !st)
            return st.error();
    return input(std::move(ids), "the target");
}

Result<AttentionSet> translationAttentionSet(std::shared_ptr<const TranslationRun> run, TranslationAttention kind)
{
    const TranslationConfig::Stack &stack = stackOf(run->config, kind);
    const bool encoder = kind == TranslationAttention::Encoder;
    const Encoding &queries = encoder ? run->source : run->target;
    const Encoding &keys = kind == TranslationAttention::Decoder ? run->target : run->source;
    const FloatBuffer &data = encoder                                 ? run->encoderAttentions
                              : kind == TranslationAttention::Decoder ? run->decoderAttentions
                                                                      : run->crossAttentions;
    auto set = AttentionSet::fromContiguous(run, data.data(), AttentionStorage::Float32, 1, stack.layers, stack.heads,
                                            std::int64_t(queries.ids.size()), std::int64_t(keys.ids.size()));
    if (!set)
        return set.error();
    if (Status s = set->setTokens(queries.tokens, keys.tokens); !s)
        return s.error();
    for (int l = 0; l < stack.layers; ++l) {
        const double scale = 1.0 / std::sqrt(double(run->config.headDim(stack)));
        set->layerFacts.push_back({stack.heads, stack.heads, 0, scale});
    }
    return set;
}

AttentionProblem translationLayerProblem(const TranslationRun &run, TranslationAttention kind, int layer)
{
    const TranslationConfig &c = run.config;
    const TranslationWeights &w = *run.weights;
    const auto l = std::size_t(layer);
    switch (kind) {
    case TranslationAttention::Encoder:
        return attentionProblem(c, c.encoder, w.encoder[l].attention, run.encoderHiddenStates[l], nullptr, false);
    case TranslationAttention::Decoder:
        return attentionProblem(c, c.decoder, w.decoder[l].attention, run.decoderHiddenStates[l], nullptr, true);
    case TranslationAttention::Cross:
        break;
    }
    return attentionProblem(c, c.decoder, *w.decoder[l].crossAttention, run.crossInputs[l],
                            &run.encoderHiddenStates.back(), false);
}

AttentionProblem translationHeadProblem(const TranslationRun &run, TranslationAttention kind, int layer, int head)
{
    return singleHeadProblem(translationLayerProblem(run, kind, layer), head);
}

} // namespace attnscope
