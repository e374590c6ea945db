// File > Examples: one submenu per tutorial titled "中文 — English", every example listed and
// opening without error (those with .npy references too, which are copied out of the
// resources first), seed 000's and seed 004's giving the tutorials' PyTorch results, a saved
// example still finding its .npy files, and step view headings naming the biases exactly.

#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/Examples.h"
#include "app/gui/views/HeatmapView.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/TeachingView.h"
#include "core/formats/Npy.h"

#include "../common/TestUtil.h"

#include <QAction>
#include <QDir>
#include <QFontMetrics>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attnscope;

namespace {

struct SourceExample {
    QString resourcePath, title, tutorial;
};

// The tutorial and modern-attention examples as the source tree has them (not as the menu code
// finds them).
QList<SourceExample> sourceExamples()
{
    QList<SourceExample> out;
    const QDir root(test::sourcePath(QStringLiteral("resources/examples")));
    for (const QString &folder :
         root.entryList({QStringLiteral("tutorial*"), QStringLiteral("modern-attention")}, QDir::Dirs, QDir::Name))
        for (const QString &name :
             QDir(root.filePath(folder)).entryList({QStringLiteral("*.attnscope.json")}, QDir::Files)) {
            QFile f(root.filePath(folder + QLatin1Char('/') + name));
            f.open(QIODevice::ReadOnly);
            const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
            out.append({QStringLiteral(":/examples/%1/%2").arg(folder, name), o.value("title").toString(),
                        o.value("tutorial").toString()});
        }
    return out;
}

QAction *actionFor(MainWindow &w, const QString &path)
{
    for (QAction *a : w.findChildren<QAction *>())
        if (a->data().toString() == path)
            return a;
    return nullptr;
}

bool settle(MainWindow &w)
{
    return w.computeController()->waitForIdle(30000) && w.currentResult() &&
           w.currentResult()->generation == w.computeController()->latestGeneration();
}

// Sequence 0 of a tutorial fixture (float64 [B,H,Tq,Tk] weights, [B,Tq,d] output) against what
// the window computed for the shown sequence 0.
QString compareWithFixture(const ComputedTrace &r, const QString &fixture)
{
    auto weights = readNpyFile(test::sourcePathStd(fixture + "/weights.npy"));
    auto output = readNpyFile(test::sourcePathStd(fixture + "/output.npy"));
    if (!weights || !output)
        return QStringLiteral("fixture unreadable");
    const auto &t = r.trace;
    const std::int64_t H = weights->shape[1], Tq = weights->shape[2], Tk = weights->shape[3], d = output->shape[2];
    if (t.heads() != H || t.output.rows() != Tq || t.output.cols() != d)
        return QStringLiteral("shapes differ");
    for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t i = 0; i < Tq; ++i)
            for (std::int64_t j = 0; j < Tk; ++j)
                if (std::abs(t.weights[size_t(h)](i, j) - weights->data[size_t((h * Tq + i) * Tk + j)]) > 1e-5)
                    return QStringLiteral("weights differ at head %1 (%2, %3)").arg(h).arg(i).arg(j);
    for (std::int64_t i = 0; i < Tq; ++i)
        for (std::int64_t c = 0; c < d; ++c) {
            const double want = output->data[size_t(i * d + c)];
            if (std::abs(t.output(i, c) - want) > 1e-5 + 1e-4 * std::abs(want))
                return QStringLiteral("output differs at (%1, %2)").arg(i).arg(c);
        }
    return {};
}

} // namespace

class TestExamples : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void menuGroupsExamplesByTutorial();
    void everyExampleOpensFromTheMenu();
    void tutorialExamplesMatchPyTorch_data();
    void tutorialExamplesMatchPyTorch();
    void savedExampleFindsItsNpyFiles();
    void exampleCopyIsReplacedNextTime();
    void headingsSayWhatIsComputed();
    void modernExamplesShowWhatIsNew();
};

void TestExamples::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
}

