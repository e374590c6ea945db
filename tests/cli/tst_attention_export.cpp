// attnscope-cli export of attention maps (issue 9): weights of the whole set, of one layer or of
// one (layer, head), and one layer's mean over heads, as float32 .npy read back and compared with
// the fixture's own values; layers and heads out of range refused with the valid range, nothing
// written.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/formats/Npy.h"

#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

QString fixture(const QString &name)
{
    return test::sourcePath("tests/fixtures/attention/" + name);
}

// Lines of stderr without Qt's start-up chatter.
int errorLines(const QString &err)
{
    int n = 0;
    for (const QString &line : err.split('\n', Qt::SkipEmptyParts))
        n += line.startsWith(QLatin1String("QStandardPaths:")) ? 0 : 1;
    return n;
}

} // namespace

class TestAttentionExport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void weightsSlices_data();
    void weightsSlices();
    void meanOverHeadsOfALayer();
    void meanOfAProjectIsThatOfItsWeights();
    void errorsWriteNothing_data();
    void errorsWriteNothing();
    void oneMatrixAsCsvAndStatsAsAFile();

private:
    QTemporaryDir m_dir;
    NpyArray m_all; // lhtt_f32.npy [3, 4, 11, 11]
};

void TestAttentionExport::initTestCase()
{
    QVERIFY(m_dir.isValid());
    auto all = readNpyFile(fixture("lhtt_f32.npy").toStdString());
    QVERIFY(all.ok());
    m_all = *all;
    QCOMPARE(m_all.shape, (std::vector<std::int64_t>{3, 4, 11, 11}));
}

void TestAttentionExport::weightsSlices_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("layer"); // -1: every layer
    QTest::addColumn<int>("head");  // -1: every head
    QTest::newRow("whole set") << QStringList{} << -1 << -1;
    QTest::newRow("layer 1") << QStringList{"--layer", "1"} << 1 << -1;
    QTest::newRow("layer 2 head 3") << QStringList{"--layer", "2", "--head", "3"} << 2 << 3;
    QTest::newRow("layer 0 head 0") << QStringList{"--layer", "0", "--head", "0"} << 0 << 0;
}

void TestAttentionExport::weightsSlices()
{
    QFETCH(QStringList, args);
    QFETCH(int, layer);
    QFETCH(int, head);
    const QString out = m_dir.filePath(QStringLiteral("w-%1.npy").arg(QTest::currentDataTag()).replace(' ', '_'));
    const auto run =
        test::runCli(QStringList{"export", fixture("lhtt_f32.npy"), "--tensor", "weights", "--out", out} + args);
    QVERIFY2(run.code == 0, qPrintable(run.err));
    auto got = readNpyFile(out.toStdString());
    QVERIFY(got.ok());
    std::vector<std::int64_t> shape;
    if (layer < 0)
        shape.push_back(3);
    if (head < 0)
        shape.push_back(4);
    shape.insert(shape.end(), {11, 11});
    QCOMPARE(got->shape, shape);
    std::size_t k = 0;
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h)
            if ((layer < 0 || l == layer) && (head < 0 || h == head))
                for (std::size_t i = 0; i < 121; ++i, ++k)
                    QCOMPARE(got->data[k], m_all.data[std::size_t((l * 4 + h) * 121) + i]);
    QCOMPARE(k, got->data.size());
}

void TestAttentionExport::meanOverHeadsOfALayer()
{
    const QString out = m_dir.filePath("mean.npy");
    const auto run =
        test::runCli({"export", fixture("lhtt_f32.npy"), "--tensor", "mean", "--layer", "2", "--out", out});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    auto got = readNpyFile(out.toStdString());
    QVERIFY(got.ok());
    QCOMPARE(got->shape, (std::vector<std::int64_t>{11, 11}));
    for (std::size_t i = 0; i < 121; ++i) {
        double sum = 0;
        for (int h = 0; h < 4; ++h)
            sum += m_all.data[std::size_t((2 * 4 + h) * 121) + i];
        QVERIFY2(std::abs(got->data[i] - sum / 4) < 1e-6, qPrintable(QString::number(i)));
    }
}

