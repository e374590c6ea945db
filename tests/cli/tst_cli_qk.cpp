// Attention from queries and keys on the command line (design.md, "Contract: attention from
// queries and keys"): `model --pool N` at T = 8192 against the float64 reference with the peak
// memory far below the full maps', `model --qk-out` then `stats` / `export` of the dump equal to
// the same run's full attentions, hand-written and PyTorch-captured dumps reproducing their numpy
// references, pooled exports, the budget's refusal naming --pool, and broken dumps refused in one
// line.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "../gpu/VulkanTestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using namespace attnscope;
using attnscope::test::runCli;

namespace {

constexpr int kLongTokens = 8192, kLongBins = 64;

// The ids tests/fixtures/make_long_fixtures.py ran the reference on.
QString longIds(int vocab)
{
    QStringList ids;
    for (int i = 0; i < kLongTokens; ++i)
        ids << QString::number((std::int64_t(i) * 7919 + 11) % vocab);
    return ids.join(',');
}

NpyArray npy(const QString &path)
{
    auto a = readNpyFile(path.toStdString());
    if (!a)
        qFatal("%s: %s", qPrintable(path), a.message().c_str());
    return *a;
}

// The largest |a - b| over two arrays of one shape (a failed QCOMPARE otherwise).
double maxDiff(const NpyArray &a, const NpyArray &b)
{
    if (a.shape != b.shape)
        return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < a.data.size(); ++i)
        worst = std::max(worst, std::abs(a.data[i] - b.data[i]));
    return worst;
}

QString decoder(const char *name)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/decoders/%1").arg(name));
}

nlohmann::json readJson(const QString &path)
{
    return nlohmann::json::parse(test::readAll(path).toStdString());
}

// Max pooling of one [Tq, Tk] map of `a` (at flat offset `offset`) into n x n cells.
std::vector<double> poolMax(const NpyArray &a, std::int64_t offset, std::int64_t tq, std::int64_t tk, std::int64_t n)
{
    std::vector<double> cells(std::size_t(n * n), 0.0);
    for (std::int64_t i = 0; i < tq; ++i)
        for (std::int64_t j = 0; j < tk; ++j) {
            // Item i is in bin b when floor(b*T/N) <= i < floor((b+1)*T/N) (core's binOf).
            double &c = cells[std::size_t((((i + 1) * n - 1) / tq) * n + ((j + 1) * n - 1) / tk)];
            c = std::max(c, a.data[std::size_t(offset + i * tk + j)]);
        }
    return cells;
}

} // namespace

class TestCliQk : public QObject
{
    Q_OBJECT

private slots:
    void longModelPooledMatchesReference_data();
    void longModelPooledMatchesReference();
    void longDumpPoolsAndSummarisesLikeTheReference();
    void dumpOfARunEqualsItsFullAttentions();
    void handWrittenDumpsReproduceTheirReference_data();
    void handWrittenDumpsReproduceTheirReference();
    void offsetPositionsMeasureStatisticsInPositions();
    void brokenDumpsAreRefusedInOneLine_data();
    void brokenDumpsAreRefusedInOneLine();
    void usageErrors_data();
    void usageErrors();
};

void TestCliQk::longModelPooledMatchesReference_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("vocab");
    QTest::addColumn<QString>("backend");
    // Llama 3 (grouped keys, llama3 RoPE scaling) attends causally over all 8192 tokens; Mistral
    // slides a window of 4.
    QTest::newRow("llama3 cpu") << "llama3-f32" << 384 << "cpu";
    QTest::newRow("mistral cpu") << "mistral-f16" << 352 << "cpu";
    QTest::newRow("llama3 vulkan") << "llama3-f32" << 384 << "vulkan";
    QTest::newRow("mistral vulkan") << "mistral-f16" << 352 << "vulkan";
}

