// The built-in tutorial examples (resources/examples/tutorialN-*/, File > Examples): each one
// computes with `attnscope-cli compute` and gives what the tutorial's own PyTorch class gives
// (seed 000 and seed 004: the committed fixtures of tests/fixtures/tutorial; the others:
// tests/fixtures/tutorial-examples, both written with PyTorch). The loose examples compute too.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFileInfo>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;
using attnscope::test::runCli;

namespace {

// The PyTorch results an example must reproduce.
QString expectedFolder(const QString &exampleName)
{
    if (exampleName == QLatin1String("mha-batch-padding"))
        return test::sourcePath(QStringLiteral("tests/fixtures/tutorial/seed000_mha_batch_padding"));
    if (exampleName == QLatin1String("mha-three-inputs"))
        return test::sourcePath(QStringLiteral("tests/fixtures/tutorial/seed004_mha_three_inputs"));
    return test::sourcePath(QStringLiteral("tests/fixtures/tutorial-examples/") + exampleName);
}

} // namespace

class TestExamplesCli : public QObject
{
    Q_OBJECT

private slots:
    void everyExampleComputes_data();
    void everyExampleComputes();
    void tutorialExamplesMatchPyTorch_data();
    void tutorialExamplesMatchPyTorch();
};

void TestExamplesCli::everyExampleComputes_data()
{
    QTest::addColumn<QString>("path");
    const QDir root(test::sourcePath(QStringLiteral("resources/examples")));
    const QStringList filter{QStringLiteral("*.attnscope.json")};
    for (const QString &name : root.entryList(filter, QDir::Files))
        QTest::newRow(qPrintable(name)) << root.filePath(name);
    for (const QString &folder : root.entryList({QStringLiteral("tutorial*")}, QDir::Dirs))
        for (const QString &name : QDir(root.filePath(folder)).entryList(filter, QDir::Files))
            QTest::newRow(qPrintable(folder + QLatin1Char('/') + name))
                << root.filePath(folder + QLatin1Char('/') + name);
}

void TestExamplesCli::everyExampleComputes()
{
    QFETCH(QString, path);
    QTemporaryDir tmp;
    const auto r = runCli({"compute", path, "--out", tmp.path(), "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    for (const char *name : {"q", "k", "v", "scores", "weights", "context", "output"})
        QVERIFY2(readNpyFile((tmp.path() + "/" + name + ".npy").toStdString()).ok(), name);
}

void TestExamplesCli::tutorialExamplesMatchPyTorch_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");
    const QDir root(test::sourcePath(QStringLiteral("resources/examples")));
    int count = 0;
    for (const QString &folder : root.entryList({QStringLiteral("tutorial*")}, QDir::Dirs))
        for (const QString &name :
             QDir(root.filePath(folder)).entryList({QStringLiteral("*.attnscope.json")}, QDir::Files)) {
            const QString base = name.section(QLatin1Char('.'), 0, 0);
            QTest::newRow(qPrintable(base)) << root.filePath(folder + QLatin1Char('/') + name) << expectedFolder(base);
            ++count;
        }
    // The list: seed 000 MHA and CrossAttention, the worked example, seed 002's
    // 512-wide cross-attention, seed 003's single and multi head, seed 004's three inputs.
    QCOMPARE(count, 7);
}

void TestExamplesCli::tutorialExamplesMatchPyTorch()
{
    QFETCH(QString, path);
    QFETCH(QString, expected);
    QVERIFY2(QFileInfo::exists(expected + "/output.npy"), qPrintable(expected + ": no PyTorch result"));
    QTemporaryDir tmp;
    const auto r = runCli({"compute", path, "--out", tmp.path(), "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    for (const char *name : {"weights", "output"}) {
        auto want = readNpyFile((expected + "/" + name + ".npy").toStdString());
        auto got = readNpyFile((tmp.path() + "/" + name + ".npy").toStdString());
        QVERIFY2(want && got, name);
        const std::string diff = test::compareNpy(name, *got, *want);
        QVERIFY2(diff.empty(), diff.c_str());
    }
}

QTEST_GUILESS_MAIN(TestExamplesCli)
#include "tst_examples_cli.moc"
