// Blocks of numbers pasted into the editor's tables (parseNumberBlock): what a teacher copies from
// a spreadsheet, NumPy's print or repr, or a tutorial's Python list, and the one-line refusals.

#include "core/formats/NumberBlock.h"

#include <QObject>
#include <QTest>

using namespace attnscope;

class TestNumberBlock : public QObject
{
    Q_OBJECT

private slots:
    void readsEveryWayNumbersAreWritten_data();
    void readsEveryWayNumbersAreWritten();
    void refusesNamingTheLine_data();
    void refusesNamingTheLine();
};

void TestNumberBlock::readsEveryWayNumbersAreWritten_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("python list, one line") << "[[1, 0, 1, 0], [0, 2, 0, 2.5]]";
    QTest::newRow("python list, lines") << "[[1, 0, 1, 0],\n [0, 2, 0, 2.5]]\n";
    QTest::newRow("numpy print") << "[[1.  0.  1.  0. ]\n [0.  2.  0.  2.5]]";
    QTest::newRow("numpy repr") << "array([[1. , 0. , 1. , 0. ],\n       [0. , 2. , 0. , 2.5]], dtype=float32)";
    QTest::newRow("torch repr")
        << "tensor([[1.0000, 0.0000, 1.0000, 0.0000],\n        [0.0000, 2.0000, 0.0000, 2.5000]])";
    QTest::newRow("spreadsheet") << "1\t0\t1\t0\r\n0\t2\t0\t2.5\r\n";
    QTest::newRow("spaces, trailing blank line") << "1 0 1 0\n0 2 0 25e-1\n\n";
}

void TestNumberBlock::readsEveryWayNumbersAreWritten()
{
    QFETCH(QString, text);
    auto block = parseNumberBlock(text.toStdString());
    QVERIFY2(block, block ? "" : block.message().c_str());
    QCOMPARE(block->rows, 2);
    QCOMPARE(block->cols, 4);
    QCOMPARE(block->values, (std::vector<double>{1, 0, 1, 0, 0, 2, 0, 2.5}));
    QCOMPARE(block->at(1, 3), 2.5);
}

void TestNumberBlock::refusesNamingTheLine_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("ragged") << "1 2 3\n4 5"
                            << "line 2 has 2 numbers, line 1 has 3";
    QTest::newRow("a word") << "1 2\n3 cat"
                            << "line 2, number 2: \"cat\" is not a number";
    QTest::newRow("nan") << "nan 1"
                         << "line 1, number 1: \"nan\" is not a number";
    QTest::newRow("beyond float32") << "1e39"
                                    << "line 1, number 1: 1e39 is beyond float32 (\u00b13.4e38)";
    QTest::newRow("nothing") << " \n[]\n"
                             << "no numbers";
    QTest::newRow("control bytes") << "1\x1b[2J"
                                   << "line 1, number 1: \"1\\x1b\" is not a number";
}

void TestNumberBlock::refusesNamingTheLine()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    auto block = parseNumberBlock(text.toStdString());
    QVERIFY(!block);
    QCOMPARE(QString::fromStdString(block.message()), message);
}

QTEST_APPLESS_MAIN(TestNumberBlock)
#include "tst_numberblock.moc"
