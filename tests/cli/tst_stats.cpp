// attnscope-cli stats: design.md's per-head statistics of attention files and projects, as
// JSON and CSV, compared with NumPy's float64 expectations (tests/fixtures/attention).

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/formats/Npy.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

using test::readAll;

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

QString fixture(const QString &name)
{
    return test::sourcePath("tests/fixtures/attention/" + name);
}

bool close(double got, double expected)
{
    return std::abs(got - expected) <= 1e-6 * (1.0 + std::abs(expected));
}

} // namespace

class TestStats : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void jsonMatchesNumPy_data();
    void jsonMatchesNumPy();
    void csvHasOneRowPerHead();
    void inductionOnlyWhereTheTextRepeats();
    void projectStatsEqualItsComputedWeights();
    void rolloutExportMatchesNumPy_data();
    void rolloutExportMatchesNumPy();
    void rolloutOfAProjectIsThatOfItsWeights();
    void errors_data();
    void errors();
    void scoresAreSaidOnStderr();
    void softmaxMakesScoresAttention();
    void maskedAndSinkRowsAreSaidNotRefused();

private:
    QTemporaryDir m_dir;
};

void TestStats::jsonMatchesNumPy_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("stem");
    QTest::newRow("npy float16") << "lhtt_f16.npy"
                                 << "lhtt_f16";
    QTest::newRow("safetensors bfloat16") << "lhtt_bf16_st.safetensors"
                                          << "lhtt_bf16_st";
    QTest::newRow("npz deflated") << "lhtt_deflated.npz"
                                  << "lhtt_deflated";
    QTest::newRow("cross [H,Tq,Tk]") << "cross_htt_f32.npy"
                                     << "cross_htt_f32";
}

void TestStats::jsonMatchesNumPy()
{
    QFETCH(QString, file);
    QFETCH(QString, stem);
    const QString out = m_dir.filePath(stem + ".json");
    const auto run = test::runCli({"stats", fixture(file), "--out", out});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const QJsonObject got = readJson(out), expected = readJson(fixture("expected_" + stem + ".json"));
    QCOMPARE(got.value("layers"), expected.value("layers"));
    QCOMPARE(got.value("heads"), expected.value("heads"));
    const QJsonArray rows = got.value("stats").toArray(), want = expected.value("stats").toArray();
    QCOMPARE(rows.size(), want.size());
    for (qsizetype n = 0; n < rows.size(); ++n) {
        const QJsonObject g = rows[n].toObject(), e = want[n].toObject();
        QCOMPARE(g.value("layer"), e.value("layer"));
        QCOMPARE(g.value("head"), e.value("head"));
        for (const char *key : {"entropy", "distance", "confidence", "first", "self", "previous"}) {
            if (!e.contains(key)) {
                QVERIFY2(g.value(key).isNull(), key); // not applicable: null
                continue;
            }
            QVERIFY2(close(g.value(key).toDouble(), e.value(key).toDouble()),
                     qPrintable(QString("%1 row %2 %3: %4 vs %5")
                                    .arg(stem)
                                    .arg(n)
                                    .arg(key)
                                    .arg(g.value(key).toDouble())
                                    .arg(e.value(key).toDouble())));
        }
    }
}

void TestStats::inductionOnlyWhereTheTextRepeats()
{
    const QString model = test::sourcePath("tests/fixtures/models/gpt2-f32");
    const QString repeated = m_dir.filePath("repeated.json"), once = m_dir.filePath("once.json");
    auto run = test::runCli({"stats", model, "--text", "one two three one two three", "--out", repeated});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run = test::runCli({"stats", model, "--text", "hi you", "--out", once}); // h, i, Ġyou
    QVERIFY2(run.code == 0, qPrintable(run.err));
    for (const auto &row : readJson(repeated).value("stats").toArray()) {
        const QJsonObject o = row.toObject();
        QVERIFY(o.value("induction").isDouble());
        QVERIFY(o.value("induction").toDouble() >= 0.0 && o.value("induction").toDouble() <= 1.0);
        QVERIFY(o.value("spread").toDouble() >= 0.0);
    }
    for (const auto &row : readJson(once).value("stats").toArray()) {
        QVERIFY(row.toObject().value("induction").isNull());
        QVERIFY(row.toObject().value("spread").isDouble());
    }
}

void TestStats::csvHasOneRowPerHead()
{
    const QString out = m_dir.filePath("stats.csv");
    const auto run = test::runCli({"stats", fixture("cross_htt_f32.npy"), "--out", out});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).trimmed().split('\n');
    QCOMPARE(lines.size(), 3); // header + 2 heads
    // The keys of old come first, unchanged; new ones are added after them.
    QCOMPARE(lines[0], QString("layer,head,entropy,distance,confidence,first,self,previous,spread,induction"));
    const QStringList cells = lines[2].split(',');
    QCOMPARE(cells.size(), 10);
    QVERIFY(cells[9].isEmpty()); // induction: not square, no labels
    QCOMPARE(cells[0], QString("0"));
    QCOMPARE(cells[1], QString("1"));
    QVERIFY(cells[6].isEmpty()); // self: the maps are 4 x 6, not square
    const QJsonObject expected = readJson(fixture("expected_cross_htt_f32.json"));
    QVERIFY(close(cells[2].toDouble(), expected.value("stats").toArray()[1].toObject().value("entropy").toDouble()));
}

