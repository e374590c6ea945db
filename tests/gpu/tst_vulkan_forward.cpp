// The whole forward pass on the Vulkan engine (gpu/VulkanForward.h) on a real driver (lavapipe
// in CI): each of its passes against the CPU with a stated error budget, in the manner of ggml's
// test-backend-ops; every model family's forward against the CPU engine; and the shape of the
// work, counted by the backend: weights uploaded once, ceil(L / N) submissions per forward,
// exactly the kept maps and hidden states read back.

#include "../common/TestUtil.h"
#include "../common/VulkanFaults.h"
#include "VulkanTestUtil.h"

#include "app/engine/BackendChoice.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/Mask.h"
#include "core/models/ForwardEngine.h"
#include "core/models/TransformerModel.h"
#include "core/models/TranslationModel.h"
#include "gpu/VulkanForward.h"
#include "gpu/VulkanPipelineCache.h"

#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <span>

using namespace attnscope;

namespace {

MatrixF randomMatrix(Eigen::Index rows, Eigen::Index cols, std::mt19937 &rng, float scale = 1.0f)
{
    std::normal_distribution<float> n(0.0f, scale);
    MatrixF m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i)
        m.data()[i] = n(rng);
    return m;
}

VectorF randomVector(Eigen::Index n, std::mt19937 &rng, float scale = 1.0f)
{
    return randomMatrix(1, n, rng, scale);
}

// A checkpoint's weight of `dtype` (F32, F16, BF16) as mapped: stored rows x cols of random
// finite values (their bits drawn directly), M = the stored matrix or, where `transposed`, its
// transpose (nn.Linear's [out, in]).
WeightMatrix storedWeight(const std::string &dtype, Eigen::Index storedRows, Eigen::Index storedCols, bool transposed,
                          std::mt19937 &rng)
{
    const std::size_t n = std::size_t(storedRows * storedCols), size = dtype == "F32" ? 4 : 2;
    auto bytes = std::make_shared<std::vector<unsigned char>>(n * size);
    std::uniform_int_distribution<std::uint32_t> bits;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint32_t v = bits(rng);
        if (dtype == "F16") // sign, an exponent for 2^-8..2^-3 (as a weight's), any mantissa
            v = (v & 0x83FFu) | ((7u + (v >> 16) % 6u) << 10);
        else if (dtype == "BF16") // a float32's upper half: sign, 2^-8..2^-3, 7 mantissa bits
            v = ((v & 0x807Fu) | ((119u + (v >> 16) % 6u) << 7));
        else {
            const float f = std::normal_distribution<float>(0.0f, 0.1f)(rng);
            std::memcpy(&v, &f, 4);
        }
        std::memcpy(bytes->data() + i * size, &v, size); // little-endian: the low bytes
    }
    return WeightMatrix::mapped(bytes->data(), dtype, storedRows, storedCols, transposed, bytes);
}

// The device bytes of a weight matrix: a mapped one as stored (whole words), else float32.
std::uint64_t weightBytes(const WeightMatrix &w)
{
    const WeightMatrix::Stored s = w.stored();
    if (!s.data)
        return std::uint64_t(w.rows() * w.cols()) * 4;
    return (std::uint64_t(s.rows * s.cols) * std::uint64_t(s.elementSize) + 3) / 4 * 4;
}

// Every byte of a layer's weights on the device, counted from the weights themselves: the
// attention's (in memory) and the norms in float32, the MLP's as the checkpoint stores them.
std::uint64_t layerBytes(const TransformerLayer &l)
{
    auto m = [](const auto &x) { return std::uint64_t(x.rows() * x.cols()) * 4; };
    auto v = [](const auto &x) { return std::uint64_t(x.size()) * 4; };
    auto o = [&](const auto &x) { return x ? v(*x) : 0; };
    auto attention = [&](const AttentionWeights &a) {
        return m(a.q) + m(a.k) + m(a.v) + (a.o ? m(*a.o) : 0) + o(a.qBias) + o(a.kBias) + o(a.vBias) + o(a.oBias) +
               o(a.qNorm) + o(a.kNorm) + o(a.sinks);
    };
    std::uint64_t n = attention(l.attention) + (l.crossAttention ? attention(*l.crossAttention) : 0);
    n += v(l.norm1.weight) + v(l.norm1.bias) + v(l.postAttentionNorm.weight) + v(l.crossNorm.weight) +
         v(l.crossNorm.bias) + v(l.norm2.weight) + v(l.norm2.bias) + v(l.postMlpNorm.weight);
    return n + weightBytes(l.up) + v(l.upBias) + (l.gate ? weightBytes(*l.gate) : 0) + v(l.gateBias) +
           weightBytes(l.down) + v(l.downBias);
}

