// The self-attention tutorial's 3-D "weighted values" tensor in the step view: the worked
// example opened from File > Examples shows values[:, None] * softmax.T[:, :, None] printed as
// PyTorch prints it, and its sum over j, the output; both checked against the tutorial's
// inputs computed here with plain loops. Larger or multi-head projects say why it is hidden.
// Screenshots in English and Chinese are kept in the build tree.

#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/TeachingView.h"

#include <QAction>
#include <QDir>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnscope;

namespace {

const QString kWorkedExample = QStringLiteral(":/examples/tutorial2-self-attention/worked-example.attnscope.json");

// The tutorial's inputs and weights (tutorials.md, section 2), multiplied on the right.
const double kInputs[3][4] = {{1, 0, 1, 0}, {0, 2, 0, 2}, {1, 1, 1, 1}};
const double kWKey[4][3] = {{0, 0, 1}, {1, 1, 0}, {0, 1, 0}, {1, 1, 0}};
const double kWQuery[4][3] = {{1, 0, 1}, {1, 0, 0}, {0, 0, 1}, {0, 1, 1}};
const double kWValue[4][3] = {{0, 2, 0}, {0, 3, 0}, {1, 0, 3}, {1, 1, 0}};

struct Tutorial {
    double weighted[3][3][3] = {}; // [j][i][d]
    double outputs[3][3] = {};     // [i][d]
};

Tutorial computeTutorial()
{
    double keys[3][3] = {}, queries[3][3] = {}, values[3][3] = {};
    for (int t = 0; t < 3; ++t)
        for (int c = 0; c < 3; ++c)
            for (int e = 0; e < 4; ++e) {
                keys[t][c] += kInputs[t][e] * kWKey[e][c];
                queries[t][c] += kInputs[t][e] * kWQuery[e][c];
                values[t][c] += kInputs[t][e] * kWValue[e][c];
            }
    Tutorial out;
    for (int i = 0; i < 3; ++i) {
        double scores[3] = {}, sum = 0.0;
        for (int j = 0; j < 3; ++j)
            for (int c = 0; c < 3; ++c)
                scores[j] += queries[i][c] * keys[j][c]; // no scaling in the tutorial
        for (int j = 0; j < 3; ++j)
            sum += std::exp(scores[j]);
        for (int j = 0; j < 3; ++j)
            for (int d = 0; d < 3; ++d) {
                out.weighted[j][i][d] = std::exp(scores[j]) / sum * values[j][d];
                out.outputs[i][d] += out.weighted[j][i][d];
            }
    }
    return out;
}

bool settle(MainWindow &w)
{
    return w.computeController()->waitForIdle(30000) && w.currentResult() &&
           w.currentResult()->generation == w.computeController()->latestGeneration();
}

// The numbers of the n-th <pre> block after `from` (HTML-escaped text, as the view has it).
QList<double> preNumbers(const QString &html, qsizetype from, int n, QString *text)
{
    qsizetype at = from;
    for (int k = 0; k <= n; ++k) {
        at = html.indexOf(QStringLiteral("<pre"), at + 1);
        if (at < 0)
            return {};
    }
    const qsizetype start = html.indexOf(QLatin1Char('>'), at) + 1;
    *text = html.mid(start, html.indexOf(QStringLiteral("</pre>"), start) - start);
    static const QRegularExpression number(QStringLiteral("-?\\d+\\.\\d*(?:e[+-]\\d+)?"));
    QList<double> out;
    for (auto it = number.globalMatch(*text); it.hasNext();)
        out << it.next().captured(0).toDouble();
    return out;
}

bool near(double printed, double expected)
{
    // 4 decimals, fixed or scientific.
    return std::abs(printed - expected) <= 1e-4 * std::max(1.0, std::abs(expected));
}

QString shotDir()
{
    QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR));
    return QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR);
}

} // namespace

class TestWeightedValues : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void workedExampleShowsTheTutorialsTensor();
    void hiddenWithAReason_data();
    void hiddenWithAReason();
    void chineseStepView();
};

void TestWeightedValues::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestWeightedValues::cleanup()
{
    installTranslators(QLocale(QLocale::English, QLocale::UnitedStates));
}