void TestCliQk::longModelPooledMatchesReference()
{
    QFETCH(QString, model);
    QFETCH(int, vocab);
    QFETCH(QString, backend);
    if (backend == "vulkan")
        ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    QTemporaryDir dir;
    const QString out = dir.filePath("out");
    const auto r = runCli({"model", decoder(model.toUtf8().constData()), "--ids", longIds(vocab), "--out", out,
                           "--pool", QString::number(kLongBins), "--backend", backend});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: " + backend), qPrintable(r.out));
    QVERIFY(!QFile::exists(QDir(out).filePath("attentions.npy")));

    const QString ref = test::sourcePath("tests/fixtures/long/" + model);
    const NpyArray pooled = npy(QDir(out).filePath("attentions_pooled.npy"));
    const NpyArray entropy = npy(QDir(out).filePath("entropy.npy"));
    QCOMPARE(pooled.shape, (std::vector<std::int64_t>{2, 4, kLongBins, kLongBins}));
    QCOMPARE(entropy.shape, (std::vector<std::int64_t>{2, 4, kLongTokens}));
    const double pooledDiff = maxDiff(pooled, npy(ref + QStringLiteral("_pooled%1.npy").arg(kLongBins)));
    const double entropyDiff = maxDiff(entropy, npy(ref + "_entropy.npy"));
    QVERIFY2(pooledDiff < 2e-5, qPrintable(QString::number(pooledDiff)));
    QVERIFY2(entropyDiff < 2e-4, qPrintable(QString::number(entropyDiff)));

    // The peak memory of the whole process against what [L,H,T,T] float32 maps alone would take.
    const QRegularExpression memory(
        QStringLiteral("memory: peak_rss_mib ([0-9.]+), full maps would need ([0-9.]+) MiB"));
    const auto m = memory.match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    const double peak = m.captured(1).toDouble(), full = m.captured(2).toDouble();
    qInfo("%s on %s at T = %d: peak RSS %.1f MiB; the full maps would need %.1f MiB", qPrintable(model),
          qPrintable(backend), kLongTokens, peak, full);
    QCOMPARE(full, 2048.0);
    // Under AddressSanitizer the process holds shadow memory and freed blocks in quarantine besides:
    // its peak says nothing of the path's own memory (the Release suite asserts it).
    if (!test::kSanitizerReservesAddressSpace)
        QVERIFY2(peak < full / 4, qPrintable(r.out));
}