void TestStats::projectStatsEqualItsComputedWeights()
{
    // A project's statistics are those of the weights `compute` writes: two paths, one answer.
    const QString project = test::sourcePath("resources/examples/multihead-causal.attnscope.json");
    const QString dir = m_dir.filePath("computed");
    auto run = test::runCli({"compute", project, "--out", dir, "--backend", "cpu"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run = test::runCli({"stats", project, "--out", m_dir.filePath("p.json"), "--backend", "cpu"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run = test::runCli({"stats", dir + "/weights.npy", "--out", m_dir.filePath("w.json")});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QJsonObject a = readJson(m_dir.filePath("p.json")), b = readJson(m_dir.filePath("w.json"));
    QVERIFY(!a.isEmpty());
    QCOMPARE(a.value("heads").toInt(), 2);
    // The induction score compares token labels: the project has them, weights.npy has none
    // (null there). Every other number is the same.
    const auto withoutInduction = [](QJsonObject o, bool labelled) {
        QJsonArray rows = o.value("stats").toArray();
        for (qsizetype n = 0; n < rows.size(); ++n) {
            QJsonObject row = rows[n].toObject();
            if (!labelled && !row.value("induction").isNull())
                return QJsonObject{};
            row.remove("induction");
            rows[n] = row;
        }
        o["stats"] = rows;
        return o;
    };
    QCOMPARE(withoutInduction(a, true), withoutInduction(b, false));
}

void TestStats::rolloutExportMatchesNumPy_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("stem");
    QTest::newRow("npy float16") << "lhtt_f16.npy"
                                 << "lhtt_f16";
    QTest::newRow("safetensors bfloat16") << "lhtt_bf16_st.safetensors"
                                          << "lhtt_bf16_st";
    QTest::newRow("npz stored") << "lhtt_stored.npz"
                                << "lhtt_stored";
}

void TestStats::rolloutExportMatchesNumPy()
{
    QFETCH(QString, file);
    QFETCH(QString, stem);
    const QString out = m_dir.filePath(stem + "_rollout.npy");
    const auto run = test::runCli({"export", fixture(file), "--tensor", "rollout", "--out", out});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    auto got = readNpyFile(out.toStdString());
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    auto expected = readNpyFile(fixture("expected_" + stem + "_rollout.npy").toStdString());
    QVERIFY(expected.ok());
    QCOMPARE(got->shape, expected->shape);
    for (size_t i = 0; i < expected->data.size(); ++i)
        QVERIFY2(std::abs(got->data[i] - expected->data[i]) <= 1e-6 + 1e-5 * std::abs(expected->data[i]),
                 qPrintable(QString("element %1: %2 vs %3").arg(i).arg(got->data[i]).arg(expected->data[i])));
}

void TestStats::rolloutOfAProjectIsThatOfItsWeights()
{
    const QString project = test::sourcePath("resources/examples/multihead-causal.attnscope.json");
    const QString dir = m_dir.filePath("computed-rollout");
    auto run = test::runCli({"compute", project, "--out", dir, "--backend", "cpu"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run =
        test::runCli({"export", project, "--tensor", "rollout", "--out", m_dir.filePath("pr.npy"), "--backend", "cpu"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run = test::runCli({"export", dir + "/weights.npy", "--tensor", "rollout", "--out", m_dir.filePath("wr.npy")});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QCOMPARE(readAll(m_dir.filePath("pr.npy")), readAll(m_dir.filePath("wr.npy")));
    QVERIFY(readAll(m_dir.filePath("pr.npy")).size() > 128);
}

void TestStats::errors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString f16 = fixture("lhtt_f16.npy");
    QTest::newRow("no --out") << QStringList{"stats", f16} << 2 << "--out FILE.json or FILE.csv is required";
    QTest::newRow("wrong suffix") << QStringList{"stats", f16, "--out", "x.txt"} << 2 << "expected a .json or .csv";
    QTest::newRow("rollout as json") << QStringList{"export", f16, "--tensor", "rollout", "--out", "r.json"} << 2
                                     << "--tensor rollout is written as .npy or .csv, found \"r.json\"";
    QTest::newRow("all weights as csv") << QStringList{"export", f16, "--tensor", "weights", "--out", "w.csv"} << 2
                                        << "(.csv holds one matrix: give --layer and --head)";
    QTest::newRow("stats as npy") << QStringList{"export", f16, "--tensor", "stats", "--out", "s.npy"} << 2
                                  << "--tensor stats is written as .csv or .json";
    QTest::newRow("stats of one layer") << QStringList{"export",  f16, "--tensor", "stats",
                                                       "--layer", "1", "--out",    "s.csv"}
                                        << 2 << "--tensor stats covers every layer and head";
    QTest::newRow("rollout of cross-attention")
        << QStringList{"export", fixture("cross_htt_f32.npy"), "--tensor", "rollout", "--out", m_dir.filePath("c.npy")}
        << 1 << "rollout: needs square attention maps";
    QTest::newRow("missing input") << QStringList{"stats", "/nonexistent/a.npy", "--out", "x.json"} << 1
                                   << "/nonexistent/a.npy: cannot open the file";
    const QString project = m_dir.filePath("project.json");
    QFile::remove(project);
    QFile::copy(test::sourcePath("resources/examples/multihead-causal.attnscope.json"), project);
    QTest::newRow("output is the input") << QStringList{"stats", project, "--out", project} << 2 << "is the input file";
    QTest::newRow("--softmax on attention")
        << QStringList{"stats", f16, "--softmax", "--out", m_dir.filePath("s.json")} << 1
        << "holds attention weights already (row sums 1 to 1: every row sums to 1); leave out --softmax";
    QTest::newRow("--softmax on a project")
        << QStringList{"stats", project, "--softmax", "--out", m_dir.filePath("s.json")} << 2
        << "--softmax is for attention files";
    QTest::newRow("render --softmax on a project")
        << QStringList{"render", project, "--softmax", "--out", m_dir.filePath("s.png")} << 2
        << "--softmax is for attention files";
}

void TestStats::errors()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    const QByteArray before = readAll(args.value(1));
    const auto run = test::runCli(args);
    QCOMPARE(run.code, code);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QCOMPARE(run.err.count('\n'), 1);
    QCOMPARE(readAll(args.value(1)), before); // the input is untouched
}

void TestStats::scoresAreSaidOnStderr()
{
    // Scores before softmax: every command that reads the file says so in one stderr line that
    // names the row sums, and still does what it was asked.
    const QString scores = fixture("rows/scores_lhtt_f32.npy");
    const QList<QStringList> commands = {
        {"stats", scores, "--out", m_dir.filePath("scores.json")},
        {"export", scores, "--tensor", "weights", "--out", m_dir.filePath("scores.npy")},
        {"render", scores, "--view", "heads", "--out", m_dir.filePath("scores.png")},
    };
    for (const QStringList &args : commands) {
        const auto run = test::runCli(args);
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.startsWith(scores + ": row sums -"), qPrintable(run.err));
        QVERIFY2(
            run.err.contains("these look like scores before softmax, not attention weights (--softmax applies it)"),
            qPrintable(run.err));
    }
    // Softmax rows give no line at all.
    const auto clean = test::runCli({"stats", fixture("lhtt_f16.npy"), "--out", m_dir.filePath("clean.json")});
    QVERIFY2(clean.code == 0, qPrintable(clean.err));
    QCOMPARE(clean.err, QString());
}

void TestStats::softmaxMakesScoresAttention()
{
    const QString out = m_dir.filePath("soft.npy");
    const auto run =
        test::runCli({"export", fixture("rows/scores_lhtt_f32.npy"), "--softmax", "--tensor", "weights", "--out", out});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QVERIFY2(run.err.contains("softmax applied to every row"), qPrintable(run.err));
    auto got = readNpyFile(out.toStdString());
    auto expected = readNpyFile(fixture("rows/expected_scores_lhtt_f32_softmax.npy").toStdString());
    QVERIFY(got.ok() && expected.ok());
    QCOMPARE(got->shape, expected->shape);
    for (std::size_t n = 0; n < got->data.size(); ++n)
        QVERIFY2(std::abs(got->data[n] - expected->data[n]) < 1e-6, qPrintable(QString::number(n)));
    // The statistics of the softmaxed file are those of attention: entropy is never negative.
    const QString stats = m_dir.filePath("soft.json");
    QCOMPARE(test::runCli({"stats", fixture("rows/scores_lhtt_f32.npy"), "--softmax", "--out", stats}).code, 0);
    for (const QJsonValue &row : readJson(stats).value("stats").toArray())
        QVERIFY(row.toObject().value("entropy").toDouble() >= 0);
}

void TestStats::maskedAndSinkRowsAreSaidNotRefused()
{
    const auto run = test::runCli({"stats", fixture("rows/sinks_htt_f16.npy"), "--out", m_dir.filePath("sinks.json")});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QCOMPARE(run.err.count('\n'), 1);
    QVERIFY2(run.err.contains("1 of 10 rows all zero (masked), 5 of 10 rows below 1 (a sink kept out)"),
             qPrintable(run.err));
    QVERIFY2(!run.err.contains("scores"), qPrintable(run.err));
}

QTEST_GUILESS_MAIN(TestStats)
#include "tst_stats.moc"