void TestWeightedValues::workedExampleShowsTheTutorialsTensor()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QAction *example = nullptr;
    for (QAction *a : w.findChildren<QAction *>())
        if (a->data().toString() == kWorkedExample)
            example = a;
    QVERIFY2(example, "the worked example is not in File > Examples");
    example->trigger();
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QVERIFY(settle(w));
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    const QString html = w.views()->teaching()->html();
    const qsizetype step = html.indexOf(QStringLiteral("weighted values[j, i, :] = softmax[i, j] \u00b7 V[j]"));
    QVERIFY2(step >= 0, qPrintable(html.right(2000)));
    QVERIFY(html.indexOf(QStringLiteral("[Tk, Tq, dV] = [3, 3, 3]"), step) > step);
    QVERIFY(html.indexOf(QStringLiteral("values[:, None] * softmax.T[:, :, None]"), step) > step);

    const Tutorial tutorial = computeTutorial();
    QString tensorText;
    const QList<double> tensor = preNumbers(html, step, 0, &tensorText);
    QCOMPARE(tensor.size(), 27);
    QVERIFY2(tensorText.startsWith(QStringLiteral("tensor([[[")), qPrintable(tensorText));
    QVERIFY2(tensorText.endsWith(QStringLiteral("]]])")), qPrintable(tensorText));
    QCOMPARE(tensorText.count(QStringLiteral("\n\n")), 2); // three slices [j], a blank line between
    QCOMPARE(tensorText.count(QLatin1Char('\n')), 10);     // 2 in each slice, 2 between slices
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i)
            for (int d = 0; d < 3; ++d) {
                const double printed = tensor[(j * 3 + i) * 3 + d];
                QVERIFY2(near(printed, tutorial.weighted[j][i][d]),
                         qPrintable(QStringLiteral("[%1, %2, %3]: %4 printed, %5 expected\n%6")
                                        .arg(j)
                                        .arg(i)
                                        .arg(d)
                                        .arg(printed)
                                        .arg(tutorial.weighted[j][i][d])
                                        .arg(tensorText)));
            }
    // Softmax weights near 6e-6 next to values near 8: PyTorch switches the whole tensor to
    // scientific notation, 4 decimals.
    QVERIFY2(tensorText.contains(QStringLiteral("e-06")), qPrintable(tensorText));

    QString sumText;
    const QList<double> sum = preNumbers(html, step, 1, &sumText);
    QCOMPARE(sum.size(), 9);
    QVERIFY2(sumText.startsWith(QStringLiteral("tensor([[")), qPrintable(sumText));
    for (int i = 0; i < 3; ++i)
        for (int d = 0; d < 3; ++d)
            QVERIFY2(near(sum[i * 3 + d], tutorial.outputs[i][d]), qPrintable(sumText));
    const double firstRow[3] = {1.9366, 6.6831, 1.5951}; // the tutorial's printed first output row
    for (int d = 0; d < 3; ++d) {
        QVERIFY(std::abs(tutorial.outputs[0][d] - firstRow[d]) < 1e-4);
        QVERIFY2(std::abs(sum[d] - firstRow[d]) < 1e-4, qPrintable(sumText));
    }
    QVERIFY(html.indexOf(QStringLiteral("dim=0"), step) > step);
    QVERIFY(html.indexOf(QStringLiteral("is the head output of step 8"), step) > step);

    w.views()->teaching()->scrollToAnchor(QStringLiteral("weighted-values"));
    QVERIFY(w.grab().toImage().save(shotDir() + QStringLiteral("/weighted-values.png")));
}

void TestWeightedValues::hiddenWithAReason_data()
{
    QTest::addColumn<QString>("example"); // empty: a one-head project of 11 tokens, dV 9, written here
    QTest::addColumn<QString>("reason");
    QTest::newRow("two heads, a batch") << QStringLiteral(
                                               ":/examples/tutorial1-multihead-cross/mha-batch-padding.attnscope.json")
                                        << QStringLiteral("only for a project of one head and one sequence");
    QTest::newRow("one head, a batch") << QStringLiteral(
                                              ":/examples/tutorial4-single-vs-multi/single-head.attnscope.json")
                                       << QStringLiteral("only for a project of one head and one sequence");
    QTest::newRow("one head, 1089 numbers")
        << QString() << QStringLiteral("its 1089 numbers are more than the 1000 that PyTorch");
}

void TestWeightedValues::hiddenWithAReason()
{
    QFETCH(QString, example);
    QFETCH(QString, reason);
    MainWindow w;
    w.show();
    QTemporaryDir dir;
    if (example.isEmpty()) {
        QStringList tokens, x;
        for (int t = 0; t < 11; ++t) {
            tokens << QStringLiteral("\"t%1\"").arg(t);
            x << QStringLiteral("[%1]").arg(t);
        }
        const QString path = dir.filePath(QStringLiteral("wide.attnscope.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 1,
            "headDimV": 9, "query": {"tokens": [%1], "x": [%2]}, "weights": {"q": [[1]], "k": [[1]],
            "v": [[1, 2, 3, 4, 5, 6, 7, 8, 9]], "o": null}})")
                    .arg(tokens.join(QLatin1Char(',')), x.join(QLatin1Char(',')))
                    .toUtf8());
        f.close();
        QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    } else {
        QVERIFY2(w.openExample(example), qPrintable(w.lastError()));
    }
    QVERIFY(settle(w));
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    const QString html = w.views()->teaching()->html();
    QVERIFY2(html.contains(reason), qPrintable(html.right(1500)));
    QVERIFY(!html.contains(QStringLiteral("weighted values[j, i, :]")));
    QVERIFY(!html.contains(QStringLiteral("<pre")));
}

void TestWeightedValues::chineseStepView()
{
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY2(w.openExample(kWorkedExample), qPrintable(w.lastError()));
    QVERIFY(settle(w));
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    const QString html = w.views()->teaching()->html();
    // The heading is translated; the formula and PyTorch's print stay as they are.
    const qsizetype step = html.indexOf(QStringLiteral("weighted_values"));
    QVERIFY2(step >= 0, qPrintable(html.right(1500)));
    QVERIFY2(html.contains(QStringLiteral("\u52a0\u6743")), qPrintable(html.right(1500))); // 加权
    QVERIFY(!html.contains(QStringLiteral("The tutorial's way")));
    QString tensorText;
    QCOMPARE(preNumbers(html, step, 0, &tensorText).size(), 27);
    w.views()->teaching()->scrollToAnchor(QStringLiteral("weighted-values"));
    QVERIFY(w.grab().toImage().save(shotDir() + QStringLiteral("/zh_CN-weighted-values.png")));
}

QTEST_MAIN(TestWeightedValues)
#include "tst_weightedvalues.moc"
