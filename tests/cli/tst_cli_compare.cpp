// `attnscope-cli compare` (issue 26): two texts run through a model fixture, compared; the
// difference read back equals B − A of the two runs' attentions.npy, comparison.json carries the
// statistics the stats command prints for each side and those of the difference computed here from
// the arrays; inputs that cannot be aligned (different token counts, a Q/K dump) are refused in one
// line with nothing written.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using namespace attnscope;
using attnscope::test::runCli;

namespace {

QString model()
{
    return test::sourcePath(QStringLiteral("tests/fixtures/models/gpt2-f32"));
}

NpyArray npy(const QString &path)
{
    auto a = readNpyFile(path.toStdString());
    if (!a)
        qFatal("%s: %s", qPrintable(path), a.message().c_str());
    return *a;
}

nlohmann::json readJson(const QString &path)
{
    return nlohmann::json::parse(test::readAll(path).toStdString());
}

// `model` on one text into dir; the run's tokens.
std::vector<std::string> runModel(const QString &text, const QString &dir)
{
    const auto r = runCli({"model", model(), "--text", text, "--out", dir, "--backend", "cpu"});
    if (r.code != 0)
        qFatal("model: %s", qPrintable(r.err));
    return readJson(dir + "/tokens.json")["tokens"].get<std::vector<std::string>>();
}

// The lines of stderr, without the empty one after the last newline.
QStringList lines(const QString &text)
{
    QStringList out = text.split('\n');
    if (!out.isEmpty() && out.back().isEmpty())
        out.pop_back();
    return out;
}

} // namespace

class TestCliCompare : public QObject
{
    Q_OBJECT

private slots:
    void differenceOfTwoTextsIsBMinusA();
    void modelFolderWithTwoTextsGivesTheSameDifference();
    void differentTokenCountsAreRefused();
    void queryKeyDumpIsRefused();
    void runFolderWithWrongTokensIsRefused();
    void usageErrors_data();
    void usageErrors();
};

void TestCliCompare::differenceOfTwoTextsIsBMinusA()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString runA = tmp.filePath("a"), runB = tmp.filePath("b"), cmp = tmp.filePath("cmp");
    const auto tokensA = runModel("the cat sat on the mat", runA);
    const auto tokensB = runModel("the dog sat on the mat", runB);
    QCOMPARE(tokensA.size(), tokensB.size());
    QVERIFY(tokensA != tokensB);

    const auto r = runCli({"compare", runA, runB, "--out", cmp});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("heads that changed most"), qPrintable(r.out));
    QVERIFY2(r.out.contains("layer  head  totalVariation  maxAbs  entropyA  entropyB"), qPrintable(r.out));

    // The difference read back is B − A of the two runs' maps, cell by cell.
    const NpyArray a = npy(runA + "/attentions.npy"), b = npy(runB + "/attentions.npy");
    const NpyArray d = npy(cmp + "/difference.npy");
    QCOMPARE(d.shape, a.shape);
    QCOMPARE(d.shape.size(), std::size_t(4)); // one sample: no leading S axis
    int nonZero = 0;
    for (std::size_t n = 0; n < d.data.size(); ++n) {
        const float expected = float(b.data[n] - a.data[n]);
        if (float(d.data[n]) != expected)
            QFAIL(qPrintable(QStringLiteral("difference.npy value %1 is %2, B - A is %3")
                                 .arg(n)
                                 .arg(d.data[n], 0, 'g', 9)
                                 .arg(double(expected), 0, 'g', 9)));
        nonZero += expected != 0.0f;
    }
    QVERIFY(nonZero > 0);

    const nlohmann::json j = readJson(cmp + "/comparison.json");
    const std::int64_t layers = a.shape[0], heads = a.shape[1], t = a.shape[2];
    QCOMPARE(j["a"].get<std::string>(), runA.toStdString());
    QCOMPARE(j["b"].get<std::string>(), runB.toStdString());
    QCOMPARE(j["layers"].get<std::int64_t>(), layers);
    QCOMPARE(j["heads"].get<std::int64_t>(), heads);
    // Labels: the shared token, or A's→B's where they differ (decoded: "Ġcat" reads "␣cat").
    const auto queryLabels = j["queryLabels"].get<std::vector<std::string>>();
    QCOMPARE(queryLabels.size(), tokensA.size());
    for (std::size_t i = 0; i < tokensA.size(); ++i)
        QCOMPARE(queryLabels[i].find("\xE2\x86\x92") != std::string::npos, tokensA[i] != tokensB[i]);
    QVERIFY(j["keyLabels"] == j["queryLabels"]);

    // Each side's statistics are what `stats` prints for it.
    QVERIFY(runCli({"stats", runA, "--out", tmp.filePath("a.json")}).code == 0);
    QVERIFY(runCli({"stats", runB, "--out", tmp.filePath("b.json")}).code == 0);
    const nlohmann::json statsA = readJson(tmp.filePath("a.json"))["stats"];
    const nlohmann::json statsB = readJson(tmp.filePath("b.json"))["stats"];
    const nlohmann::json &rows = j["headDifferences"];
    QCOMPARE(std::int64_t(rows.size()), layers * heads);
    for (std::size_t n = 0; n < rows.size(); ++n) {
        const nlohmann::json &row = rows[n];
        const std::int64_t l = row["layer"], h = row["head"];
        QCOMPARE(l, std::int64_t(n) / heads);
        QCOMPARE(h, std::int64_t(n) % heads);
        for (const auto &[side, stats] : {std::pair{"a", &statsA}, std::pair{"b", &statsB}}) {
            nlohmann::json expected = (*stats)[n];
            expected.erase("layer");
            expected.erase("head");
            QVERIFY2(row[side] == expected, (std::string(side) + ": " + row[side].dump()).c_str());
        }
        // The difference's statistics, from the two arrays.
        double sum = 0, max = 0, tv = 0;
        const std::size_t offset = std::size_t(n) * std::size_t(t * t);
        for (std::int64_t i = 0; i < t; ++i) {
            double rowSum = 0;
            for (std::int64_t k = 0; k < t; ++k) {
                const std::size_t at = offset + std::size_t(i * t + k);
                const double v = std::abs(b.data[at] - a.data[at]);
                sum += v, rowSum += v, max = std::max(max, v);
            }
            tv += 0.5 * rowSum;
        }
        QVERIFY(std::abs(row["meanAbs"].get<double>() - sum / double(t * t)) < 1e-12);
        QVERIFY(std::abs(row["maxAbs"].get<double>() - max) < 1e-12);
        QVERIFY(std::abs(row["totalVariation"].get<double>() - tv / double(t)) < 1e-12);
    }
}