void TestExamples::menuGroupsExamplesByTutorial()
{
    MainWindow w;
    const auto examples = sourceExamples();
    QCOMPARE(examples.size(), 14);
    const QRegularExpression twoLanguages(QStringLiteral("^.*\\p{Han}.* \u2014 [A-Z][\\x{20}-\\x{7e}\u00d7]+$"));
    QSet<QString> groups;
    for (const SourceExample &e : examples) {
        QAction *a = actionFor(w, e.resourcePath);
        QVERIFY2(a, qPrintable(e.resourcePath + " is not in File > Examples"));
        // Short, in the interface's language (the titles run to 140 characters in two): the
        // entries fit any screen, and the whole title is the tooltip.
        QVERIFY2(twoLanguages.match(e.title).hasMatch(), qPrintable(e.title));
        QCOMPARE(a->toolTip(), e.title);
        QCOMPARE(a->text(), exampleMenuText(e.title));
        QVERIFY2(a->text().size() <= kExampleMenuText && !a->text().contains(QChar(0x2014)), qPrintable(a->text()));
        QVERIFY2(e.title.split(QStringLiteral(" \u2014 "))
                     .value(1)
                     .startsWith(a->text().chopped(a->text().endsWith(QChar(0x2026)) ? 1 : 0)),
                 qPrintable(a->text())); // the English half here
        auto *menu = qobject_cast<QMenu *>(a->parent());
        QVERIFY(menu);
        QCOMPARE(menu->title(), exampleMenuText(e.tutorial));
        QCOMPARE(menu->menuAction()->toolTip(), e.tutorial);
        QVERIFY2(twoLanguages.match(e.tutorial).hasMatch(), qPrintable(e.tutorial));
        QVERIFY2(QFontMetrics(menu->font()).horizontalAdvance(a->text()) < 480, qPrintable(a->text()));
        auto *examplesMenu = qobject_cast<QMenu *>(menu->parent());
        QVERIFY(examplesMenu);
        QCOMPARE(examplesMenu->title(), MainWindow::tr("&Examples"));
        groups.insert(e.tutorial);
    }
    QCOMPARE(groups.size(), 6);
    // The loose examples stay at the top of File > Examples.
    QAction *loose = actionFor(w, QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
    QVERIFY(loose);
    QCOMPARE(qobject_cast<QMenu *>(loose->parent())->title(), MainWindow::tr("&Examples"));
    QCOMPARE(MainWindow::exampleFiles().size(), 4 + examples.size());
}

void TestExamples::everyExampleOpensFromTheMenu()
{
    MainWindow w;
    w.show();
    for (const QString &path : MainWindow::exampleFiles()) {
        QAction *a = actionFor(w, path);
        QVERIFY2(a, qPrintable(path));
        a->trigger();
        QVERIFY2(w.lastError().isEmpty(), qPrintable(path + ": " + w.lastError()));
        QVERIFY(w.document());
        QVERIFY2(w.document()->filePath().isEmpty(), qPrintable(w.document()->filePath())); // untitled
        QCOMPARE(w.document()->displayName(), a->toolTip().isEmpty() ? a->text() : a->toolTip());
        QVERIFY2(settle(w), qPrintable(path));
        QVERIFY(w.currentResult()->trace.output.allFinite());
    }
}

void TestExamples::tutorialExamplesMatchPyTorch_data()
{
    QTest::addColumn<QString>("example");
    QTest::addColumn<QString>("fixture");
    QTest::newRow("seed 000 MHA") << QStringLiteral(
                                         ":/examples/tutorial1-multihead-cross/mha-batch-padding.attnscope.json")
                                  << QStringLiteral("tests/fixtures/tutorial/seed000_mha_batch_padding");
    QTest::newRow("seed 004 MHA") << QStringLiteral(":/examples/tutorial5-shapes/mha-three-inputs.attnscope.json")
                                  << QStringLiteral("tests/fixtures/tutorial/seed004_mha_three_inputs");
    QTest::newRow("seed 000 CrossAttention")
        << QStringLiteral(":/examples/tutorial1-multihead-cross/cross-attention.attnscope.json")
        << QStringLiteral("tests/fixtures/tutorial-examples/cross-attention");
    QTest::newRow("seed 002 512 wide") << QStringLiteral(
                                              ":/examples/tutorial3-cross-attention/cross-attention-512.attnscope.json")
                                       << QStringLiteral("tests/fixtures/tutorial-examples/cross-attention-512");
}

void TestExamples::tutorialExamplesMatchPyTorch()
{
    QFETCH(QString, example);
    QFETCH(QString, fixture);
    MainWindow w;
    QVERIFY2(w.openExample(example), qPrintable(w.lastError()));
    QVERIFY(settle(w));
    const QString diff = compareWithFixture(*w.currentResult(), fixture);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
}

void TestExamples::savedExampleFindsItsNpyFiles()
{
    MainWindow w;
    QVERIFY(w.openExample(QStringLiteral(":/examples/tutorial5-shapes/mha-three-inputs.attnscope.json")));
    QTemporaryDir dir;
    const QString saved = dir.filePath(QStringLiteral("mine.attnscope.json"));
    QVERIFY(w.project()->saveTo(saved));
    QFile f(saved);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("\"npy\"")); // the weights stay references, not 64 x 64 inline
    auto reread = readProjectFile(saved.toStdString());
    QVERIFY2(reread, reread ? "" : reread.message().c_str());
    QVERIFY(reread->problem.weights.q == w.document()->project().problem.weights.q);
    QVERIFY(reread->problem.xv && *reread->problem.xv == *w.document()->project().problem.xv);
}

