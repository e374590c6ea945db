// Today's decoder models (design.md, "today's decoder models"): the tiny random-weight folders of
// tests/fixtures/decoders (one per family and setting, F32, F16 and BF16, one sharded), run on
// the CPU engine against a float64 reference forward written from transformers' code
// (tests/fixtures/decoder_reference.py), and malformed folders refused in one line.

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/RandomProblem.h"
#include "core/formats/Npy.h"
#include "core/models/ModelTensors.h"
#include "core/models/TransformerModel.h"
#include "core/models/WeightMatrix.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace attnscope;

namespace {

const char *const kFolders[] = {
    "llama3-f32", "smollm-bf16-sharded", "llama-f16-dynamic", "mistral-f16", "qwen2-bf16-yarn",
    "qwen3-f32",  "gemma2-bf16",         "gemma3text-f16",    "gemma3-f32",  "qwen2-f32-rope-params"};

QString fixture(const QString &name)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/decoders/") + name);
}

// The F16 bits of v, for values that F16 holds exactly (the test's random values rounded first).
std::uint16_t floatToHalfExact(float &v)
{
    v = std::round(v * 256.0f) / 256.0f; // |v| < 8: 11 significant bits suffice
    if (v == 0.0f)
        return 0;
    const std::uint16_t sign = v < 0 ? 0x8000 : 0;
    float a = std::abs(v);
    int exponent = 0;
    const float mantissa = std::frexp(a, &exponent); // a = mantissa·2^exponent, mantissa in [0.5, 1)
    const int e = exponent - 1 + 15;                 // a = 1.f·2^(exponent-1)
    const std::uint16_t fraction = std::uint16_t(std::lround((mantissa * 2.0f - 1.0f) * 1024.0f));
    return std::uint16_t(sign | (e << 10) | fraction);
}

// A stored matrix as a checkpoint holds it in `dtype` (little-endian), and the float32 values
// that converting it must give back.
struct StoredBytes {
    std::vector<unsigned char> bytes;
    MatrixF exact;
};

StoredBytes storedAs(const QString &dtype, const MatrixF &stored)
{
    StoredBytes out;
    out.exact.resize(stored.rows(), stored.cols());
    for (Eigen::Index i = 0; i < stored.size(); ++i) {
        float v = stored.data()[i];
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        if (dtype == "F32") {
            for (int b = 0; b < 4; ++b)
                out.bytes.push_back((bits >> (8 * b)) & 0xff);
        } else {
            // BF16: the top half; F16: a value exactly representable (a multiple of 1/256, small).
            const std::uint16_t half = dtype == "BF16" ? std::uint16_t(bits >> 16) : floatToHalfExact(v);
            out.bytes.push_back(half & 0xff);
            out.bytes.push_back(half >> 8);
            const std::uint32_t wide = std::uint32_t(half) << 16;
            std::memcpy(&v, &wide, 4);
            if (dtype == "F16")
                v = halfToFloat(half);
        }
        out.exact.data()[i] = v;
    }
    return out;
}

// Bytes in a file mapped privately, as a checkpoint is: released pages come back from the
// file (released pages of heap memory would come back as zeros). Mapped while the pointer lives.
std::shared_ptr<const unsigned char> mapBytes(const std::vector<unsigned char> &bytes, const QString &path)
{
    auto file = std::make_shared<QFile>(path);
    const qint64 size = qint64(bytes.size());
    if (!file->open(QIODevice::WriteOnly) || file->write(reinterpret_cast<const char *>(bytes.data()), size) != size)
        return nullptr;
    file->close();
    if (!file->open(QIODevice::ReadOnly))
        return nullptr;
    const uchar *data = file->map(0, size, QFileDevice::MapPrivateOption);
    if (!data)
        return nullptr;
    return std::shared_ptr<const unsigned char>(data, [file](const unsigned char *) {}); // unmapped with the file
}

// x·M in double, the reference the products are held to.
MatrixD productInDouble(const MatrixF &x, const MatrixF &m)
{
    return x.cast<double>() * m.cast<double>();
}

// ||got - want|| / ||want|| (Frobenius).
double relativeError(const MatrixF &got, const MatrixD &want)
{
    return (got.cast<double>() - want).norm() / std::max(want.norm(), 1e-300);
}

} // namespace