void TestCliCompare::modelFolderWithTwoTextsGivesTheSameDifference()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    runModel("the cat sat on the mat", tmp.filePath("a"));
    runModel("the dog sat on the mat", tmp.filePath("b"));
    const auto runs = runCli({"compare", tmp.filePath("a"), tmp.filePath("b"), "--out", tmp.filePath("runs")});
    QVERIFY2(runs.code == 0, qPrintable(runs.err));
    const auto direct = runCli({"compare", model(), model(), "--text-a", "the cat sat on the mat", "--text-b",
                                "the dog sat on the mat", "--backend", "cpu", "--out", tmp.filePath("direct")});
    QVERIFY2(direct.code == 0, qPrintable(direct.err));
    QCOMPARE(npy(tmp.filePath("direct/difference.npy")).data, npy(tmp.filePath("runs/difference.npy")).data);
    QVERIFY(readJson(tmp.filePath("direct/comparison.json"))["headDifferences"] ==
            readJson(tmp.filePath("runs/comparison.json"))["headDifferences"]);
}

void TestCliCompare::differentTokenCountsAreRefused()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const auto shortTokens = runModel("the cat sat", tmp.filePath("short"));
    const auto longTokens = runModel("the cat sat on the mat", tmp.filePath("long"));
    QVERIFY(shortTokens.size() < longTokens.size());
    const QString out = tmp.filePath("cmp");
    const auto r = runCli({"compare", tmp.filePath("short"), tmp.filePath("long"), "--out", out});
    QCOMPARE(r.code, 1);
    const QStringList err = lines(r.err);
    QCOMPARE(err.size(), 1);
    const QString more = QString::number(longTokens.size() - shortTokens.size());
    QCOMPARE(err[0], QStringLiteral("attnscope-cli: cannot compare: A has %1 tokens and B has %2; the two texts must "
                                    "tokenise to the same number of tokens to be aligned position by position; B is "
                                    "A followed by %3 more tokens")
                         .arg(shortTokens.size())
                         .arg(longTokens.size())
                         .arg(more));
    QVERIFY(!QFileInfo::exists(out));
    QVERIFY(r.out.isEmpty());
}

void TestCliCompare::queryKeyDumpIsRefused()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString dump = tmp.filePath("dump");
    const auto made = runCli({"model", model(), "--text", "the cat sat", "--qk-out", dump, "--out", tmp.filePath("run"),
                              "--backend", "cpu"});
    QVERIFY2(made.code == 0, qPrintable(made.err));
    const QString out = tmp.filePath("cmp");
    const auto r = runCli({"compare", dump, tmp.filePath("run"), "--out", out});
    QCOMPARE(r.code, 1);
    const QStringList err = lines(r.err);
    QCOMPARE(err.size(), 1);
    QVERIFY2(err[0].startsWith("attnscope-cli: cannot compare: A is computed from queries and keys"),
             qPrintable(err[0]));
    QVERIFY(!QFileInfo::exists(out));
}

void TestCliCompare::runFolderWithWrongTokensIsRefused()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const auto tokens = runModel("the cat sat", tmp.filePath("a"));
    runModel("the dog sat", tmp.filePath("b"));
    QFile file(tmp.filePath("b/tokens.json"));
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(R"({"ids": [1], "tokens": ["x"]})");
    file.close();
    const QString out = tmp.filePath("cmp");
    const auto r = runCli({"compare", tmp.filePath("a"), tmp.filePath("b"), "--out", out});
    QCOMPARE(r.code, 1);
    QCOMPARE(lines(r.err),
             QStringList{QStringLiteral("attnscope-cli: B: %1: 1 tokens, where attentions.npy has %2 x %2 maps")
                             .arg(tmp.filePath("b/tokens.json"))
                             .arg(tokens.size())});
    QVERIFY(!QFileInfo::exists(out));
}

void TestCliCompare::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString run = test::sourcePath("tests/fixtures/attention/lhtt_f32.npy");
    QTest::newRow("one input") << QStringList{"compare", run, "--out", "x"}
                               << "attnscope-cli: compare: expected 2 arguments (A B), found 1 (see --help)";
    QTest::newRow("no --out") << QStringList{"compare", run, run} << "attnscope-cli: compare: --out DIR is required";
    QTest::newRow("--text without a model folder")
        << QStringList{"compare", run, run, "--text", "hi", "--out", "x"}
        << "attnscope-cli: compare: --text is for a model folder; neither A nor B is one";
}

void TestCliCompare::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const auto r = runCli(args);
    QCOMPARE(r.code, 2);
    QCOMPARE(lines(r.err), QStringList{message});
}

QTEST_GUILESS_MAIN(TestCliCompare)
#include "tst_cli_compare.moc"