void TestExamples::exampleCopyIsReplacedNextTime()
{
    QTemporaryDir root;
    const QString path = QStringLiteral(":/examples/tutorial3-cross-attention/cross-attention-512.attnscope.json");
    for (int i = 0; i < 2; ++i) {
        auto p = readExample(path, root.path());
        QVERIFY2(p, p ? "" : p.message().c_str());
        QCOMPARE(p->problem.weights.q.rows(), 512);
        QCOMPARE(p->problem.spec.heads, 8);
        QCOMPARE(int(p->batch->sequences.size()), 8);
    }
    QVERIFY(QFileInfo(root.filePath(QStringLiteral("tutorial3-cross-attention/data/q_proj.npy"))).isWritable());
}

void TestExamples::headingsSayWhatIsComputed()
{
    MainWindow w;
    w.show();
    // Seed 000: no bias on Q, K, V; a bias on the output projection.
    QVERIFY(w.openExample(QStringLiteral(":/examples/tutorial1-multihead-cross/mha-batch-padding.attnscope.json")));
    QVERIFY(settle(w));
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    QString html = w.views()->teaching()->html();
    for (const char *f : {"Q = X\u00b7W_Q,", "K = X\u00b7W_K,", "V = X\u00b7W_V<", "output = context\u00b7W_O + b_O"})
        QVERIFY2(html.contains(QString::fromUtf8(f)), f);
    QVERIFY(!html.contains(QStringLiteral("b_Q")) && !html.contains(QStringLiteral("b_V")));
    // Seed 003: biases everywhere.
    QVERIFY(w.openExample(QStringLiteral(":/examples/tutorial4-single-vs-multi/multi-head.attnscope.json")));
    QVERIFY(settle(w));
    html = w.views()->teaching()->html();
    for (const char *f :
         {"Q = X\u00b7W_Q + b_Q", "K = X\u00b7W_K + b_K", "V = X\u00b7W_V + b_V", "output = context\u00b7W_O + b_O"})
        QVERIFY2(html.contains(QString::fromUtf8(f)), f);
}

