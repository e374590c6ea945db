// attnscope-cli model MODEL_DIR (--text | --ids) --out DIR: tokens.json, attentions.npy and
// hidden_states.npy against the float64 NumPy reference of tests/fixtures/make_model_fixtures.py;
// stats and export --tensor rollout of a model folder with --text; --verbose's Vulkan transfers;
// and its refusals.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "../gpu/VulkanTestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnscope;

namespace {

// "gpt2-f32" (tests/fixtures/models) or "decoders/qwen3-f32" (tests/fixtures/decoders).
QString fixture(const QString &name)
{
    return test::sourcePath((name.contains('/') ? "tests/fixtures/" : "tests/fixtures/models/") + name);
}

QJsonObject expectedJson(const QString &model)
{
    return QJsonDocument::fromJson(test::readAll(fixture(model) + "/expected.json")).object();
}

QString idsArgument(const QJsonArray &ids)
{
    QStringList parts;
    for (const auto &v : ids)
        parts << QString::number(v.toInt());
    return parts.join(',');
}

// Empty when got has ref's shape and every value within absolute + relative·|ref|.
QString compare(const QString &path, const NpyArray &ref, double absolute, double relative)
{
    auto got = readNpyFile(path.toStdString());
    if (!got)
        return QString::fromStdString(got.message());
    if (got->shape != ref.shape)
        return path + ": not the reference's shape";
    for (std::int64_t i = 0; i < ref.size(); ++i) {
        const double g = got->data[std::size_t(i)], r = ref.data[std::size_t(i)];
        if (!std::isfinite(g) || std::abs(g - r) > absolute + relative * std::abs(r))
            return QStringLiteral("%1[%2]: %3, expected %4").arg(path).arg(i).arg(g).arg(r);
    }
    return {};
}

NpyArray reference(const QString &model, const char *name)
{
    return *readNpyFile((fixture(model) + "/expected_" + name + ".npy").toStdString());
}

} // namespace