void TestAttentionExport::meanOfAProjectIsThatOfItsWeights()
{
    const QString project = test::example("multihead-causal");
    const QString dir = m_dir.filePath("computed");
    auto run = test::runCli({"compute", project, "--out", dir, "--backend", "cpu"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const QString mean = m_dir.filePath("project-mean.npy");
    run = test::runCli({"export", project, "--tensor", "mean", "--out", mean, "--backend", "cpu"});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    auto weights = readNpyFile((dir + "/weights.npy").toStdString());
    auto got = readNpyFile(mean.toStdString());
    QVERIFY(weights.ok() && got.ok());
    const std::int64_t heads = weights->shape[0], cells = weights->shape[1] * weights->shape[2];
    QCOMPARE(got->shape, (std::vector<std::int64_t>{weights->shape[1], weights->shape[2]}));
    for (std::int64_t i = 0; i < cells; ++i) {
        double sum = 0;
        for (std::int64_t h = 0; h < heads; ++h)
            sum += weights->data[std::size_t(h * cells + i)];
        QVERIFY(std::abs(got->data[std::size_t(i)] - sum / double(heads)) < 1e-6);
    }
}

void TestAttentionExport::errorsWriteNothing_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString f = fixture("lhtt_f32.npy");
    QTest::newRow("layer out of range") << QStringList{f, "--tensor", "weights", "--layer", "3"} << 2
                                        << "--layer 3: the input has 3 layer(s), numbered 0 to 2 (0-based)";
    QTest::newRow("head out of range") << QStringList{f, "--tensor", "weights", "--layer", "0", "--head", "4"} << 2
                                       << "--head 4: the input has 4 head(s), numbered 0 to 3 (0-based)";
    QTest::newRow("negative layer") << QStringList{f, "--tensor", "mean", "--layer", "-1"} << 2
                                    << "--layer: expected a whole number from 0 (0-based), found \"-1\"";
    QTest::newRow("head needs layer") << QStringList{f, "--tensor", "weights", "--head", "1"} << 2
                                      << "needs --layer: the input has 3 layers, numbered 0 to 2";
    QTest::newRow("mean needs layer") << QStringList{f, "--tensor", "mean"} << 2 << "needs --layer";
    QTest::newRow("mean with head") << QStringList{f, "--tensor", "mean", "--layer", "0", "--head", "0"} << 2
                                    << "leave out --head";
    QTest::newRow("rollout with layer") << QStringList{f, "--tensor", "rollout", "--layer", "0"} << 2
                                        << "leave out --layer and --head";
    QTest::newRow("not a map tensor") << QStringList{f, "--tensor", "q"} << 2
                                      << "expected weights, rollout, mean or stats for attention maps";
    QTest::newRow("one-layer file, head out of range")
        << QStringList{fixture("htt_f32.npy"), "--tensor", "weights", "--head", "4"} << 2
        << "--head 4: the input has 4 head(s), numbered 0 to 3";
}

void TestAttentionExport::errorsWriteNothing()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    // An existing file of that name survives; no new one appears.
    const QString out = m_dir.filePath("refused.npy");
    {
        QFile f(out);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("old");
    }
    const auto run = test::runCli(QStringList{"export"} + args + QStringList{"--out", out});
    QCOMPARE(run.code, code);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QCOMPARE(errorLines(run.err), 1);
    QCOMPARE(test::readAll(out), QByteArray("old"));
    QVERIFY(QFile::remove(out));
    QVERIFY(test::runCli(QStringList{"export"} + args + QStringList{"--out", out}).code == code);
    QVERIFY(!QFile::exists(out));
}

void TestAttentionExport::oneMatrixAsCsvAndStatsAsAFile()
{
    // One head as token-labelled CSV: the file's own values, its tokens on both axes.
    const QString csv = m_dir.filePath(QStringLiteral("l2h3.csv"));
    auto run = test::runCli(
        {"export", fixture("lhtt_f32.npy"), "--tensor", "weights", "--layer", "2", "--head", "3", "--out", csv});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 12);
    QCOMPARE(lines[0].split(',').value(3), QStringLiteral("transform"));
    for (int i = 0; i < 11; ++i) {
        const QStringList cells = lines[i + 1].split(',');
        QCOMPARE(cells.size(), 12);
        for (int j = 0; j < 11; ++j)
            QCOMPARE(cells[j + 1].toFloat(), float(m_all.data[std::size_t((2 * 4 + 3) * 121 + i * 11 + j)]));
    }
    // The rollout as CSV: NumPy's rollout of the same file.
    const QString rollout = m_dir.filePath(QStringLiteral("rollout.csv"));
    run = test::runCli({"export", fixture("lhtt_f32.npy"), "--tensor", "rollout", "--out", rollout});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    auto expected = readNpyFile(fixture("expected_lhtt_f32_rollout.npy").toStdString());
    QVERIFY(expected.ok());
    QFile r(rollout);
    QVERIFY(r.open(QIODevice::ReadOnly));
    const QStringList rows = QString::fromUtf8(r.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 12);
    for (int i = 0; i < 11; ++i)
        for (int j = 0; j < 11; ++j)
            QVERIFY(std::abs(rows[i + 1].split(',')[j + 1].toDouble() - expected->data[std::size_t(i * 11 + j)]) <
                    1e-6);
    // The statistics through export are what `stats` writes.
    for (const char *suffix : {"json", "csv"}) {
        const QString viaExport = m_dir.filePath(QStringLiteral("export-stats.") + suffix);
        const QString viaStats = m_dir.filePath(QStringLiteral("stats-stats.") + suffix);
        run = test::runCli({"export", fixture("lhtt_f32.npy"), "--tensor", "stats", "--out", viaExport});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        run = test::runCli({"stats", fixture("lhtt_f32.npy"), "--out", viaStats});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QCOMPARE(test::readAll(viaExport), test::readAll(viaStats));
        QVERIFY(!test::readAll(viaExport).isEmpty());
    }
}

QTEST_GUILESS_MAIN(TestAttentionExport)
#include "tst_attention_export.moc"