// The "Today's attention" examples: each view says what is new (issue 23), in the window.
void TestExamples::modernExamplesShowWhatIsNew()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    const QString folder = QStringLiteral(":/examples/modern-attention/");
    AttentionViews *views = w.views();

    // Grouped-query: the grid frames heads 0-1 and 2-3; head 1's hover names the shared K/V head,
    // and head 0 equals the multi-head example's head 0 (same W_Q, K/V taken from its head 0).
    QVERIFY(w.openExample(folder + QStringLiteral("1-multi-head.attnscope.json")));
    QVERIFY(settle(w));
    const MatrixF multiHead0 = w.currentResult()->trace.weights[0];
    const MatrixF multiHead1 = w.currentResult()->trace.weights[1];
    QCOMPARE(views->grid()->groupSize(), 1);
    QVERIFY(w.openExample(folder + QStringLiteral("2-grouped-query.attnscope.json")));
    QVERIFY(settle(w));
    QCOMPARE(views->grid()->groupSize(), 2);
    QVERIFY(test::compareMatrix("head 0", w.currentResult()->trace.weights[0], multiHead0, test::Tolerance::weights())
                .empty());
    QVERIFY(w.currentResult()->trace.weights[1] != multiHead1);
    QCOMPARE(int(w.currentResult()->trace.k.size()), 2);
    views->setCurrentHead(1);
    QVERIFY2(views->headView()->cellDescription(3, 1).contains(
                 QStringLiteral("key/value head 0 (shared by query heads 0\u20131)")),
             qPrintable(views->headView()->cellDescription(3, 1)));
    QVERIFY(views->notes()->isVisible());
    QVERIFY(views->notes()->text().contains(QStringLiteral("kvHeads = 2")));
    QVERIFY(w.openExample(folder + QStringLiteral("3-multi-query.attnscope.json")));
    QVERIFY(settle(w));
    QCOMPARE(views->grid()->groupSize(), 4);

    // RoPE: the step view rotates q and k, gives each pair's angle, and compares on request; a
    // score depends on the distance only (the words repeat four positions later).
    QVERIFY(w.openExample(folder + QStringLiteral("4-rope.attnscope.json")));
    QVERIFY(settle(w));
    const MatrixF &scores = w.currentResult()->trace.scores[0];
    QVERIFY(std::abs(scores(5, 4) - scores(1, 0)) < 1e-4f);
    QVERIFY(std::abs(scores(4, 0) - scores(0, 0)) > 1e-3f);
    views->tabs()->setCurrentWidget(views->teaching());
    QString html = views->teaching()->html();
    for (const char *part : {"3b. RoPE: rotate q and k by their positions", "angle per pair", "Q_h after RoPE",
                             "Compare with the scores without RoPE"})
        QVERIFY2(html.contains(QString::fromUtf8(part)), part);
    QVERIFY(!html.contains(QStringLiteral("Scores with and without RoPE")));
    views->teaching()->setCompareWithoutRope(true);
    QVERIFY(views->teaching()->html().contains(QStringLiteral("Scores with and without RoPE")));

    // Sliding window: a masked cell says which part masks it.
    QVERIFY(w.openExample(folder + QStringLiteral("5-sliding-window.attnscope.json")));
    QVERIFY(settle(w));
    views->tabs()->setCurrentIndex(0);
    QVERIFY2(views->headView()->cellDescription(10, 2).contains(QStringLiteral("outside the sliding window of 4 keys")),
             qPrintable(views->headView()->cellDescription(10, 2)));
    QVERIFY(views->headView()->cellDescription(2, 5).contains(QStringLiteral("causal")));

    // Sinks: rows sum below 1 and the hover says the sink's share; soft-cap: its step.
    QVERIFY(w.openExample(folder + QStringLiteral("6-sink.attnscope.json")));
    QVERIFY(settle(w));
    QVERIFY(w.currentResult()->trace.weights[0].row(3).sum() < 0.9f);
    QVERIFY(views->headView()->cellDescription(3, 1).contains(QStringLiteral("the sink (2.5) takes")));
    QVERIFY(w.openExample(folder + QStringLiteral("7-softcap.attnscope.json")));
    QVERIFY(settle(w));
    QVERIFY(w.currentResult()->trace.scores[0].cwiseAbs().maxCoeff() <= 2.0f);
    views->tabs()->setCurrentWidget(views->teaching());
    QVERIFY(views->teaching()->html().contains(QStringLiteral("5b. Soft-capped at 2")));
}

QTEST_MAIN(TestExamples)
#include "tst_examples.moc"