class TestModelCli : public QObject
{
    Q_OBJECT

private slots:
    void writesTheReferenceTensors_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("fromText");
        QTest::newRow("gpt2 f32 text") << "gpt2-f32" << true;
        QTest::newRow("gpt2 bf16 ids") << "gpt2-bf16" << false;
        QTest::newRow("bert f16 text") << "bert-f16" << true;
        QTest::newRow("bert f32 ids") << "bert-f32" << false;
        QTest::newRow("qwen3 f32 ids") << "decoders/qwen3-f32" << false;
        QTest::newRow("gemma2 bf16 ids") << "decoders/gemma2-bf16" << false;
        QTest::newRow("llama sharded bf16 ids") << "decoders/smollm-bf16-sharded" << false;
    }

    void writesTheReferenceTensors()
    {
        QFETCH(QString, model);
        QFETCH(bool, fromText);
        const QJsonObject expected = expectedJson(model);
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run");
        QStringList args = {"model", fixture(model), "--out", out, "--backend", "cpu"};
        args << (fromText ? "--text" : "--ids")
             << (fromText ? expected["text"].toString() : idsArgument(expected["ids"].toArray()));
        const auto r = test::runCli(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("backend: cpu"), qPrintable(r.out));
        const QJsonObject tokens = QJsonDocument::fromJson(test::readAll(out + "/tokens.json")).object();
        QCOMPARE(tokens.keys(), (QStringList{"ids", "tokens"}));
        QCOMPARE(tokens["ids"].toArray(), expected["ids"].toArray());
        QCOMPARE(tokens["tokens"].toArray(), expected["tokens"].toArray());
        const QString attentions = compare(out + "/attentions.npy", reference(model, "attentions"), 1e-4, 0);
        QVERIFY2(attentions.isEmpty(), qPrintable(attentions));
        const QString hidden = compare(out + "/hidden_states.npy", reference(model, "hidden_states"), 1e-3, 1e-3);
        QVERIFY2(hidden.isEmpty(), qPrintable(hidden));
        QCOMPARE(QDir(out).entryList(QDir::Files | QDir::Hidden).size(), 3); // nothing else, no staging left
    }

    // design.md: with --verbose and a Vulkan backend, `vulkan: submissions N, uploaded U bytes,
    // read back R bytes` for the forward. The forward engine (gpu/VulkanForward.h) submits a batch
    // of four layers at a time (and, where device memory is not mapped, the weights' staging
    // copies at load), uploads the weights once and reads back exactly the attentions and hidden
    // states written; the CPU prints no such line.
    void verboseReportsVulkanTransfers()
    {
        ATTNSCOPE_SKIP_WITHOUT_VULKAN();
        const QString model = "gpt2-f32";
        const QJsonObject expected = expectedJson(model);
        const int layers = int(reference(model, "attentions").shape[0]);
        QTemporaryDir tmp;
        const QStringList args = {"model", fixture(model),      "--ids",     idsArgument(expected["ids"].toArray()),
                                  "--out", tmp.filePath("run"), "--verbose", "--backend"};
        auto r = test::runCli(QStringList(args) << "vulkan");
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("backend: vulkan"), qPrintable(r.out));
        const QStringList lines = r.out.split('\n').filter(QStringLiteral("vulkan: submissions "));
        QVERIFY2(lines.size() == 1, qPrintable(r.out));
        // "vulkan: submissions N, uploaded U bytes, read back R bytes": the numbers, then the whole line.
        const QStringList words = lines.front().split(' ');
        QVERIFY2(words.size() == 10, qPrintable(lines.front()));
        const qulonglong submissions = words[2].chopped(1).toULongLong(), uploaded = words[4].toULongLong(),
                         readBack = words[8].toULongLong();
        QCOMPARE(lines.front(), QStringLiteral("vulkan: submissions %1, uploaded %2 bytes, read back %3 bytes")
                                    .arg(submissions)
                                    .arg(uploaded)
                                    .arg(readBack));
        const NpyArray hidden = reference(model, "hidden_states"), attentions = reference(model, "attentions");
        const qulonglong batches = qulonglong(layers + 3) / 4;
        QVERIFY2(submissions >= batches && submissions <= batches + 1, qPrintable(lines.front()));
        qulonglong kept = 1, states = 1;
        for (std::int64_t n : attentions.shape)
            kept *= qulonglong(n);
        for (std::int64_t n : hidden.shape)
            states *= qulonglong(n);
        QCOMPARE(readBack, (kept + states) * 4);
        QVERIFY2(uploaded > 0, qPrintable(lines.front())); // tst_vulkan_forward counts them exactly

        r = test::runCli({"model", fixture(model), "--ids", idsArgument(expected["ids"].toArray()), "--out",
                          tmp.filePath("cpu"), "--verbose", "--backend", "cpu"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(!r.out.contains("submissions"), qPrintable(r.out));
    }

    // Rollout recomputed here from the reference attentions (mean over heads, 0.5·A + 0.5·I
    // renormalised, A'_L ... A'_1), and stats' shape, for a model folder with --text.
    void rolloutAndStatsOfAModel()
    {
        const QString model = "gpt2-f16";
        const QJsonObject expected = expectedJson(model);
        const NpyArray att = reference(model, "attentions");
        const std::int64_t layers = att.shape[0], heads = att.shape[1], t = att.shape[2];
        MatrixD rollout = MatrixD::Identity(t, t);
        for (std::int64_t l = 0; l < layers; ++l) {
            MatrixD a = MatrixD::Zero(t, t);
            for (std::int64_t h = 0; h < heads; ++h)
                for (std::int64_t i = 0; i < t; ++i)
                    for (std::int64_t j = 0; j < t; ++j)
                        a(i, j) += att.data[std::size_t(((l * heads + h) * t + i) * t + j)] / double(heads);
            a = 0.5 * a + 0.5 * MatrixD::Identity(t, t);
            for (std::int64_t i = 0; i < t; ++i)
                a.row(i) /= a.row(i).sum();
            rollout = a * rollout;
        }
        NpyArray ref;
        ref.shape = {t, t};
        ref.data.assign(rollout.data(), rollout.data() + rollout.size());
        QTemporaryDir tmp;
        const QString text = expected["text"].toString();
        auto r = test::runCli({"export", fixture(model), "--text", text, "--tensor", "rollout", "--out",
                               tmp.filePath("rollout.npy"), "--backend", "cpu"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString diff = compare(tmp.filePath("rollout.npy"), ref, 1e-4, 0);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));

        // Any map of a model run exports like an attention file's: one (layer, head) here.
        r = test::runCli({"export", fixture(model), "--text", text, "--tensor", "weights", "--layer", "1", "--head",
                          "0", "--out", tmp.filePath("w.npy"), "--backend", "cpu"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        NpyArray head;
        head.shape = {t, t};
        for (std::int64_t i = 0; i < t * t; ++i)
            head.data.push_back(att.data[std::size_t((1 * heads + 0) * t * t + i)]);
        const QString headDiff = compare(tmp.filePath("w.npy"), head, 1e-4, 0);
        QVERIFY2(headDiff.isEmpty(), qPrintable(headDiff));

        r = test::runCli({"stats", fixture(model), "--text", text, "--out", tmp.filePath("s.json")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject stats = QJsonDocument::fromJson(test::readAll(tmp.filePath("s.json"))).object();
        QCOMPARE(stats["layers"].toInt(), int(layers));
        QCOMPARE(stats["heads"].toInt(), int(heads));
        QCOMPARE(stats["stats"].toArray().size(), int(layers * heads));
        // first = mean over rows of w_i0, from the reference.
        double first = 0;
        for (std::int64_t i = 0; i < t; ++i)
            first += att.data[std::size_t(i * t)] / double(t);
        QVERIFY(std::abs(stats["stats"].toArray()[0].toObject()["first"].toDouble() - first) < 1e-5);
    }

    // bench --model: the forward timed on T ids, nothing written; the contract's two lines.
    void benchTimesAModelForward()
    {
        const auto r = test::runCli(
            {"bench", "--model", fixture("decoders/qwen3-f32"), "--tokens", "20", "--repeat", "2", "--backend", "cpu"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("model: qwen3, 2 layers x 4 heads (1 key/value), width 32, 20 tokens"),
                 qPrintable(r.out));
        const QRegularExpression median("^median_ms (\\d+\\.\\d)$", QRegularExpression::MultilineOption);
        const QRegularExpression peak("^peak_rss_mib (\\d+\\.\\d)$", QRegularExpression::MultilineOption);
        QVERIFY2(median.match(r.out).hasMatch(), qPrintable(r.out));
        QVERIFY2(peak.match(r.out).captured(1).toDouble() > 1.0, qPrintable(r.out));
        const auto bad = test::runCli({"bench", "--model", fixture("decoders/qwen3-f32"), "--tokens", "0"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("--tokens: expected a whole number from 1"), qPrintable(bad.err));
        const auto missing = test::runCli({"bench", "--model", test::sourcePath("tests"), "--tokens", "4"});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains("config.json: no such file"), qPrintable(missing.err));
    }

    // bench --model --generate: prefill and decode timed apart, on one line; refused past the
    // model's positions and for a GPU backend (the cache runs on the CPU).
    void benchTimesGeneration()
    {
        const QString model = fixture("decoders/qwen3-f32");
        const auto r = test::runCli({"bench", "--model", model, "--tokens", "12", "--generate", "5", "--repeat", "2"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("model: qwen3, 2 layers x 4 heads (1 key/value), width 32, 12 tokens, then 5 steps"),
                 qPrintable(r.out));
        const QRegularExpression line("^T=12 N=5: prefill_ms (\\d+\\.\\d), decode_tokens_per_s (\\d+\\.\\d\\d), "
                                      "median over 2 runs, peak_rss_mib (\\d+\\.\\d)$",
                                      QRegularExpression::MultilineOption);
        const auto m = line.match(r.out);
        QVERIFY2(m.hasMatch(), qPrintable(r.out));
        QVERIFY2(m.captured(2).toDouble() > 0, qPrintable(r.out));
        QVERIFY2(m.captured(3).toDouble() > 1.0, qPrintable(r.out));

        const auto zero = test::runCli({"bench", "--model", model, "--tokens", "4", "--generate", "0"});
        QCOMPARE(zero.code, 2);
        QVERIFY2(zero.err.contains("--generate: expected a whole number from 1 to 1048576, found \"0\""),
                 qPrintable(zero.err));
        const auto past =
            test::runCli({"bench", "--model", fixture("models/gpt2-f32"), "--tokens", "30", "--generate", "2"});
        QCOMPARE(past.code, 2);
        QVERIFY2(past.err.contains("--tokens 30 and --generate 2 need 33 positions; this model has 32"),
                 qPrintable(past.err));
        const auto gpu =
            test::runCli({"bench", "--model", model, "--tokens", "4", "--generate", "2", "--backend", "vulkan"});
        QCOMPARE(gpu.code, 2);
        QVERIFY2(gpu.err.contains("--generate runs on the CPU"), qPrintable(gpu.err));
    }

    void refusals_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString gpt2 = fixture("gpt2-f32"), bert = fixture("bert-bf16");
        QTest::newRow("no input") << QStringList{"model", gpt2} << 2 << "give either --text TEXT or --ids";
        QTest::newRow("both inputs") << QStringList{"model", gpt2, "--text", "a", "--ids", "1"} << 2
                                     << "give either --text TEXT or --ids";
        QTest::newRow("bad ids") << QStringList{"model", gpt2, "--ids", "1,,2"} << 2
                                 << "--ids: expected whole numbers separated by commas, found \"\"";
        QTest::newRow("id beyond vocabulary")
            << QStringList{"model", bert, "--ids", "2,91,3"} << 1 << "--ids[1]: 91 is not in the vocabulary";
        QTest::newRow("text too long") << QStringList{"model", bert, "--text", QString("cat ").repeated(23)} << 1
                                       << "--text: the text gives 25 tokens; this model takes at most 24";
        QTest::newRow("not a model") << QStringList{"model", test::sourcePath("tests"), "--text", "a"} << 1
                                     << "config.json: no such file";
        QTest::newRow("stats without text") << QStringList{"stats", gpt2} << 1 << "a model folder needs --text";
        QTest::newRow("text on a project") << QStringList{"stats", test::example("multihead-causal"), "--text", "a"}
                                           << 1 << "--text is for a model folder";
    }

    void refusals()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        const QString out = tmp.filePath(args[0] == "model" ? "run" : "s.json");
        const auto r = test::runCli(args << "--out" << out);
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(!QFileInfo::exists(out));
        QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestModelCli)
#include "tst_model_cli.moc"
