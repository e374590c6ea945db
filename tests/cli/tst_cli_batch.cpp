// attnscope-cli compute on batches and separate value inputs (design.md, "A batch"): every
// tensor gains a leading B axis and reproduces the tutorials' own PyTorch classes; a 2-D
// project keeps its shapes; malformed batches are refused on one line naming the field.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "../common/TutorialFixtures.h"

#include "core/Npy.h"

#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

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
    void poolRefusesABatch();
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

void TestCliBatch::poolRefusesABatch()
{
    QTemporaryDir tmp;
    const QString project =
        test::sourcePath("tests/fixtures/tutorial/seed000_mha_batch_padding/project.attnscope.json");
    const auto r = runCli({"compute", project, "--out", tmp.path(), "--pool", "2"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("holds a batch"), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestCliBatch)
#include "tst_cli_batch.moc"