void TestCliQk::longDumpPoolsAndSummarisesLikeTheReference()
{
    QTemporaryDir dir;
    const QString dump = dir.filePath("llama.qk");
    auto r = runCli({"model", decoder("llama3-f32"), "--ids", longIds(384), "--qk-out", dump, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("attnscope-qk dump, 2 layers"), qPrintable(r.out));

    // Whole maps are 2 GiB: refused under a 1 GiB budget, naming --pool.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ATTNSCOPE_MEMORY_LIMIT", "1G");
    r = runCli({"export", dump, "--tensor", "weights", "--out", dir.filePath("w.npy")}, env);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("--pool N") && r.err.count('\n') == 1, qPrintable(r.err));
    QVERIFY(!QFile::exists(dir.filePath("w.npy")));

    // One head pooled from the dump's q and k, on each engine, equals the float64 reference's cells.
    const NpyArray reference = npy(test::sourcePath("tests/fixtures/long/llama3-f32_pooled64.npy"));
    for (const QString backend : {"cpu", "vulkan"}) {
        if (backend == "vulkan" && !test::missingVulkanReason().empty())
            continue; // the CPU row still ran; ATTNSCOPE_SKIP_WITHOUT_VULKAN would skip it too
        const QString out = dir.filePath("head-" + backend + ".npy");
        r = runCli({"export", dump, "--tensor", "weights", "--layer", "1", "--head", "3", "--pool", "64", "--out", out,
                    "--backend", backend},
                   env);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const NpyArray head = npy(out);
        QCOMPARE(head.shape, (std::vector<std::int64_t>{64, 64}));
        double worst = 0.0;
        const std::size_t offset = std::size_t((1 * 4 + 3) * 64 * 64);
        for (std::size_t i = 0; i < head.data.size(); ++i)
            worst = std::max(worst, std::abs(head.data[i] - reference.data[offset + i]));
        QVERIFY2(worst < 2e-5, qPrintable(backend + ": " + QString::number(worst)));
    }

    // The statistics stream every row from q and k: each head's entropy is the mean of the
    // reference's row entropies.
    r = runCli({"stats", dump, "--out", dir.filePath("stats.json")}, env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const NpyArray entropy = npy(test::sourcePath("tests/fixtures/long/llama3-f32_entropy.npy"));
    const auto stats = readJson(dir.filePath("stats.json"))["stats"];
    QCOMPARE(int(stats.size()), 8);
    for (const auto &s : stats) {
        const int l = s["layer"], h = s["head"];
        double mean = 0.0;
        for (int i = 0; i < kLongTokens; ++i)
            mean += entropy.data[std::size_t((l * 4 + h) * kLongTokens + i)];
        mean /= kLongTokens;
        QVERIFY2(std::abs(double(s["entropy"]) - mean) < 1e-4, s.dump().c_str());
    }
}

void TestCliQk::dumpOfARunEqualsItsFullAttentions()
{
    QTemporaryDir dir;
    const QString out = dir.filePath("run"), dump = dir.filePath("run.qk");
    // Qwen 3: per-head q/k norms and grouped keys; the text repeats, so induction is defined.
    auto r = runCli({"model", decoder("qwen3-f32"), "--text", "the cat sat on the mat. the cat sat on the mat.",
                     "--out", out, "--qk-out", dump, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const NpyArray full = npy(QDir(out).filePath("attentions.npy"));
    QCOMPARE(full.shape.size(), std::size_t(4));
    const std::int64_t L = full.shape[0], H = full.shape[1], T = full.shape[2];

    // Whole weights, every layer and head.
    r = runCli({"export", dump, "--tensor", "weights", "--out", dir.filePath("w.npy")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(maxDiff(npy(dir.filePath("w.npy")), full) < 1e-6);

    // One layer's mean over heads.
    r = runCli({"export", QDir(dump).filePath("attnscope-qk.json"), "--tensor", "mean", "--layer", "1", "--out",
                dir.filePath("mean.npy")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const NpyArray mean = npy(dir.filePath("mean.npy"));
    double worst = 0.0;
    for (std::int64_t i = 0; i < T * T; ++i) {
        double m = 0.0;
        for (std::int64_t h = 0; h < H; ++h)
            m += full.data[std::size_t(((1 * H) + h) * T * T + i)];
        worst = std::max(worst, std::abs(mean.data[std::size_t(i)] - m / double(H)));
    }
    QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));

    // Pooled: every layer and head, max cells of the full maps.
    r = runCli({"export", dump, "--tensor", "weights", "--pool", "5", "--out", dir.filePath("p.npy")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const NpyArray pooled = npy(dir.filePath("p.npy"));
    QCOMPARE(pooled.shape, (std::vector<std::int64_t>{L, H, 5, 5}));
    for (std::int64_t m = 0; m < L * H; ++m) {
        const auto cells = poolMax(full, m * T * T, T, T, 5);
        for (std::size_t c = 0; c < cells.size(); ++c)
            QVERIFY(std::abs(pooled.data[std::size_t(m * 25) + c] - cells[c]) < 1e-6);
    }

    // The statistics of the dump and of the run, the induction score included (the dump keeps the
    // run's tokens).
    r = runCli({"stats", dump, "--out", dir.filePath("qk.json")});
    QVERIFY2(r.code == 0 && r.out.contains("Q/K dump"), qPrintable(r.err + r.out));
    r = runCli({"stats", decoder("qwen3-f32"), "--text", "the cat sat on the mat. the cat sat on the mat.", "--out",
                dir.filePath("run.json"), "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const auto a = readJson(dir.filePath("qk.json"))["stats"], b = readJson(dir.filePath("run.json"))["stats"];
    QCOMPARE(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        for (const char *key : {"entropy", "distance", "confidence", "first", "self", "previous", "induction"}) {
            QVERIFY2(a[i].contains(key) && b[i].contains(key), key);
            QVERIFY2(std::abs(double(a[i][key]) - double(b[i][key])) < 1e-5, (a[i].dump() + b[i].dump()).c_str());
        }

    // A figure of every head, drawn from q and k.
    r = runCli({"render", dump, "--view", "model", "--out", dir.filePath("model.png")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile(dir.filePath("model.png")).size() > 1000);
}

void TestCliQk::handWrittenDumpsReproduceTheirReference_data()
{
    QTest::addColumn<QString>("dump");
    QTest::addColumn<QString>("expected");
    // tests/fixtures/make_qk_fixtures.py (numpy, float64 from the stored values) and
    // make_qk_torch_fixture.py (PyTorch's eager attention of the model whose q and k were captured).
    for (const char *name : {"gqa", "window", "offset", "bf16"})
        QTest::newRow(name) << QStringLiteral("tests/fixtures/qk/%1").arg(name)
                            << QStringLiteral("tests/fixtures/qk/%1/expected_weights.npy").arg(name);
    for (const char *name : {"f32", "bf16", "chunk"})
        QTest::newRow(qPrintable(QStringLiteral("torch %1").arg(name)))
            << QStringLiteral("tests/fixtures/qk-torch/%1").arg(name)
            << QStringLiteral("tests/fixtures/qk-torch/%1/eager_attentions.npy").arg(name);
}

void TestCliQk::handWrittenDumpsReproduceTheirReference()
{
    QFETCH(QString, dump);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    for (const QString backend : {"cpu", "vulkan"}) {
        if (backend == "vulkan" && !test::missingVulkanReason().empty())
            continue;
        const auto r = runCli({"export", test::sourcePath(dump), "--tensor", "weights", "--out",
                               dir.filePath(backend + ".npy"), "--backend", backend});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const double diff = maxDiff(npy(dir.filePath(backend + ".npy")), npy(test::sourcePath(expected)));
        QVERIFY2(diff < 1e-5, qPrintable(backend + ": " + QString::number(diff)));
    }
}

void TestCliQk::offsetPositionsMeasureStatisticsInPositions()
{
    // Queries at positions 8..15 against keys 0..15: `self` is the weight on the key at the
    // query's own position (key 8 + i for row i), not on key i.
    QTemporaryDir dir;
    const QString dump = test::sourcePath("tests/fixtures/qk/offset");
    auto r = runCli({"stats", dump, "--out", dir.filePath("s.json")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const NpyArray w = npy(QDir(dump).filePath("expected_weights.npy")); // [L, H, 8, 16]
    const std::int64_t H = w.shape[1], tq = w.shape[2], tk = w.shape[3];
    const nlohmann::json stats = readJson(dir.filePath("s.json")); // kept: the loop reads into it
    for (const auto &s : stats["stats"]) {
        const int l = s["layer"], h = s["head"];
        double self = 0.0, previous = 0.0, distance = 0.0;
        for (std::int64_t i = 0; i < tq; ++i) {
            const std::int64_t at = (std::int64_t(l) * H + h) * tq * tk + i * tk;
            self += w.data[std::size_t(at + 8 + i)];
            previous += w.data[std::size_t(at + 7 + i)];
            for (std::int64_t j = 0; j < tk; ++j)
                distance += w.data[std::size_t(at + j)] * double(std::llabs(8 + i - j));
        }
        QVERIFY2(std::abs(double(s["self"]) - self / double(tq)) < 1e-5, s.dump().c_str());
        QVERIFY2(std::abs(double(s["previous"]) - previous / double(tq)) < 1e-5, s.dump().c_str());
        QVERIFY2(std::abs(double(s["distance"]) - distance / double(tq)) < 1e-5, s.dump().c_str());
    }
}

void TestCliQk::brokenDumpsAreRefusedInOneLine_data()
{
    QTest::addColumn<QString>("remove");
    QTest::addColumn<QString>("replace");
    QTest::addColumn<QString>("with");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing layer file") << "layer-001.safetensors"
                                        << ""
                                        << ""
                                        << "layer-001.safetensors";
    QTest::newRow("unknown version") << ""
                                     << "\"version\": 1"
                                     << "\"version\": 7"
                                     << "version 7";
    QTest::newRow("H not divisible by KV") << ""
                                           << "\"kvHeads\": 2"
                                           << "\"kvHeads\": 3"
                                           << "kvHeads 3";
}

void TestCliQk::brokenDumpsAreRefusedInOneLine()
{
    QFETCH(QString, remove);
    QFETCH(QString, replace);
    QFETCH(QString, with);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString source = test::sourcePath("tests/fixtures/qk/gqa"), dump = dir.filePath("gqa");
    QVERIFY(QDir().mkpath(dump));
    for (const QString &name : QDir(source).entryList(QDir::Files))
        QVERIFY(QFile::copy(QDir(source).filePath(name), QDir(dump).filePath(name)));
    if (!remove.isEmpty())
        QVERIFY(QFile::remove(QDir(dump).filePath(remove)));
    if (!replace.isEmpty()) {
        QFile index(QDir(dump).filePath("attnscope-qk.json"));
        QVERIFY(index.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(index.readAll());
        index.close();
        QVERIFY2(text.contains(replace), qPrintable(text));
        text.replace(replace, with);
        QVERIFY(index.open(QIODevice::WriteOnly | QIODevice::Truncate));
        index.write(text.toUtf8());
    }
    for (const QStringList &args : {QStringList{"stats", dump, "--out", dir.filePath("s.json")},
                                    QStringList{"export", dump, "--tensor", "weights", "--out", dir.filePath("w.npy")},
                                    QStringList{"render", dump, "--out", dir.filePath("f.png")}}) {
        const auto r = runCli(args);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(expected) && r.err.count('\n') == 1, qPrintable(r.err));
    }
    QVERIFY(!QFile::exists(dir.filePath("s.json")) && !QFile::exists(dir.filePath("w.npy")) &&
            !QFile::exists(dir.filePath("f.png")));
}

void TestCliQk::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    const QString model = decoder("llama3-f32");
    QTest::newRow("pool without out") << QStringList{"model", model, "--ids", "1,2", "--qk-out", "d", "--pool", "4"}
                                      << "--pool needs --out";
    QTest::newRow("pool mode alone") << QStringList{"model", model, "--ids", "1,2", "--out", "o", "--pool-mode", "mean"}
                                     << "--pool-mode needs --pool";
    QTest::newRow("no output") << QStringList{"model", model, "--ids", "1,2"} << "--out DIR (or --qk-out DUMP)";
    QTest::newRow("pool for stats") << QStringList{"export",   test::sourcePath("tests/fixtures/qk/gqa"),
                                                   "--tensor", "stats",
                                                   "--pool",   "4",
                                                   "--out",    "s.json"}
                                    << "--pool is for --tensor weights or mean";
    QTest::newRow("text for a dump") << QStringList{"stats",  test::sourcePath("tests/fixtures/qk/gqa"),
                                                    "--text", "hi",
                                                    "--out",  "s.json"}
                                     << "is a Q/K dump";
}

void TestCliQk::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QDir::setCurrent(dir.path());
    const auto r = runCli(args);
    QVERIFY2(r.code != 0 && r.err.contains(expected) && r.err.count('\n') == 1, qPrintable(r.err));
    QVERIFY(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).isEmpty());
}

QTEST_GUILESS_MAIN(TestCliQk)
#include "tst_cli_qk.moc"