class TestDecoders : public QObject
{
    Q_OBJECT

private slots:
    void forwardMatchesReference_data();
    void forwardMatchesReference();
    void layerProblemReproducesEachLayer_data();
    void layerProblemReproducesEachLayer();
    void layerFactsSayHowEachLayerAttends();
    void configDefaultsAreTransformers_data();
    void configDefaultsAreTransformers();
    void malformedFolderIsRefusedWithOneLine_data();
    void malformedFolderIsRefusedWithOneLine();
    void idsBeyondTheVocabularyAreRefused();
    void wordsComeFromTheTokenizer();
    void mappedWeightsMultiplyAsInMemory_data();
    void mappedWeightsMultiplyAsInMemory();
    void fewRowProductsEqualDouble_data();
    void fewRowProductsEqualDouble();
    void fewRowProductsOfALargeWeight_data();
    void fewRowProductsOfALargeWeight();
    void everyHalfConvertsAsHalfToFloat();
};

void TestDecoders::forwardMatchesReference_data()
{
    QTest::addColumn<QString>("folder");
    for (const char *name : kFolders)
        QTest::newRow(name) << QString(name);
}

void TestDecoders::forwardMatchesReference()
{
    QFETCH(QString, folder);
    const test::ExpectedForward expected = test::readExpectedForward(fixture(folder));
    auto model = TransformerModel::load(fixture(folder).toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    auto input = model->input(expected.ids);
    QVERIFY2(input, input ? "" : input.message().c_str());
    CpuBackend cpu;
    auto run = model->forward(*input, cpu);
    QVERIFY2(run, run ? "" : run.message().c_str());
    const ModelRun &r = **run;
    const ModelConfig &c = model->config();
    const std::int64_t t = std::int64_t(expected.ids.size());
    QCOMPARE(expected.attentions.shape, (std::vector<std::int64_t>{c.layers, c.heads, t, t}));
    QCOMPARE(expected.hidden.shape, (std::vector<std::int64_t>{c.layers + 1, t, c.width}));
    const QString attention = test::compareValues("attentions", r.attentions.data(), expected.attentions, 1e-4, 0);
    QVERIFY2(attention.isEmpty(), qPrintable(attention));
    std::vector<float> hidden;
    for (const MatrixF &h : r.hiddenStates)
        hidden.insert(hidden.end(), h.data(), h.data() + h.size());
    const QString states = test::compareValues("hidden_states", hidden.data(), expected.hidden, 1e-3, 1e-3);
    QVERIFY2(states.isEmpty(), qPrintable(states));
    auto logits = model->logits(r.hiddenStates.back());
    QVERIFY2(logits, logits ? "" : logits.message().c_str());
    QCOMPARE(expected.logits.shape, (std::vector<std::int64_t>{t, c.vocabSize}));
    const QString next = test::compareValues("logits", logits->data(), expected.logits, 1e-3, 1e-3);
    QVERIFY2(next.isEmpty(), qPrintable(next));
}

void TestDecoders::layerProblemReproducesEachLayer_data()
{
    forwardMatchesReference_data();
}

// Each layer's problem as the run keeps it (RoPE and its scaling, q/k norms, window, soft-cap)
// computes that layer's maps again, so a head opened in the editor is the head the run showed.
void TestDecoders::layerProblemReproducesEachLayer()
{
    QFETCH(QString, folder);
    auto model = TransformerModel::load(fixture(folder).toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    CpuBackend cpu;
    auto run = model->forward(*model->input(test::readExpectedForward(fixture(folder)).ids), cpu);
    QVERIFY(run);
    for (int l = 0; l < (*run)->layers; ++l) {
        auto trace = cpu.compute(layerProblem(**run, l));
        QVERIFY2(trace, trace ? "" : trace.message().c_str());
        for (int h = 0; h < (*run)->heads; ++h)
            QVERIFY(trace->weights[std::size_t(h)].isApprox(MatrixF((*run)->attention(l, h)), 1e-6f));
        auto head = cpu.compute(headProblem(**run, l, 1));
        QVERIFY2(head, head ? "" : head.message().c_str());
        QVERIFY(head->weights[0].isApprox(MatrixF((*run)->attention(l, 1)), 1e-5f));
    }
}

void TestDecoders::layerFactsSayHowEachLayerAttends()
{
    // Gemma 2 slides on its even layers (window 4); every layer has 4 query heads on 2 groups.
    auto model = TransformerModel::load(fixture("gemma2-bf16").toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    CpuBackend cpu;
    auto run = model->forward(*model->input(test::readExpectedForward(fixture("gemma2-bf16")).ids), cpu);
    QVERIFY(run);
    auto set = attentionSetFromRun(*run);
    QVERIFY(set);
    QCOMPARE(set->layerFacts.size(), std::size_t(3));
    for (int l = 0; l < 3; ++l) {
        QCOMPARE(set->facts(l).queryHeads, 4);
        QCOMPARE(set->facts(l).kvHeads, 2);
        QCOMPARE(set->facts(l).window, std::int64_t(l % 2 == 0 ? 4 : 0));
        QVERIFY(std::abs(set->facts(l).scale - 1.0 / std::sqrt(24.0)) < 1e-12); // query_pre_attn_scalar
    }
    // The window shows in the maps: nothing beyond 4 keys back on a sliding layer.
    QCOMPARE((*run)->attention(0, 0)(10, 6), 0.0f);
    QVERIFY((*run)->attention(1, 0)(10, 6) > 0.0f);
}

void TestDecoders::configDefaultsAreTransformers_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");
    // layers, heads, kvHeads, width, headDim, intermediate, vocab, tie, windows of the first layers
    QTest::newRow("llama") << R"({"model_type": "llama"})"
                           << "32 32 32 4096 128 11008 32000 0 0,0";
    QTest::newRow("mistral") << R"({"model_type": "mistral"})"
                             << "32 32 8 4096 128 14336 32000 0 4096,4096";
    QTest::newRow("qwen2") << R"({"model_type": "qwen2"})"
                           << "32 32 32 4096 128 22016 151936 0 0,0";
    QTest::newRow("qwen2 sliding") << R"({"model_type": "qwen2", "use_sliding_window": true, "max_window_layers": 1})"
                                   << "32 32 32 4096 128 22016 151936 0 0,4096";
    QTest::newRow("qwen3") << R"({"model_type": "qwen3"})"
                           << "32 32 32 4096 128 22016 151936 0 0,0";
    QTest::newRow("gemma2") << R"({"model_type": "gemma2"})"
                            << "26 8 4 2304 256 9216 256000 1 4096,0";
    QTest::newRow("gemma3_text") << R"({"model_type": "gemma3_text", "num_hidden_layers": 7})"
                                 << "7 8 4 2304 256 9216 262208 1 4096,4096,4096,4096,4096,0,4096";
    QTest::newRow("gemma3") << R"({"model_type": "gemma3", "text_config": {"num_hidden_layers": 2}})"
                            << "2 8 4 2304 256 9216 262208 1 4096,4096";
}

void TestDecoders::configDefaultsAreTransformers()
{
    QFETCH(QString, json);
    QFETCH(QString, expected);
    auto c = parseModelConfig(json.toStdString(), "c.json");
    QVERIFY2(c, c ? "" : c.message().c_str());
    QStringList windows;
    for (std::int64_t w : c->windows)
        windows << QString::number(w);
    const QString got = QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9")
                            .arg(c->layers)
                            .arg(c->heads)
                            .arg(c->keyValueHeads())
                            .arg(c->width)
                            .arg(c->headDim())
                            .arg(c->intermediate)
                            .arg(c->vocabSize)
                            .arg(int(c->tieWordEmbeddings))
                            .arg(windows.join(','));
    QVERIFY2(expected.startsWith(got.left(expected.size())) || got.startsWith(expected), qPrintable(got));
}

void TestDecoders::malformedFolderIsRefusedWithOneLine_data()
{
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("kind");
    const int invalid = int(ErrorKind::InvalidInput), io = int(ErrorKind::Io),
              unsupported = int(ErrorKind::Unsupported);
    QTest::newRow("unknown rope type") << "llama3-f32"
                                       << R"(config rope_scaling {"rope_type":"longrope","factor":2})"
                                       << "rope_scaling.rope_type \"longrope\" is not supported" << unsupported;
    QTest::newRow("unknown layer type")
        << "gemma3text-f16"
        << R"(config layer_types ["sliding_attention","linear_attention","full_attention"])"
        << "layer_types[1] \"linear_attention\" is not supported" << unsupported;
    QTest::newRow("layer types miscounted") << "gemma3text-f16"
                                            << R"(config layer_types ["full_attention"])"
                                            << "layer_types: expected 3 entries" << invalid;
    QTest::newRow("mixture of experts") << "qwen3-f32"
                                        << "config num_experts 8"
                                        << "num_experts: mixture-of-experts layers are not supported" << unsupported;
    QTest::newRow("gemma 3 soft-cap") << "gemma3text-f16"
                                      << "config attn_logit_softcapping 50"
                                      << "attn_logit_softcapping: Gemma 3 does not soft-cap attention" << unsupported;
    QTest::newRow("yarn without factor") << "qwen2-bf16-yarn"
                                         << R"(config rope_scaling {"rope_type":"yarn"})"
                                         << "rope_scaling.factor: missing" << invalid;
    QTest::newRow("missing shard") << "smollm-bf16-sharded"
                                   << "rm model-00002-of-00002.safetensors"
                                   << "model-00002-of-00002.safetensors: no such file (a shard "
                                      "model.safetensors.index.json names)"
                                   << io;
    QTest::newRow("index names a missing tensor")
        << "smollm-bf16-sharded"
        << "index model.layers.9.mlp.up_proj.weight model-00002-of-00002.safetensors"
        << "model.safetensors.index.json: model.layers.9.mlp.up_proj.weight: not in model-00002-of-00002.safetensors"
        << invalid;
    QTest::newRow("index leads out of the folder") << "smollm-bf16-sharded"
                                                   << "index model.norm.weight ../x.safetensors"
                                                   << "weight_map.model.norm.weight: expected a file name" << invalid;
    QTest::newRow("no tokenizer") << "qwen3-f32"
                                  << "rm tokenizer.json"
                                  << "tokenizer.json: no such file" << io;
    QTest::newRow("no weights") << "mistral-f16"
                                << "rm model.safetensors"
                                << "model.safetensors: no such file" << io;
    QTest::newRow("wrong shape") << "qwen3-f32"
                                 << "config head_dim 8"
                                 << "self_attn.q_proj.weight: expected 32 x 32, found 64 x 32" << invalid;
    QTest::newRow("untied head missing") << "smollm-bf16-sharded"
                                         << "config tie_word_embeddings false"
                                         << "no tensor lm_head.weight" << invalid;
    QTest::newRow("kv heads do not divide")
        << "llama3-f32"
        << "config num_key_value_heads 3"
        << "num_attention_heads 4 is not divisible by num_key_value_heads 3" << invalid;
}

void TestDecoders::malformedFolderIsRefusedWithOneLine()
{
    QFETCH(QString, base);
    QFETCH(QString, mutation);
    QFETCH(QString, expected);
    QFETCH(int, kind);
    QTemporaryDir tmp;
    const QString dir = tmp.filePath("m");
    test::copyFolder(fixture(base), dir);
    QVERIFY(test::mutateFolder(dir, mutation));
    test::checkRefusedInOneLine(dir, expected, kind);
}

void TestDecoders::idsBeyondTheVocabularyAreRefused()
{
    auto model = TransformerModel::load(fixture("qwen3-f32").toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    const int vocab = model->config().vocabSize;
    auto beyond = model->input({1, vocab});
    QVERIFY(!beyond);
    QCOMPARE(beyond.message(), "ids[1]: " + std::to_string(vocab) + " is not in the vocabulary (ids from 0 to " +
                                   std::to_string(vocab - 1) + ")");
    // RoPE has no position table: more ids than max_position_embeddings are taken.
    const int positions = model->config().positions;
    QVERIFY(model->input(std::vector<std::int32_t>(std::size_t(positions) + 1, 1)));
}

// The views merge tokens into words by the tokenizer's own boundaries as well as the labels': a
// special token stands alone, and pieces the tokenizer cut apart never merge.
void TestDecoders::wordsComeFromTheTokenizer()
{
    auto model = TransformerModel::load(fixture("gemma3text-f16").toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    const QString text = test::readExpectedForward(fixture("gemma3text-f16")).text;
    auto input = model->encode(text.toStdString());
    QVERIFY2(input, input ? "" : input.message().c_str());
    QCOMPARE(input->words.size(), input->ids.size());
    QCOMPARE(input->words.front(), -1); // the <bos> the post-processor adds
    CpuBackend cpu;
    auto run = model->forward(*input, cpu);
    QVERIFY(run);
    QCOMPARE((*run)->words, input->words);
    auto set = attentionSetFromRun(*run);
    QVERIFY(set);
    for (std::size_t i = 1; i < input->words.size(); ++i)
        if (input->words[i] < 0 || input->words[i] != input->words[i - 1])
            QVERIFY(set->queryWordOf[i] != set->queryWordOf[i - 1]); // the tokenizer's boundary holds
    // Told directly: -1 is a word of its own; one word everywhere keeps the labels' words.
    const std::vector<int> fromLabels = set->queryWordOf;
    QVERIFY(set->setTokenWords(std::vector<std::int32_t>(input->ids.size(), 0)));
    QCOMPARE(set->queryWordOf, fromLabels);
    std::vector<std::int32_t> words(input->ids.size(), -1);
    QVERIFY(set->setTokenWords(words));
    QCOMPARE(set->queryWordOf.back(), int(words.size()) - 1);
    QVERIFY(!set->setTokenWords({0}));
}

void TestDecoders::mappedWeightsMultiplyAsInMemory_data()
{
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<bool>("transposed");
    for (const char *dtype : {"F32", "F16", "BF16"})
        for (bool transposed : {false, true})
            QTest::addRow("%s%s", dtype, transposed ? " stored transposed (Linear)" : "")
                << QString(dtype) << transposed;
}

// A weight kept mapped in its stored dtype and converted a block of stored rows at a time gives
// the products, rows and checks of the same matrix held in float32, across block seams.
void TestDecoders::mappedWeightsMultiplyAsInMemory()
{
    QFETCH(QString, dtype);
    QFETCH(bool, transposed);
    const Eigen::Index rows = 37, cols = 23; // M as used; stored cols x rows when transposed
    const MatrixF stored = initMatrix(transposed ? cols : rows, transposed ? rows : cols, InitKind::Gaussian, 7, 1.0);
    // The bytes as the checkpoint holds them, and M as the conversion must read it back.
    StoredBytes held = storedAs(dtype, stored);
    std::vector<unsigned char> &bytes = held.bytes;
    const MatrixF &exact = held.exact;
    const MatrixF m = transposed ? MatrixF(exact.transpose()) : exact;
    WeightMatrix w =
        WeightMatrix::mapped(bytes.data(), dtype.toStdString(), stored.rows(), stored.cols(), transposed, nullptr);
    w.setBlockBytes(5 * stored.cols() * 4); // five stored rows a block: seams inside every product
    QCOMPARE(w.rows(), rows);
    QCOMPARE(w.cols(), cols);
    QVERIFY(w.toFloat() == m);
    const MatrixF x = initMatrix(4, rows, InitKind::Gaussian, 8, 1.0),
                  xt = initMatrix(4, cols, InitKind::Gaussian, 9, 1.0);
    QVERIFY(w.product(x).isApprox(MatrixF(x * m), 1e-6f));
    QVERIFY(w.productTransposed(xt).isApprox(MatrixF(xt * m.transpose()), 1e-6f));
    // Enough rows for the chunks to be shared between threads (over ~8 MFLOP).
    const MatrixF tall = initMatrix(6000, rows, InitKind::Gaussian, 10, 1.0),
                  tallT = initMatrix(6000, cols, InitKind::Gaussian, 11, 1.0);
    QVERIFY(w.product(tall).isApprox(MatrixF(tall * m), 1e-6f));
    QVERIFY(w.productTransposed(tallT).isApprox(MatrixF(tallT * m.transpose()), 1e-6f));
    if (!transposed)
        QVERIFY(w.row(5) == m.row(5));
    QVERIFY(w.checkFinite());
    // One value made infinite is found and named by its stored index.
    const std::size_t at = std::size_t(dtype == "F32" ? 4 : 2) * 30;
    if (dtype == "F32") {
        const float inf = std::numeric_limits<float>::infinity();
        std::memcpy(&bytes[at], &inf, 4);
    } else {
        bytes[at] = 0x00;
        bytes[at + 1] = dtype == "BF16" ? 0x7f : 0x7c;
        if (dtype == "BF16")
            bytes[at] = 0x80;
    }
    const Status bad = w.checkFinite();
    QVERIFY(!bad);
    QVERIFY2(bad.message().find("value 30 is not a finite float32") == 0, bad.message().c_str());
}

void TestDecoders::fewRowProductsEqualDouble_data()
{
    mappedWeightsMultiplyAsInMemory_data();
}

// Up to kFewRows rows of x (a generation step) take a mapped weight one stored row at a time:
// the products equal those of its float32 values in double, for 1 to 8 rows.
void TestDecoders::fewRowProductsEqualDouble()
{
    QFETCH(QString, dtype);
    QFETCH(bool, transposed);
    const Eigen::Index rows = 37, cols = 23;
    const MatrixF stored = initMatrix(transposed ? cols : rows, transposed ? rows : cols, InitKind::Gaussian, 12, 1.0);
    const StoredBytes held = storedAs(dtype, stored);
    const WeightMatrix w =
        WeightMatrix::mapped(held.bytes.data(), dtype.toStdString(), stored.rows(), stored.cols(), transposed, nullptr);
    const MatrixF m = w.toFloat();
    QVERIFY(m == (transposed ? MatrixF(held.exact.transpose()) : held.exact));
    for (Eigen::Index n = 1; n <= WeightMatrix::kFewRows; ++n) {
        const MatrixF x = initMatrix(n, rows, InitKind::Gaussian, 20 + n, 1.0),
                      xt = initMatrix(n, cols, InitKind::Gaussian, 40 + n, 1.0);
        const MatrixF y = w.product(x), yt = w.productTransposed(xt);
        QCOMPARE(y.rows(), n);
        QCOMPARE(y.cols(), cols);
        QCOMPARE(yt.rows(), n);
        QCOMPARE(yt.cols(), rows);
        const double e = relativeError(y, productInDouble(x, m)),
                     et = relativeError(yt, productInDouble(xt, MatrixF(m.transpose())));
        QVERIFY2(e <= 1e-5 && et <= 1e-5,
                 qPrintable(QStringLiteral("%1 rows: x·M off by %2, x·Mᵀ by %3 (relative)").arg(n).arg(e).arg(et)));
    }
}

void TestDecoders::fewRowProductsOfALargeWeight_data()
{
    mappedWeightsMultiplyAsInMemory_data();
}

// A weight large enough for the few-row products to share it between threads, and over the
// block size, so that each chunk's pages are released after use: mapped from a file, the
// released pages come back for the next product, which gives the same numbers.
void TestDecoders::fewRowProductsOfALargeWeight()
{
    QFETCH(QString, dtype);
    QFETCH(bool, transposed);
    const Eigen::Index rows = 640, cols = 1700; // 1.09 million multiply-adds a row of x
    const MatrixF stored = initMatrix(transposed ? cols : rows, transposed ? rows : cols, InitKind::Gaussian, 13, 1.0);
    const StoredBytes held = storedAs(dtype, stored);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto mapped = mapBytes(held.bytes, dir.filePath(QStringLiteral("weight.bin")));
    QVERIFY(mapped);
    WeightMatrix w =
        WeightMatrix::mapped(mapped.get(), dtype.toStdString(), stored.rows(), stored.cols(), transposed, mapped);
    w.setBlockBytes(64 << 10); // about ten stored rows a chunk
    const MatrixF m = transposed ? MatrixF(held.exact.transpose()) : held.exact;
    for (const Eigen::Index n : {Eigen::Index(1), Eigen::Index(3), WeightMatrix::kFewRows}) {
        const MatrixF x = initMatrix(n, rows, InitKind::Gaussian, 60 + n, 1.0),
                      xt = initMatrix(n, cols, InitKind::Gaussian, 80 + n, 1.0);
        const MatrixD want = productInDouble(x, m), wantT = productInDouble(xt, MatrixF(m.transpose()));
        for (int pass = 0; pass < 2; ++pass) {
            const double e = relativeError(w.product(x), want), et = relativeError(w.productTransposed(xt), wantT);
            QVERIFY2(e <= 1e-5 && et <= 1e-5,
                     qPrintable(QStringLiteral("%1 rows, pass %2: x·M off by %3, x·Mᵀ by %4 (relative)")
                                    .arg(n)
                                    .arg(pass)
                                    .arg(e)
                                    .arg(et)));
        }
    }
}

// F16 is converted by a branch-free loop (so that it vectorises): every one of the 65536 bit
// patterns, NaNs, infinities and subnormals included, gives halfToFloat's float exactly.
void TestDecoders::everyHalfConvertsAsHalfToFloat()
{
    std::vector<unsigned char> bytes;
    for (std::uint32_t h = 0; h < 65536; ++h) {
        bytes.push_back(h & 0xff);
        bytes.push_back(h >> 8);
    }
    const MatrixF m = WeightMatrix::mapped(bytes.data(), "F16", 256, 256, false, nullptr).toFloat();
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float want = halfToFloat(std::uint16_t(h));
        if (std::memcmp(&want, m.data() + h, 4) != 0)
            QFAIL(qPrintable(QStringLiteral("half 0x%1: %2, halfToFloat %3").arg(h, 4, 16).arg(m.data()[h]).arg(want)));
    }
}

QTEST_GUILESS_MAIN(TestDecoders)
#include "tst_decoders.moc"
