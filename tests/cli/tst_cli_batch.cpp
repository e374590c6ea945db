// attnscope-cli compute on batches and separate value inputs (design.md, "A batch"): every
// tensor gains a leading B axis and reproduces the tutorials' own PyTorch classes; a 2-D
// project keeps its shapes; malformed batches are refused on one line naming the field.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "../common/TutorialFixtures.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFile>
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