// Every byte of the weights the forward uses; the token embedding as stored.
std::uint64_t weightBytes(const TransformerWeights &w)
{
    auto v = [](const auto &x) { return std::uint64_t(x.size()) * 4; };
    std::uint64_t n = weightBytes(w.tokenEmbedding) + v(w.positionEmbedding) + v(w.tokenType0) +
                      v(w.embeddingNorm.weight) + v(w.embeddingNorm.bias) + v(w.finalNorm.weight) + v(w.finalNorm.bias);
    for (const TransformerLayer &l : w.layers)
        n += layerBytes(l);
    return n;
}

// A translation model's: the shared embedding, the sinusoidal table (max_position_embeddings
// rows, float32) and every layer of both stacks; the logits are computed on the host.
std::uint64_t weightBytes(const TranslationModel &model)
{
    const TranslationWeights &w = model.weights();
    const TranslationConfig &c = model.config();
    std::uint64_t n = weightBytes(w.embedding) + std::uint64_t(c.positions * c.width) * 4;
    for (const auto *stack : {&w.encoder, &w.decoder})
        for (const TransformerLayer &l : *stack)
            n += layerBytes(l);
    return n;
}

// The bytes of the distinct masks among these problems' (as bits: rows of whole 32-bit words;
// masks whose words are the same are one buffer, whatever their shape).
std::uint64_t maskBytes(const std::vector<AttentionProblem> &problems)
{
    std::set<std::vector<std::uint32_t>> masks;
    for (const AttentionProblem &p : problems) {
        const MaskMatrix allowed = effectiveMask(p);
        const Eigen::Index words = (allowed.cols() + 31) / 32;
        std::vector<std::uint32_t> bits(std::size_t(allowed.rows() * words), 0u);
        for (Eigen::Index i = 0; i < allowed.rows(); ++i)
            for (Eigen::Index j = 0; j < allowed.cols(); ++j)
                if (allowed(i, j))
                    bits[std::size_t(i * words + j / 32)] |= 1u << (j % 32);
        masks.insert(bits);
    }
    std::uint64_t bytes = 0;
    for (const auto &m : masks)
        bytes += m.size() * 4;
    return bytes;
}

// What a forward of T tokens must upload: the ids, each distinct mask as bits and each
// distinct RoPE table (a cos and a sin per row and pair).
std::uint64_t inputBytes(const TransformerModel &model, std::int64_t t)
{
    std::vector<AttentionProblem> problems;
    std::set<std::vector<float>> ropes;
    for (int l = 0; l < model.config().layers; ++l) {
        const AttentionProblem p = model.layerShape(l, t);
        if (p.spec.rope)
            ropes.insert(vk::ropeTableForGpu(queryPositions(p), *p.spec.rope, p.spec.headDimQK));
        problems.push_back(p);
    }
    return std::uint64_t(t) * 4 + maskBytes(problems) +
           ropes.size() * std::uint64_t(t) * std::uint64_t(model.config().headDim()) * 4;
}

// A translation's: both sides' ids and the masks of its three kinds of attention.
std::uint64_t inputBytes(const TranslationModel &model, std::int64_t s, std::int64_t t)
{
    return std::uint64_t(s + t) * 4 + maskBytes({model.attentionShape(TranslationAttention::Encoder, s, s),
                                                 model.attentionShape(TranslationAttention::Decoder, t, t),
                                                 model.attentionShape(TranslationAttention::Cross, t, s)});
}

DeviceTransfers delta(const DeviceTransfers &after, const DeviceTransfers &before)
{
    return {after.submissions - before.submissions, after.uploaded - before.uploaded, after.readBack - before.readBack};
}

} // namespace

