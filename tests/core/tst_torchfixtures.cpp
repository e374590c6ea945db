// The CPU engine against fixtures PyTorch computed in float64 (tests/fixtures/torch, made by
// make_torch_fixtures.py): design.md's formulas written with torch ops, and
// nn.MultiheadAttention itself with its weights converted to our convention.

#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/TraceExport.h"

#include <QDir>
#include <QObject>
#include <QTest>

using namespace attnscope;

class TestTorchFixtures : public QObject
{
    Q_OBJECT

private slots:
    void matchesPyTorch_data();
    void matchesPyTorch();
};

void TestTorchFixtures::matchesPyTorch_data()
{
    QTest::addColumn<QString>("folder");
    const QDir dir(test::sourcePath("tests/fixtures/torch"));
    const auto cases = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY2(cases.size() >= 25, "the PyTorch fixtures are missing");
    for (const QString &c : cases)
        QTest::newRow(qPrintable(c)) << dir.filePath(c);
}

void TestTorchFixtures::matchesPyTorch()
{
    QFETCH(QString, folder);
    auto project = readProjectFile((folder + "/project.attnscope.json").toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    auto trace = CpuBackend().compute(project->problem);
    QVERIFY(trace.ok());

    // Compare through the .npy files `compute` writes, so the export layout is checked too.
    const auto ours = traceNpyFiles(*trace);
    int compared = 0;
    for (const auto &[file, bytes] : ours) {
        const QString expectedPath = folder + "/" + QString::fromStdString(file);
        if (!QFile::exists(expectedPath))
            continue; // nn.MultiheadAttention exposes only weights and output
        auto expected = readNpyFile(expectedPath.toStdString());
        QVERIFY2(expected.ok(), expected.ok() ? "" : expected.message().c_str());
        auto got = parseNpy(bytes);
        QVERIFY(got.ok());
        const std::string diff = test::compareNpy(file, *got, *expected);
        QVERIFY2(diff.empty(), diff.c_str());
        ++compared;
    }
    QVERIFY(compared >= 2);
}

QTEST_GUILESS_MAIN(TestTorchFixtures)
#include "tst_torchfixtures.moc"
