// attnscope-cli generate (design.md, "Contract: generation"): tokens.json and attentions.npy
// against the float64 greedy continuations of tests/fixtures/generation
// (make_generation_fixtures.py), --pool's pair, a seeded run repeated, and the usage errors.

#include "../common/CliRunner.h"
#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnscope;

namespace {

QString fixture(const QString &name)
{
    return test::sourcePath("tests/fixtures/" + name);
}

QString idsText(const QJsonArray &ids)
{
    QStringList parts;
    for (const QJsonValue &v : ids)
        parts << QString::number(v.toInt());
    return parts.join(',');
}

QJsonObject readJson(const QString &path)
{
    return QJsonDocument::fromJson(test::readAll(path)).object();
}

} // namespace

class TestGenerateCli : public QObject
{
    Q_OBJECT

private slots:
    void greedyEqualsReference_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *f : {"llama3-f32", "qwen3-f32", "gemma2-bf16"})
            QTest::newRow(f) << QString::fromUtf8(f);
    }

    void greedyEqualsReference()
    {
        QFETCH(QString, name);
        const QJsonObject expected = readJson(fixture("generation/" + name + "/expected.json"));
        QTemporaryDir dir;
        const auto run = test::runCli({"generate", fixture(expected["folder"].toString()), "--ids",
                                       idsText(expected["prompt"].toArray()), "--max-new-tokens", "8", "--out",
                                       dir.filePath("out"), "--backend", "cpu"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        const QJsonObject tokens = readJson(dir.filePath("out/tokens.json"));
        QCOMPARE(tokens["ids"].toArray(), expected["ids"].toArray());
        QCOMPARE(tokens["tokens"].toArray().size(), expected["ids"].toArray().size());
        QCOMPARE(tokens["promptLength"].toInt(), expected["prompt"].toArray().size());
        const QJsonArray steps = tokens["steps"].toArray(), want = expected["steps"].toArray();
        QCOMPARE(steps.size(), want.size());
        for (int s = 0; s < steps.size(); ++s) {
            const QJsonObject got = steps[s].toObject(), e = want[s].toObject();
            QCOMPARE(got["id"].toInt(), e["id"].toInt());
            QCOMPARE(got["token"].toString(), tokens["tokens"].toArray()[expected["prompt"].toArray().size() + s]);
            QVERIFY(std::abs(got["p"].toDouble() - e["p"].toDouble()) < 1e-4);
            const QJsonArray candidates = got["candidates"].toArray(), wanted = e["candidates"].toArray();
            QCOMPARE(candidates.size(), 10);
            for (int r = 0; r < 10; ++r) {
                const QJsonObject c = candidates[r].toObject();
                QVERIFY(c.contains("token"));
                QVERIFY(std::abs(c["p"].toDouble() - wanted[r].toArray()[1].toDouble()) < 1e-4);
            }
            QCOMPARE(candidates[0].toObject()["id"].toInt(), wanted[0].toArray()[0].toInt());
        }
        auto attentions = readNpyFile(dir.filePath("out/attentions.npy").toStdString());
        QVERIFY2(attentions, attentions ? "" : attentions.message().c_str());
        auto reference = readNpyFile(fixture("generation/" + name + "/expected_attentions.npy").toStdString());
        QVERIFY(reference);
        QCOMPARE(attentions->shape, reference->shape);
        std::vector<float> got(attentions->data.begin(), attentions->data.end());
        const QString diff = test::compareValues("attentions", got.data(), *reference, 1e-4, 0);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    // --pool N: the pooled pair instead of attentions.npy; the entropies are those of the
    // reference's rows.
    void pooled()
    {
        const QJsonObject expected = readJson(fixture("generation/llama3-f32/expected.json"));
        QTemporaryDir dir;
        const auto run = test::runCli({"generate", fixture(expected["folder"].toString()), "--ids",
                                       idsText(expected["prompt"].toArray()), "--max-new-tokens", "8", "--out",
                                       dir.filePath("out"), "--pool", "4", "--backend", "cpu"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY(!QFile::exists(dir.filePath("out/attentions.npy")));
        auto reference = readNpyFile(fixture("generation/llama3-f32/expected_attentions.npy").toStdString());
        QVERIFY(reference);
        const std::int64_t L = reference->shape[0], H = reference->shape[1], T = reference->shape[2];
        auto pooled = readNpyFile(dir.filePath("out/attentions_pooled.npy").toStdString());
        QVERIFY2(pooled, pooled ? "" : pooled.message().c_str());
        QCOMPARE(pooled->shape, (std::vector<std::int64_t>{L, H, 4, 4}));
        auto entropy = readNpyFile(dir.filePath("out/entropy.npy").toStdString());
        QVERIFY2(entropy, entropy ? "" : entropy.message().c_str());
        QCOMPARE(entropy->shape, (std::vector<std::int64_t>{L, H, T}));
        for (std::int64_t row = 0; row < L * H * T; ++row) {
            double e = 0;
            for (std::int64_t j = 0; j < T; ++j) {
                const double w = reference->data[std::size_t(row * T + j)];
                if (w > 0)
                    e -= w * std::log(w);
            }
            QVERIFY2(
                std::abs(entropy->data[std::size_t(row)] - e) < 1e-3,
                qPrintable(QString("row %1: %2, expected %3").arg(row).arg(entropy->data[std::size_t(row)]).arg(e)));
        }
    }

    void seededRunRepeats()
    {
        QTemporaryDir dir;
        QStringList args{"generate",
                         fixture("decoders/qwen3-f32"),
                         "--ids",
                         "1,2,3",
                         "--max-new-tokens",
                         "6",
                         "--temperature",
                         "1.5",
                         "--top-k",
                         "50",
                         "--top-p",
                         "0.9",
                         "--seed",
                         "11",
                         "--out"};
        const auto a = test::runCli(args + QStringList{dir.filePath("a")});
        const auto b = test::runCli(args + QStringList{dir.filePath("b")});
        QVERIFY2(a.code == 0 && b.code == 0, qPrintable(a.err + b.err));
        QCOMPARE(test::readAll(dir.filePath("a/tokens.json")), test::readAll(dir.filePath("b/tokens.json")));
    }

    void errors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString llama = fixture("decoders/llama3-f32");
        QTest::newRow("no max") << QStringList{llama, "--ids", "1", "--out", "o"} << 2 << "--max-new-tokens";
        QTest::newRow("max 0") << QStringList{llama, "--ids", "1", "--max-new-tokens", "0", "--out", "o"} << 2
                               << "--max-new-tokens";
        QTest::newRow("top-p") << QStringList{llama, "--ids", "1", "--max-new-tokens", "2", "--top-p",
                                              "1.5", "--out", "o"}
                               << 2 << "--top-p";
        QTest::newRow("temperature") << QStringList{llama, "--ids", "1", "--max-new-tokens", "2", "--temperature",
                                                    "-1",  "--out", "o"}
                                     << 2 << "--temperature";
        QTest::newRow("top-k") << QStringList{llama, "--ids", "1", "--max-new-tokens", "2", "--top-k",
                                              "x",   "--out", "o"}
                               << 2 << "--top-k";
        QTest::newRow("text and ids") << QStringList{llama, "--ids", "1", "--text", "a", "--max-new-tokens",
                                                     "2",   "--out", "o"}
                                      << 2 << "--text";
        QTest::newRow("no out") << QStringList{llama, "--ids", "1", "--max-new-tokens", "2"} << 2 << "--out";
        QTest::newRow("bert")
            << QStringList{fixture("models/bert-f32"), "--ids", "1", "--max-new-tokens", "2", "--out", "o"} << 1
            << "bert has no language-model head";
    }

    void errors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir dir;
        for (QString &a : args)
            if (a == "o")
                a = dir.filePath("o");
        const auto run = test::runCli(QStringList{"generate"} + args);
        QCOMPARE(run.code, code);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QCOMPARE(run.err.trimmed().count('\n'), 0);
        QVERIFY(!QFile::exists(dir.filePath("o")));
    }
};

QTEST_GUILESS_MAIN(TestGenerateCli)
#include "tst_generate_cli.moc"