class TestVulkanForward : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        ATTNSCOPE_SKIP_WITHOUT_VULKAN();
        vk::resetValidationReport();
        VulkanBackendOptions options;
        options.validation = true;
        options.layersPerSubmission = kLayersPerSubmission;
        auto backend = VulkanBackend::create(options);
        QVERIFY2(backend, backend ? "" : backend.message().c_str());
        m_vulkan = std::move(*backend);
    }

    void cleanupTestCase()
    {
        m_vulkan.reset();
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

    // Each pass on shapes that leave partial workgroups, against the CPU's code for the same
    // step. Budgets: the norms sum in a float tree where the CPU sums in double (1e-5·(1 + |ref|));
    // the activations use exp-based tanh and a 1.5e-7 erf (2e-6·(1 + |ref|)); the residual sum
    // and the embedding gather round exactly as the CPU (bit for bit); the dense layer with its
    // fused residual sums its products in another order (1e-5·(1 + |ref|)).
    void passesMatchTheCpu_data()
    {
        QTest::addColumn<int>("op");
        QTest::addColumn<int>("activation");
        QTest::addColumn<double>("budget");
        QTest::addColumn<QString>("stored"); // Dense's matrix or Embed's table as a mapped weight of this dtype
        QTest::newRow("layer norm") << int(vk::ModelOp::Norm) << 0 << 1e-5 << QString();
        QTest::newRow("rms norm") << int(vk::ModelOp::Norm) << 1 << 1e-5 << QString();
        QTest::newRow("add") << int(vk::ModelOp::Add) << 0 << 0.0 << QString();
        QTest::newRow("gelu tanh") << int(vk::ModelOp::Activate) << int(Activation::GeluTanh) << 2e-6 << QString();
        QTest::newRow("gelu erf") << int(vk::ModelOp::Activate) << int(Activation::GeluErf) << 2e-6 << QString();
        QTest::newRow("silu") << int(vk::ModelOp::Activate) << int(Activation::Silu) << 2e-6 << QString();
        QTest::newRow("relu") << int(vk::ModelOp::Activate) << int(Activation::Relu) << 0.0 << QString();
        QTest::newRow("gate silu") << int(vk::ModelOp::Gate) << int(Activation::Silu) << 2e-6 << QString();
        QTest::newRow("gate gelu tanh") << int(vk::ModelOp::Gate) << int(Activation::GeluTanh) << 2e-6 << QString();
        QTest::newRow("embed") << int(vk::ModelOp::Embed) << 0 << 0.0 << QString();
        QTest::newRow("embed scaled") << int(vk::ModelOp::Embed) << 1 << 0.0 << QString();
        QTest::newRow("dense with residual") << int(vk::ModelOp::Dense) << 0 << 1e-5 << QString();
        // The weights as a checkpoint stores them, kept so on the device and converted in the
        // shader exactly as the CPU converts them: the same values, summed in another order.
        QTest::newRow("dense, f16 weight [out, in]") << int(vk::ModelOp::Dense) << 0 << 1e-5 << QString("F16");
        QTest::newRow("dense, bf16 weight [out, in]") << int(vk::ModelOp::Dense) << 0 << 1e-5 << QString("BF16");
        QTest::newRow("dense, f32 weight [out, in]") << int(vk::ModelOp::Dense) << 0 << 1e-5 << QString("F32");
        QTest::newRow("embed, f16 table") << int(vk::ModelOp::Embed) << 1 << 0.0 << QString("F16");
        QTest::newRow("embed, bf16 table") << int(vk::ModelOp::Embed) << 0 << 0.0 << QString("BF16");
    }

    void passesMatchTheCpu()
    {
        QFETCH(int, op);
        QFETCH(int, activation);
        QFETCH(double, budget);
        QFETCH(QString, stored);
        std::mt19937 rng(std::uint32_t(op * 7 + activation));
        vk::ModelOpInput in;
        in.op = vk::ModelOp(op);
        in.activation = Activation(activation);
        const Eigen::Index rows = 13, cols = 333; // neither a multiple of a workgroup
        MatrixF expected;
        switch (in.op) {
        case vk::ModelOp::Norm: {
            in.x = randomMatrix(rows, cols, rng, 3.0f);
            in.x.array() += 2.0f; // a mean to subtract
            in.weight = randomVector(cols, rng);
            if (activation == 0)
                in.bias = randomVector(cols, rng);
            in.eps = 1e-5;
            expected = normalizeRows(in.x, {in.weight, in.bias}, in.eps);
            break;
        }
        case vk::ModelOp::Add:
            in.x = randomMatrix(rows, cols, rng);
            in.other = randomMatrix(rows, cols, rng);
            expected = in.x + in.other;
            break;
        case vk::ModelOp::Activate:
            in.x = randomMatrix(rows, cols, rng, 4.0f);
            in.x(0, 0) = -100.0f, in.x(0, 1) = 100.0f, in.x(0, 2) = 0.0f; // the far tails and zero
            expected = in.x;
            activate(expected, in.activation);
            break;
        case vk::ModelOp::Gate: {
            in.x = randomMatrix(rows, cols, rng);
            in.other = randomMatrix(rows, cols, rng, 4.0f);
            MatrixF gate = in.other;
            activate(gate, in.activation);
            expected = (in.x.array() * gate.array()).matrix();
            break;
        }
        case vk::ModelOp::Embed: {
            const Eigen::Index vocab = 50;
            if (stored.isEmpty())
                in.x = randomMatrix(vocab, cols, rng);
            else { // rows of 333 16-bit values: every other row starts in the middle of a word
                in.stored = storedWeight(stored.toStdString(), vocab, cols, false, rng);
                in.x = in.stored.toFloat();
            }
            in.other = randomMatrix(rows, cols, rng); // positions 0..rows-1
            in.bias = randomVector(cols, rng);
            in.scale = activation == 1 ? float(std::sqrt(double(cols))) : 1.0f;
            for (Eigen::Index r = 0; r < rows; ++r)
                in.ids.push_back(std::int32_t((r * 17 + 3) % vocab));
            expected.resize(rows, cols);
            for (Eigen::Index r = 0; r < rows; ++r)
                expected.row(r) = in.x.row(in.ids[std::size_t(r)]) * in.scale; // the token row alone scaled
            expected += in.other;
            expected.rowwise() += in.bias;
            break;
        }
        case vk::ModelOp::Dense: {
            in.x = randomMatrix(rows, 300, rng);
            if (stored.isEmpty())
                in.matrix = randomMatrix(300, 70, rng, 0.1f);
            else { // stored [70, 300], read with its strides swapped
                in.stored = storedWeight(stored.toStdString(), 70, 300, true, rng);
                in.matrix = in.stored.toFloat();
            }
            in.bias = randomVector(70, rng);
            in.other = randomMatrix(rows, 70, rng);
            MatrixF y = in.x * in.matrix;
            y.rowwise() += in.bias;
            expected = in.other + y;
            break;
        }
        }
        VulkanBackendOptions tight; // every pass split into bindings of at most 8 KiB
        tight.maxStorageBufferRange = 8192;
        auto split = VulkanBackend::create(tight);
        QVERIFY2(split, split ? "" : split.message().c_str());
        for (VulkanBackend *backend : {m_vulkan.get(), split->get()}) {
            auto got = backend->runModelOp(in);
            QVERIFY2(got, got ? "" : got.message().c_str());
            const std::string diff = test::compareMatrix("result", *got, expected, {budget, budget});
            QVERIFY2(diff.empty(), diff.c_str());
        }
    }

    void everyFamilyMatchesTheCpu_data()
    {
        QTest::addColumn<QString>("folder");
        for (const char *name : {"models/gpt2-f32", "models/gpt2-bf16", "models/bert-f16"})
            QTest::newRow(name) << QString(name);
        for (const char *name :
             {"llama3-f32", "smollm-bf16-sharded", "llama-f16-dynamic", "mistral-f16", "qwen2-bf16-yarn", "qwen3-f32",
              "gemma2-bf16", "gemma3text-f16", "gemma3-f32", "qwen2-f32-rope-params"})
            QTest::newRow(name) << QString("decoders/") + name;
    }

    // The Vulkan engine's whole forward equals the CPU engine's (attentions within 1e-4, hidden
    // states and attention inputs within 1e-3·(1 + |ref|)), and its work has the promised shape:
    // a load uploads exactly the weights; a forward uploads only its ids, masks and tables,
    // submits ceil(L / N) times and reads back exactly the maps and hidden states it keeps.
    void everyFamilyMatchesTheCpu()
    {
        QFETCH(QString, folder);
        checkFamily(folder, *m_vulkan, false);
    }

    // The discrete GPU's path (device memory not mapped, forced here): weights and inputs copied
    // through staging buffers, the weights in a submission of their own at load. And a device
    // whose storage buffer range is smaller than the tensors: every pass split into bindings
    // that fit (lavapipe's 128 MiB is less than GPT-2 small's token embedding).
    void otherPathsMatchTheCpu_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("staging");
        QTest::addColumn<qulonglong>("range");
        for (const char *name : {"models/gpt2-f32", "models/bert-f16", "decoders/gemma3-f32", "decoders/qwen3-f32"})
            QTest::newRow((std::string(name) + " staged").c_str()) << QString(name) << true << 0ull;
        for (const char *name : {"models/gpt2-f32", "models/bert-f16", "decoders/gemma2-bf16"})
            QTest::newRow((std::string(name) + " in 8 KiB bindings").c_str()) << QString(name) << false << 8192ull;
    }

    void otherPathsMatchTheCpu()
    {
        QFETCH(QString, folder);
        QFETCH(bool, staging);
        QFETCH(qulonglong, range);
        auto backend = backendWith(staging, range);
        QVERIFY2(backend, backend ? "" : backend.message().c_str());
        checkFamily(folder, **backend, staging);
    }

    // A translation model's teacher-forced pass (encoder, decoder and cross-attention) on the
    // engine equals the layer loop on the CPU: the three kinds of maps within 1e-4; the hidden
    // states of both stacks, the cross inputs and the logits within 1e-3·(1 + |ref|). Its work:
    // the weights uploaded with the first pass only, ceil((Le + Ld) / N) submissions, only the ids
    // and masks uploaded, exactly the maps, hidden states and cross inputs read back. Lengths
    // 9 by 6 and 7 by 7 (where the encoder's and the cross-attention's masks are one).
    void translationMatchesTheCpu_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<bool>("staging");
        QTest::addColumn<qulonglong>("range");
        QTest::newRow("marian-f32") << "marian-f32" << false << 0ull;
        QTest::newRow("marian-f16") << "marian-f16" << false << 0ull;
        QTest::newRow("marian-f32 staged") << "marian-f32" << true << 0ull;
        QTest::newRow("marian-f16 in 512-byte bindings") << "marian-f16" << false << 512ull;
    }

    void translationMatchesTheCpu()
    {
        QFETCH(QString, folder);
        QFETCH(bool, staging);
        QFETCH(qulonglong, range);
        auto backend = backendWith(staging, range);
        QVERIFY2(backend, backend ? "" : backend.message().c_str());
        VulkanBackend &vulkan = **backend;
        auto model = TranslationModel::load(test::sourcePath("tests/fixtures/marian/" + folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        const TranslationConfig &c = model->config();
        QVERIFY(vulkan.forwardEngine()->runsTranslation(*model));
        const std::uint64_t layers = std::uint64_t(c.encoder.layers + c.decoder.layers);
        bool first = true;
        for (const auto &[s, t] : {std::pair{9, 6}, std::pair{9, 6}, std::pair{7, 7}}) {
            std::vector<std::int32_t> sourceIds, targetIds = {c.decoderStartId};
            for (int i = 0; i < s; ++i)
                sourceIds.push_back(std::int32_t((i * 37 + 5) % c.vocabSize));
            while (int(targetIds.size()) < t)
                targetIds.push_back(std::int32_t((targetIds.size() * 53 + 11) % std::size_t(c.vocabSize)));
            auto source = model->input(sourceIds, "the source");
            auto target = model->input(targetIds, "the target");
            QVERIFY(source && target);

            CpuBackend cpu;
            auto onCpu = model->forwardLayerByLayer(*source, *target, cpu);
            QVERIFY2(onCpu, onCpu ? "" : onCpu.message().c_str());
            const DeviceTransfers before = *vulkan.transfers();
            auto onGpu = model->forward(*source, *target, vulkan);
            QVERIFY2(onGpu, onGpu ? "" : onGpu.message().c_str());
            const DeviceTransfers work = delta(*vulkan.transfers(), before);
            const std::uint64_t su = std::uint64_t(s), tu = std::uint64_t(t), d = std::uint64_t(c.width),
                                he = std::uint64_t(c.encoder.heads), hd = std::uint64_t(c.decoder.heads),
                                le = std::uint64_t(c.encoder.layers), ld = std::uint64_t(c.decoder.layers);
            const std::uint64_t weights = first ? weightBytes(*model) : 0;
            QCOMPARE(work.uploaded, weights + inputBytes(*model, s, t));
            QCOMPARE(work.submissions, (layers + kLayersPerSubmission - 1) / kLayersPerSubmission +
                                           (first && staging ? 1 : 0)); // the weights' staging copies
            QCOMPARE(work.readBack, (le * he * su * su + ld * hd * tu * (tu + su) + (le + 1) * su * d +
                                     (ld + 1) * tu * d + ld * tu * d) *
                                        4);
            first = false;

            const TranslationRun &g = **onGpu, &r = **onCpu;
            for (const auto &[name, got, want] :
                 {std::tuple{"encoder attentions", &g.encoderAttentions, &r.encoderAttentions},
                  std::tuple{"decoder attentions", &g.decoderAttentions, &r.decoderAttentions},
                  std::tuple{"cross-attentions", &g.crossAttentions, &r.crossAttentions}}) {
                QCOMPARE(got->size(), want->size());
                for (std::size_t i = 0; i < want->size(); ++i)
                    QVERIFY2(std::abs((*got)[i] - (*want)[i]) <= 1e-4,
                             qPrintable(QStringLiteral("%1[%2]: %3 on Vulkan, %4 on the CPU")
                                            .arg(name)
                                            .arg(i)
                                            .arg((*got)[i])
                                            .arg((*want)[i])));
            }
            for (const auto &[name, got, want] :
                 {std::tuple{"encoder hidden state", &g.encoderHiddenStates, &r.encoderHiddenStates},
                  std::tuple{"decoder hidden state", &g.decoderHiddenStates, &r.decoderHiddenStates},
                  std::tuple{"cross input", &g.crossInputs, &r.crossInputs}}) {
                QCOMPARE(got->size(), want->size());
                for (std::size_t l = 0; l < want->size(); ++l) {
                    const std::string diff = test::compareMatrix(name, (*got)[l], (*want)[l], {1e-3, 1e-3});
                    QVERIFY2(diff.empty(), (std::to_string(l) + ": " + diff).c_str());
                }
            }
            const std::string logits = test::compareMatrix("logits", g.logits, r.logits, {1e-3, 1e-3});
            QVERIFY2(logits.empty(), logits.c_str());
            QCOMPARE(g.source.tokens, r.source.tokens);
            QCOMPARE(g.target.tokens, r.target.tokens);
        }

        // Cancelled: no submission, nothing read back, and not answered by the layer loop.
        auto source = model->input({5, 6, 7}, "the source");
        auto target = model->input({c.decoderStartId, 9}, "the target");
        QVERIFY(source && target);
        const DeviceTransfers before = *vulkan.transfers();
        std::atomic<bool> cancel{true};
        auto cancelled = model->forward(*source, *target, vulkan, &cancel);
        QVERIFY(!cancelled);
        QCOMPARE(cancelled.kind(), ErrorKind::Cancelled);
        QCOMPARE(vulkan.transfers()->submissions, before.submissions);
        QCOMPARE(vulkan.transfers()->readBack, before.readBack);
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

    // Batches of N layers: a forward of L layers is ceil(L / N) submissions for every N.
    void submissionsFollowTheBatchSize()
    {
        auto model = TransformerModel::load(test::sourcePath("tests/fixtures/decoders/llama3-f32").toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto input = model->input({1, 2, 3, 4, 5});
        QVERIFY(input);
        const std::uint64_t L = std::uint64_t(model->config().layers);
        std::vector<float> first;
        for (std::uint32_t n : {1u, 2u, 3u}) {
            VulkanBackendOptions options;
            options.layersPerSubmission = n;
            auto backend = VulkanBackend::create(options);
            QVERIFY2(backend, backend ? "" : backend.message().c_str());
            QVERIFY((*backend)->forwardEngine()->load(*model));
            const std::uint64_t before = (*backend)->transfers()->submissions;
            auto run = model->forward(*input, **backend);
            QVERIFY2(run, run ? "" : run.message().c_str());
            QCOMPARE((*backend)->transfers()->submissions - before, (L + n - 1) / n);
            std::vector<float> maps((*run)->attentions.begin(), (*run)->attentions.end());
            if (first.empty())
                first = maps;
            else
                QVERIFY(maps == first); // the same passes, however they are batched
        }
    }

    // A cancelled forward stops before it submits and is not answered by the layer loop.
    void aCancelledForwardStopsBeforeSubmitting()
    {
        auto model = TransformerModel::load(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto input = model->input({1, 2, 3});
        QVERIFY(input);
        VulkanBackendOptions options;
        options.layersPerSubmission = 1;
        auto backend = VulkanBackend::create(options);
        QVERIFY2(backend, backend ? "" : backend.message().c_str());
        QVERIFY((*backend)->forwardEngine()->load(*model));
        const DeviceTransfers before = *(*backend)->transfers();
        std::atomic<bool> cancel{true};
        auto run = model->forward(*input, **backend, &cancel);
        QVERIFY(!run);
        QCOMPARE(run.kind(), ErrorKind::Cancelled);
        const DeviceTransfers after = *(*backend)->transfers();
        QCOMPARE(after.submissions, before.submissions);
        QCOMPARE(after.readBack, before.readBack);
    }

    // Keeps the engine does not compute (pooled maps, queries and keys) run the layer loop with
    // the backend's attention, as before.
    void otherKeepsRunTheLayerLoop()
    {
        auto model = TransformerModel::load(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        ForwardKeep pooled;
        pooled.maps = false;
        pooled.poolBins = 4;
        ForwardKeep qk;
        qk.queriesKeys = true;
        QVERIFY(!m_vulkan->forwardEngine()->runs(*model, pooled));
        QVERIFY(!m_vulkan->forwardEngine()->runs(*model, qk));
        auto input = model->input({1, 2, 3, 4});
        QVERIFY(input);
        auto run = model->forward(*input, *m_vulkan, nullptr, qk);
        QVERIFY2(run, run ? "" : run.message().c_str());
        QCOMPARE(int((*run)->queriesKeys.size()), model->config().layers);
    }

    // A lost device, a device out of memory and a wait that timed out: under Auto the forward is
    // answered by the CPU with a notice; asked for Vulkan alone it is the device's error.
    void aFailingDeviceFallsBack_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<bool>("givesUp"); // the GPU is dropped for the rest of the session
        QTest::newRow("device lost") << "device-lost" << true;
        QTest::newRow("out of memory") << "oom" << false;
        QTest::newRow("timeout") << "timeout" << true;
    }

    void aFailingDeviceFallsBack()
    {
        QFETCH(QString, fault);
        QFETCH(bool, givesUp);
        auto model = TransformerModel::load(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto input = model->input({5, 6, 7, 8});
        QVERIFY(input);
        CpuBackend cpu;
        auto expected = model->forward(*input, cpu);
        QVERIFY(expected);

        BackendOptions o;
        o.vulkanDevice = "0";
        o.vulkan.fault = *test::parseVulkanFault(fault.toStdString());
        auto selection = createBackend(BackendRequest::Auto, o);
        QVERIFY2(selection, selection ? "" : selection.message().c_str());
        auto *fallback = dynamic_cast<FallbackBackend *>(selection->backend.get());
        QVERIFY(fallback);
        QVERIFY(fallback->forwardEngine() != nullptr);
        auto run = model->forward(*input, *fallback);
        QVERIFY2(run, run ? "" : run.message().c_str());
        QVERIFY((*run)->attentions == (*expected)->attentions); // the CPU's own numbers
        const std::string notice = takeBackendNotice(*fallback);
        QVERIFY2(notice.find("CPU") != std::string::npos, notice.c_str());
        QCOMPARE(fallback->fellBack(), givesUp);
        QCOMPARE(fallback->forwardEngine() == nullptr, givesUp);

        VulkanBackendOptions alone;
        alone.fault = o.vulkan.fault;
        auto vulkan = VulkanBackend::create(alone);
        QVERIFY2(vulkan, vulkan ? "" : vulkan.message().c_str());
        auto failed = model->forward(*input, **vulkan);
        QVERIFY(!failed);
        QCOMPARE(failed.kind(), givesUp ? ErrorKind::DeviceLost : ErrorKind::OutOfMemory);
        QVERIFY2(failed.message().rfind("layer 0: Vulkan (", 0) == 0, failed.message().c_str());
    }

    // A translation on a device that fails is answered as a model's forward is: by the CPU with
    // a notice under Auto, with the device's error when Vulkan was asked for alone.
    void aFailingDeviceFallsBackForTranslations()
    {
        auto model = TranslationModel::load(test::sourcePath("tests/fixtures/marian/marian-f32").toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto source = model->input({5, 6, 7, 0}, "the source");
        auto target = model->input({model->config().decoderStartId, 9, 10}, "the target");
        QVERIFY(source && target);
        CpuBackend cpu;
        auto expected = model->forward(*source, *target, cpu);
        QVERIFY(expected);

        BackendOptions o;
        o.vulkanDevice = "0";
        o.vulkan.fault = *test::parseVulkanFault("device-lost");
        auto selection = createBackend(BackendRequest::Auto, o);
        QVERIFY2(selection, selection ? "" : selection.message().c_str());
        auto *fallback = dynamic_cast<FallbackBackend *>(selection->backend.get());
        QVERIFY(fallback);
        auto run = model->forward(*source, *target, *fallback);
        QVERIFY2(run, run ? "" : run.message().c_str());
        QVERIFY((*run)->crossAttentions == (*expected)->crossAttentions); // the CPU's own numbers
        const std::string notice = takeBackendNotice(*fallback);
        QVERIFY2(notice.find("CPU") != std::string::npos, notice.c_str());
        QVERIFY(fallback->fellBack());

        VulkanBackendOptions alone;
        alone.fault = o.vulkan.fault;
        auto vulkan = VulkanBackend::create(alone);
        QVERIFY2(vulkan, vulkan ? "" : vulkan.message().c_str());
        auto failed = model->forward(*source, *target, **vulkan);
        QVERIFY(!failed);
        QCOMPARE(failed.kind(), ErrorKind::DeviceLost);
    }

    // The pipelines' cache: written when a backend goes, given to the driver at the next start
    // where its header names this device and driver; a file of another device, a truncated or
    // foreign one is ignored (the backend starts and computes all the same) and replaced.
    void pipelinesComeFromTheCacheAtTheNextStart()
    {
        QTemporaryDir dir;
        VulkanBackendOptions options;
        options.validation = true;
        options.pipelineCacheDir = (dir.path() + "/cache").toStdString(); // made where missing
        std::string file;
        vk::DeviceInfo info;
        {
            auto first = VulkanBackend::create(options);
            QVERIFY2(first, first ? "" : first.message().c_str());
            QCOMPARE((*first)->pipelineCacheLoadedBytes(), std::uint64_t(0)); // no file yet
            info = (*first)->deviceInfo();
            file = vk::pipelineCacheFile(options.pipelineCacheDir, info);
            QVERIFY(!QFileInfo::exists(QString::fromStdString(file)));
        }
        const QByteArray saved = test::readAll(QString::fromStdString(file));
        const auto bytes = [](const QByteArray &b) {
            return std::span<const unsigned char>(reinterpret_cast<const unsigned char *>(b.data()),
                                                  std::size_t(b.size()));
        };
        QVERIFY2(vk::pipelineCacheFits(bytes(saved), info), qPrintable(QString::number(saved.size())));

        auto model = TransformerModel::load(test::sourcePath("tests/fixtures/models/gpt2-f32").toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto input = model->input({1, 2, 3});
        QVERIFY(input);
        CpuBackend cpu;
        auto expected = model->forward(*input, cpu);
        QVERIFY(expected);
        QByteArray foreign = saved, truncated = saved.left(20);
        foreign[16] = char(foreign[16] ^ 0x5a); // another driver's pipelineCacheUUID
        for (const QByteArray &content : {saved, foreign, truncated}) {
            QFile f(QString::fromStdString(file));
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(content);
            f.close();
            {
                auto backend = VulkanBackend::create(options);
                QVERIFY2(backend, backend ? "" : backend.message().c_str());
                QCOMPARE((*backend)->pipelineCacheLoadedBytes(), std::uint64_t(content == saved ? saved.size() : 0));
                auto run = model->forward(*input, **backend);
                QVERIFY2(run, run ? "" : run.message().c_str());
                for (std::size_t i = 0; i < (*expected)->attentions.size(); ++i)
                    QVERIFY(std::abs((*run)->attentions[i] - (*expected)->attentions[i]) <= 1e-4);
            }
            QVERIFY(vk::pipelineCacheFits(bytes(test::readAll(QString::fromStdString(file))), info)); // replaced
        }
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

private:
    // A validated backend batching kLayersPerSubmission layers, staging its copies or binding at
    // most `range` bytes where asked.
    static Result<std::unique_ptr<VulkanBackend>> backendWith(bool staging, qulonglong range)
    {
        VulkanBackendOptions options;
        options.validation = true;
        options.forceStaging = staging;
        options.maxStorageBufferRange = range;
        options.layersPerSubmission = kLayersPerSubmission;
        return VulkanBackend::create(options);
    }

    void checkFamily(const QString &folder, VulkanBackend &vulkan, bool staging)
    {
        auto model = TransformerModel::load(test::sourcePath("tests/fixtures/" + folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        std::vector<std::int32_t> ids;
        for (int i = 0; i < 21; ++i)
            ids.push_back(std::int32_t((i * 37 + 5) % model->config().vocabSize));
        auto input = model->input(ids);
        QVERIFY2(input, input ? "" : input.message().c_str());

        ForwardEngine *engine = vulkan.forwardEngine();
        QVERIFY(engine != nullptr);
        QVERIFY(engine->runs(*model, ForwardKeep{}));
        const DeviceTransfers start = *vulkan.transfers();
        QVERIFY2(engine->load(*model), "load");
        const DeviceTransfers loaded = delta(*vulkan.transfers(), start);
        QCOMPARE(loaded.uploaded, weightBytes(model->weights()));
        QCOMPARE(loaded.readBack, std::uint64_t(0));
        QCOMPARE(loaded.submissions, std::uint64_t(staging ? 1 : 0)); // the staging copies, under 256 MiB

        CpuBackend cpu;
        LayerLoopEngine cpuEngine(cpu);
        auto onCpu = cpuEngine.forward(*model, *input, ForwardKeep{});
        QVERIFY2(onCpu, onCpu ? "" : onCpu.message().c_str());
        for (int pass = 0; pass < 2; ++pass) { // the second finds everything on the device
            const DeviceTransfers before = *vulkan.transfers();
            auto onGpu = model->forward(*input, vulkan);
            QVERIFY2(onGpu, onGpu ? "" : onGpu.message().c_str());
            const DeviceTransfers work = delta(*vulkan.transfers(), before);
            const ModelConfig &c = model->config();
            const std::uint64_t t = ids.size(), L = std::uint64_t(c.layers), h = std::uint64_t(c.heads),
                                d = std::uint64_t(c.width);
            QCOMPARE(work.submissions, (L + kLayersPerSubmission - 1) / kLayersPerSubmission);
            QCOMPARE(work.uploaded, inputBytes(*model, std::int64_t(t)));
            QCOMPARE(work.readBack, (L * h * t * t + (L + 1) * t * d) * 4);

            const ModelRun &g = **onGpu, &r = **onCpu;
            QCOMPARE(g.attentions.size(), r.attentions.size());
            for (std::size_t i = 0; i < r.attentions.size(); ++i)
                QVERIFY2(std::abs(g.attentions[i] - r.attentions[i]) <= 1e-4,
                         qPrintable(QStringLiteral("attentions[%1]: %2 on Vulkan, %3 on the CPU")
                                        .arg(i)
                                        .arg(g.attentions[i])
                                        .arg(r.attentions[i])));
            QCOMPARE(g.hiddenStates.size(), r.hiddenStates.size());
            for (std::size_t l = 0; l < r.hiddenStates.size(); ++l) {
                const std::string diff =
                    test::compareMatrix("hidden state", g.hiddenStates[l], r.hiddenStates[l], {1e-3, 1e-3});
                QVERIFY2(diff.empty(), (std::to_string(l) + ": " + diff).c_str());
            }
            QCOMPARE(g.attentionInputs.size(), r.attentionInputs.size());
            for (std::size_t l = 0; l < r.attentionInputs.size(); ++l) {
                const std::string diff =
                    test::compareMatrix("attention input", g.attentionInputs[l], r.attentionInputs[l], {1e-3, 1e-3});
                QVERIFY2(diff.empty(), (std::to_string(l) + ": " + diff).c_str());
            }
            QCOMPARE(g.scales, r.scales);
            QCOMPARE(g.tokens, r.tokens);
        }
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

    static constexpr std::uint32_t kLayersPerSubmission = 2;
    std::unique_ptr<VulkanBackend> m_vulkan;
};

QTEST_GUILESS_MAIN(TestVulkanForward)
#include "tst_vulkan_forward.moc"
