// attnscope-cli compute on batches and separate value inputs (design.md, "A batch"): every
// tensor gains a leading B axis and reproduces the tutorials' own PyTorch classes; a 2-D
// project keeps its shapes; malformed batches are refused on one line naming the field.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "../common/TutorialFixtures.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace attnscope;
using attnscope::test::runCli;

class TestCliBatch : public QObject
{
    Q_OBJECT

private slots:
    void computeReproducesTutorialClasses_data();
    void computeReproducesTutorialClasses();
    void unbatchedProjectKeepsItsShapes();
    void malformedBatchIsRefusedNamingTheField();
    void poolRunsEverySequence_data();
    void poolRunsEverySequence();
    void renderDrawsTheSequenceAsked();
};

void TestCliBatch::computeReproducesTutorialClasses_data()
{
    test::addTutorialFixtureRows();
}

void TestCliBatch::computeReproducesTutorialClasses()
{
    QFETCH(QString, folder);
    QTemporaryDir tmp;
    const auto r = runCli({"compute", folder + "/project.attnscope.json", "--out", tmp.path(), "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("sequences on a leading axis"));
    const std::string diff = test::checkTutorialFixture(folder, tmp.path());
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestCliBatch::unbatchedProjectKeepsItsShapes()
{
    QTemporaryDir tmp;
    const auto r = runCli({"compute", test::example("self-attention-tutorial"), "--out", tmp.path()});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    auto weights = readNpyFile((tmp.path() + "/weights.npy").toStdString());
    QVERIFY(weights.ok());
    QCOMPARE(weights->shape, (std::vector<std::int64_t>{1, 3, 3})); // [H, Tq, Tk]
    auto output = readNpyFile((tmp.path() + "/output.npy").toStdString());
    QCOMPARE(output->shape.size(), size_t(2));
}

void TestCliBatch::malformedBatchIsRefusedNamingTheField()
{
    QTemporaryDir tmp;
    const QString path = tmp.filePath("p.attnscope.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 1, "headDimV": 1,
      "query": {"tokens": ["a", "b"], "x": [[[1], [2]], [[3], [4]]]},
      "weights": {"q": [[1]], "k": [[1]], "v": [[1]]},
      "mask": {"keyPadding": [[1, 1], [1, 1], [1, 0]]}})");
    f.close();
    const auto r = runCli({"compute", path, "--out", tmp.filePath("out")});
    QVERIFY(r.code != 0);
    QCOMPARE(r.err.trimmed(),
             "attnscope-cli: " + path + ": mask.keyPadding: expected 2 rows (one per sequence), found 3");
    QVERIFY(!QFile::exists(tmp.filePath("out")));
}

void TestCliBatch::renderDrawsTheSequenceAsked()
{
    // render drew sequence 0 of a batch without saying so, and had no way to draw another.
    const QString batch = test::sourcePath("tests/fixtures/tutorial/seed000_mha_batch_padding/project.attnscope.json");
    QTemporaryDir tmp;
    const QString first = tmp.filePath("first.png"), second = tmp.filePath("second.png");
    const auto plain = runCli({"render", batch, "--view", "mask", "--out", first, "--backend", "cpu"});
    QVERIFY2(plain.code == 0, qPrintable(plain.err));
    QVERIFY2(plain.out.contains("is a batch of 2 sequences; drawing sequence 0 (--sequence N draws another)"),
             qPrintable(plain.out));
    const auto asked =
        runCli({"render", batch, "--view", "mask", "--sequence", "1", "--out", second, "--backend", "cpu"});
    QVERIFY2(asked.code == 0, qPrintable(asked.err));
    QVERIFY2(!asked.out.contains("drawing sequence 0"), qPrintable(asked.out));
    const QImage a(first), b(second);
    QVERIFY(!a.isNull() && !b.isNull());
    QVERIFY(a != b); // the two sequences pad different keys
    // The same sequence asked by number draws the same figure as the default.
    const QString again = tmp.filePath("again.png");
    QCOMPARE(runCli({"render", batch, "--view", "mask", "--sequence", "0", "--out", again, "--backend", "cpu"}).code,
             0);
    QCOMPARE(QImage(again), a);

    const auto beyond = runCli({"render", batch, "--sequence", "2", "--out", tmp.filePath("x.png")});
    QCOMPARE(beyond.code, 2);
    QCOMPARE(beyond.err.trimmed(),
             QStringLiteral("attnscope-cli: --sequence 2: %1 has 2 sequences, numbered 0 to 1").arg(batch));
    const auto single =
        runCli({"render", test::example("self-attention-tutorial"), "--sequence", "1", "--out", tmp.filePath("y.png")});
    QCOMPARE(single.code, 2);
    QVERIFY2(single.err.contains("is not a batch (one sequence, numbered 0)"), qPrintable(single.err));
    QVERIFY(!QFile::exists(tmp.filePath("x.png")) && !QFile::exists(tmp.filePath("y.png")));
}

void TestCliBatch::poolRunsEverySequence_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("mode");
    QTest::addColumn<int>("bins");
    const QDir dir(test::sourcePath("tests/fixtures/tutorial"));
    const auto cases = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY2(cases.size() >= 2, "the tutorial fixtures are missing");
    for (const QString &c : cases)
        for (const char *mode : {"max", "mean"})
            for (int bins : {2, 64})
                QTest::addRow("%s %s %d", qPrintable(c), mode, bins) << dir.filePath(c) << QString(mode) << bins;
}

// compute --pool on a batch equals pooling, sequence by sequence, the full compute's weights
// (design.md's cells: max or mean over the block, masked weights 0), with the leading B axis.
void TestCliBatch::poolRunsEverySequence()
{
    QFETCH(QString, folder);
    QFETCH(QString, mode);
    QFETCH(int, bins);
    const QString project = folder + "/project.attnscope.json";
    QTemporaryDir tmp;
    const auto full = runCli({"compute", project, "--out", tmp.filePath("full"), "--backend", "cpu"});
    QVERIFY2(full.code == 0, qPrintable(full.err));
    const auto pooled = runCli({"compute", project, "--out", tmp.filePath("pooled"), "--backend", "cpu", "--pool",
                                QString::number(bins), "--pool-mode", mode});
    QVERIFY2(pooled.code == 0, qPrintable(pooled.err));
    QVERIFY2(pooled.out.contains("sequences on a leading axis"), qPrintable(pooled.out));
    auto read = [&](const QString &file) { return readNpyFile(tmp.filePath(file).toStdString()); };
    auto weights = read("full/weights.npy"), output = read("full/output.npy");
    auto gotPooled = read("pooled/weights_pooled.npy"), gotEntropy = read("pooled/entropy.npy"),
         gotOutput = read("pooled/output.npy");
    QVERIFY(weights.ok() && output.ok() && gotPooled.ok() && gotEntropy.ok() && gotOutput.ok());
    QCOMPARE(weights->shape.size(), size_t(4));
    const std::int64_t B = weights->shape[0], H = weights->shape[1], Tq = weights->shape[2], Tk = weights->shape[3];
    QVERIFY(B >= 2);
    const std::int64_t Nq = std::min<std::int64_t>(bins, Tq), Nk = std::min<std::int64_t>(bins, Tk);
    QCOMPARE(gotPooled->shape, (std::vector<std::int64_t>{B, H, Nq, Nk}));
    QCOMPARE(gotEntropy->shape, (std::vector<std::int64_t>{B, H, Tq}));
    QCOMPARE(gotOutput->shape, output->shape);
    QCOMPARE(gotOutput->shape.front(), B);
    for (std::size_t i = 0; i < output->data.size(); ++i)
        QVERIFY2(std::abs(gotOutput->data[i] - output->data[i]) <= 1e-4 * std::max(1.0, std::abs(output->data[i])),
                 qPrintable(QString::number(i)));
    auto w = [&](std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
        return weights->data[std::size_t(((b * H + h) * Tq + i) * Tk + j)];
    };
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h) {
            for (std::int64_t i = 0; i < Tq; ++i) {
                double entropy = 0;
                for (std::int64_t j = 0; j < Tk; ++j)
                    if (w(b, h, i, j) > 0)
                        entropy -= w(b, h, i, j) * std::log(w(b, h, i, j));
                const double got = gotEntropy->data[std::size_t((b * H + h) * Tq + i)];
                QVERIFY2(std::abs(got - entropy) <= 1e-5, qPrintable(QStringLiteral("entropy %1 %2 %3: %4, expected %5")
                                                                         .arg(b)
                                                                         .arg(h)
                                                                         .arg(i)
                                                                         .arg(got)
                                                                         .arg(entropy)));
            }
            for (std::int64_t a = 0; a < Nq; ++a)
                for (std::int64_t c = 0; c < Nk; ++c) {
                    double max = 0, sum = 0;
                    std::int64_t n = 0;
                    for (std::int64_t i = a * Tq / Nq; i < (a + 1) * Tq / Nq; ++i)
                        for (std::int64_t j = c * Tk / Nk; j < (c + 1) * Tk / Nk; ++j, ++n) {
                            max = std::max(max, w(b, h, i, j));
                            sum += w(b, h, i, j);
                        }
                    const double expected = mode == "mean" ? sum / double(n) : max;
                    const double got = gotPooled->data[std::size_t(((b * H + h) * Nq + a) * Nk + c)];
                    QVERIFY2(std::abs(got - expected) <= 1e-5,
                             qPrintable(QStringLiteral("cell %1 %2 %3 %4: %5, expected %6")
                                            .arg(b)
                                            .arg(h)
                                            .arg(a)
                                            .arg(c)
                                            .arg(got)
                                            .arg(expected)));
                }
        }
}

QTEST_GUILESS_MAIN(TestCliBatch)
#include "tst_cli_batch.moc"
