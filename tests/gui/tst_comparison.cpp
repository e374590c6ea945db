// Comparison as its own source (issue 26), in a real window under Xvfb: two prompts of one length
// on the built-in tiny-qwen3 model, B − A in the views equal to the two runs subtracted here, the
// current head side by side, the statistics sorted by total variation, a refusal that keeps the
// views, a first comparison that fails changing nothing, File > Compare…'s checks, the model
// run's "Compare With Another Text…", a project's "Compare With Saved" (its file against its unsaved
// edits, in a new window), and figures of A and of B − A. Screenshots in the build tree.

#include "app/gui/document/AttentionJobs.h"
#include "app/gui/document/ExampleModel.h"
#include "app/gui/sources/ComparisonSource.h"
#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/CompareDialog.h"
#include "app/gui/views/ComparisonPanels.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/StaleBanner.h"
#include "app/render/ColorMap.h"
#include "core/attention/CpuBackend.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>

using namespace attnscope;

namespace {

// Two lines of Li Bai's that differ in one character (地 → 天): as many tokens, one of them changed.
const QString kTextA = QStringLiteral("床前明月光，疑是地上霜。");
const QString kTextB = QStringLiteral("床前明月光，疑是天上霜。");
// B with one more character: a token more, which cannot be aligned position by position.
const QString kLongerB = QStringLiteral("床前明月光，疑是天上霜。举");

QString qwen3Dir()
{
    return exampleModelDir(ExampleModelId::TinyQwen3);
}

ComparisonSide modelSide(const QString &text)
{
    ComparisonSide side;
    side.path = qwen3Dir();
    side.text = text;
    return side;
}

QByteArray readBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestComparison : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void dialogSaysWhatIsMissing();
    void firstComparisonRefusedChangesNothing();
    void comparesTwoPrompts();
    void comparesWithAnotherTextOfTheModelRun();
    void comparesProjectWithSaved();
    void longDifferenceThumbnailKeepsItsSign();
};

void TestComparison::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_comparison"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    qunsetenv("ATTNSCOPE_EXAMPLE_MODEL");
    QVERIFY2(!qwen3Dir().isEmpty(), "the built-in tiny-qwen3 example model is not found");
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
}

void TestComparison::dialogSaysWhatIsMissing()
{
    CompareDialog dialog({}, {}, QDir::tempPath());
    QCOMPARE(dialog.check(), QStringLiteral("A: choose an attention file, a project or a model folder."));
    QVERIFY(!dialog.problemLabel()->isHidden());
    dialog.pathEdit(0)->setText(qwen3Dir());
    QVERIFY(dialog.textEdit(0)->isEnabled()); // a folder reads a text
    QCOMPARE(dialog.check(), QStringLiteral("A: type the text the model reads."));
    dialog.textEdit(0)->setText(kTextA);
    dialog.pathEdit(1)->setText(QDir(QDir::tempPath()).filePath(QStringLiteral("no-such-file.npy")));
    QVERIFY(!dialog.textEdit(1)->isEnabled());
    QVERIFY2(dialog.check().startsWith(QStringLiteral("B: ")) &&
                 dialog.check().endsWith(QStringLiteral("does not exist.")),
             qPrintable(dialog.check()));
    dialog.pathEdit(1)->setText(qwen3Dir());
    dialog.textEdit(1)->setText(kTextB);
    QCOMPARE(dialog.check(), QString());
    QVERIFY(dialog.problemLabel()->isHidden());
}

void TestComparison::firstComparisonRefusedChangesNothing()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    Source *before = w.source();
    const QString title = w.windowTitle();
    QSignalSpy failed(&w, &MainWindow::openFailed);
    QVERIFY(w.openComparison(modelSide(kTextA), modelSide(kLongerB)));
    QVERIFY(failed.wait(60000));
    const QString reason = failed.last().at(1).toString();
    QVERIFY2(reason.contains(QStringLiteral("cannot compare")), qPrintable(reason));
    QVERIFY2(!reason.contains(QLatin1Char('\n')), qPrintable(reason));
    QCOMPARE(w.source(), before);
    QCOMPARE(w.windowTitle(), title);
    QCOMPARE(w.lastError(), reason);
}

void TestComparison::comparesTwoPrompts()
{
    // The two runs, here, independently of the window.
    auto model = TransformerModel::load(qwen3Dir().toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    auto inputA = model->encode(kTextA.toStdString()), inputB = model->encode(kTextB.toStdString());
    QVERIFY(inputA && inputB);
    QCOMPARE(inputA->ids.size(), inputB->ids.size());
    QVERIFY(inputA->ids != inputB->ids);
    CpuBackend cpu;
    auto runA = model->forward(*inputA, cpu), runB = model->forward(*inputB, cpu);
    QVERIFY(runA && runB);

    MainWindow w;
    w.resize(1440, 960);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openComparison(modelSide(kTextA), modelSide(kTextB)));
    ComparisonSource *c = w.comparisonSource();
    QVERIFY(c);
    QSignalSpy compared(c, &ComparisonSource::compared);
    QSignalSpy sideShown(c, &ComparisonSource::sideBySideShown);
    QVERIFY2(compared.wait(60000), qPrintable(w.lastError()));
    QCOMPARE(w.source(), c);
    QVERIFY(w.windowTitle().contains(QStringLiteral("tiny-qwen3")));

    // The head that changed most (the statistics sorted by total variation) in the views.
    ComparisonStatsTable *table = c->statisticsTable();
    QCOMPARE(table->model()->rowCount(), (*runA)->layers * (*runA)->heads);
    for (int r = 1; r < table->model()->rowCount(); ++r)
        QVERIFY(table->model()->index(r - 1, ComparisonStatsModel::TotalVariation).data(Qt::UserRole).toDouble() >=
                table->model()->index(r, ComparisonStatsModel::TotalVariation).data(Qt::UserRole).toDouble());
    const auto [layer, head] = table->headAtRow(0);
    QVERIFY(layer >= 0);
    w.activateHead(layer, head);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().weights() && w.shownAttention().layer == layer, 30000);
    QVERIFY(w.shownAttention().set.isSigned());

    // The enlarged head shows B − A of the two runs, on a diverging scale symmetric around 0.
    HeatmapView *headView = w.views()->headView();
    QCOMPARE(headView->head(), head);
    const HeatmapData &shown = headView->data();
    QVERIFY(shown.values && shown.difference && shown.signedValues);
    const auto mapA = (*runA)->attention(layer, head), mapB = (*runB)->attention(layer, head);
    QCOMPARE(shown.rows(), mapA.rows());
    QCOMPARE(shown.cols(), mapA.cols());
    double largest = 0.0;
    for (Eigen::Index i = 0; i < mapA.rows(); ++i)
        for (Eigen::Index j = 0; j < mapA.cols(); ++j) {
            const double expected = double(mapB(i, j)) - double(mapA(i, j));
            QVERIFY2(std::abs((*shown.values)(i, j) - expected) <= 1e-5,
                     qPrintable(QStringLiteral("(%1, %2): %3 shown, %4 expected")
                                    .arg(i)
                                    .arg(j)
                                    .arg((*shown.values)(i, j))
                                    .arg(expected)));
            largest = std::max(largest, std::abs(expected));
        }
    QVERIFY(largest > 0.0);
    QVERIFY(std::abs(shown.rangeMax - largest) <= 1e-5);
    QCOMPARE(shown.rangeMin, -shown.rangeMax);
    // Whatever colour map weights are drawn with: 0 is the diverging map's middle (white).
    HeatmapOptions options = headView->options();
    options.colorMap = ColorMapKind::Viridis;
    QCOMPARE(HeatmapRenderer(shown, options).colorFor(0.0), ColorMap(ColorMapKind::Diverging).at(0.5));
    QVERIFY(headView->cellDescription(0, 0).contains(QStringLiteral("B \u2212 A")));

    // Side by side: the same head of A, of B and of B − A, under their titles.
    SideBySideView *side = c->sideBySide();
    QVERIFY(side->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(side->view(SideBySideView::A)->data().values &&
                                 side->view(SideBySideView::A)->attention().layer == layer &&
                                 side->view(SideBySideView::A)->head() == head,
                             30000);
    QCOMPARE(side->title(SideBySideView::A), QStringLiteral("A: ") + kTextA);
    QCOMPARE(side->title(SideBySideView::B), QStringLiteral("B: ") + kTextB);
    QCOMPARE(side->title(SideBySideView::Difference), QStringLiteral("B \u2212 A"));
    QCOMPARE((*side->view(SideBySideView::A)->data().values)(1, 0), mapA(1, 0));
    QCOMPARE((*side->view(SideBySideView::B)->data().values)(1, 0), mapB(1, 0));
    QVERIFY(side->view(SideBySideView::Difference)->data().difference);

    w.views()->tabs()->setCurrentIndex(0);
    QVERIFY(test::waitForRepaint(&w));
    QPixmap shot = w.screen()->grabWindow(w.winId());
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/comparison-two-prompts.png")));

    // The statistics: a click on a row shows that head.
    w.views()->tabs()->setCurrentWidget(table);
    QVERIFY(test::waitForRepaint(&w));
    shot = w.screen()->grabWindow(w.winId());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/comparison-statistics.png")));
    const auto [layer1, head1] = table->headAtRow(1);
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualRect(table->model()->index(1, ComparisonStatsModel::TotalVariation)).center());
    QCOMPARE(w.views()->currentHead(), head1);
    QCOMPARE(side->view(SideBySideView::B)->head(), head1); // the panel follows the head in view
    QTRY_COMPARE_WITH_TIMEOUT(w.shownAttention().layer, layer1, 30000);
    QCOMPARE(w.views()->tabs()->currentIndex(), 0);
    w.activateHead(layer, head);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().weights() && w.shownAttention().layer == layer, 30000);

    // B typed one character longer: refused in one line, said in the bar and the banner; the
    // views keep what they showed.
    const MatrixF kept = *headView->data().values;
    QSignalSpy refused(c, &ComparisonSource::refused);
    c->textEdit(1)->setText(kLongerB);
    QVERIFY(refused.wait(60000));
    const QString reason = refused.last().at(0).toString();
    QVERIFY2(reason.contains(QStringLiteral("cannot compare")), qPrintable(reason));
    QVERIFY(!reason.contains(QLatin1Char('\n')));
    QVERIFY(w.banner()->isStale());
    QCOMPARE(w.banner()->reason(), reason);
    QCOMPARE(w.lastError(), reason);
    QCOMPARE(w.source(), c);
    QVERIFY(headView->data().values);
    QVERIFY(*headView->data().values == kept);
    QCOMPARE(side->title(SideBySideView::B), QStringLiteral("B: ") + kTextB); // what the panel still shows
    QCOMPARE(side->view(SideBySideView::A)->head(), head);
    QVERIFY(side->isGreyed());
    QVERIFY(test::waitForRepaint(&w));
    shot = w.screen()->grabWindow(w.winId());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/comparison-refused.png")));
    // Typed back: compared again, the banner gone.
    c->textEdit(1)->setText(kTextB);
    QVERIFY(compared.wait(60000));
    QVERIFY(!w.banner()->isStale());
    QVERIFY(!side->isGreyed());

    // Show: A, then B − A: the whole views switch, and Export Figure exports what is shown.
    QTemporaryDir out;
    QVERIFY(out.isValid());
    const QString figureA = out.filePath(QStringLiteral("a.png")), figureD = out.filePath(QStringLiteral("d.png"));
    for (const auto &[kind, path] :
         {std::pair{ComparisonSource::Shown::A, figureA}, std::pair{ComparisonSource::Shown::Difference, figureD}}) {
        c->showSelector()->setCurrentIndex(int(kind));
        QCOMPARE(c->shownKind(), kind);
        const bool difference = kind == ComparisonSource::Shown::Difference;
        QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().weights() && w.shownAttention().layer == layer &&
                                     w.shownAttention().set.isSigned() == difference,
                                 30000);
        if (!difference)
            QCOMPARE((*w.views()->headView()->data().values)(1, 0), mapA(1, 0));
        ExportFigureDialog *dialog = w.figures()->showFigureDialog();
        QVERIFY(dialog);
        dialog->setPath(path);
        QVERIFY2(dialog->exportFigure(), qPrintable(dialog->lastError()));
        dialog->close();
        QVERIFY(QFileInfo(path).size() > 0);
    }
    QVERIFY(readBytes(figureA) != readBytes(figureD));
    // Kept beside the screenshots, to be looked at.
    const QString keptFigure = QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/comparison-figure-difference.png");
    QFile::remove(keptFigure);
    QVERIFY(QFile::copy(figureD, keptFigure));
}

void TestComparison::comparesWithAnotherTextOfTheModelRun()
{
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy runShown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(qwen3Dir()));
    QVERIFY(runShown.wait(60000));
    w.modelSource()->textEdit()->setText(kTextA);
    QVERIFY(runShown.wait(60000));
    QAction *action = w.modelSource()->compareAction();
    QVERIFY(action->isVisible() && action->isEnabled());
    action->trigger();
    ComparisonSource *c = w.comparisonSource();
    QVERIFY(c);
    QSignalSpy compared(c, &ComparisonSource::compared);
    QVERIFY2(compared.wait(60000), qPrintable(w.lastError()));
    QCOMPARE(w.source(), c);
    // The model's text as A and as B, to be edited: no difference yet.
    QCOMPARE(c->textEdit(0)->text(), kTextA);
    QCOMPARE(c->textEdit(1)->text(), kTextA);
    const AttentionSet &difference = c->comparison()->difference;
    for (int l = 0; l < difference.layers(); ++l)
        for (int h = 0; h < difference.heads(); ++h)
            QVERIFY(difference.map(0, l, h).isZero(0.0));
    c->textEdit(1)->setText(kTextB);
    QVERIFY(compared.wait(60000));
    QVERIFY(!c->comparison()->difference.map(0, 0, 0).isZero(0.0));
}

void TestComparison::comparesProjectWithSaved()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("causal.attnscope.json"));
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QVERIFY2(w.project()->saveTo(path), qPrintable(w.lastError()));
    QAction *action = w.project()->compareWithSavedAction();
    QVERIFY(!action->isEnabled()); // saved: nothing to compare
    Document *document = w.document();
    const float before = document->project().problem.weights.q(0, 0);
    QVERIFY(document->setValue(MatrixId::Wq, 0, 0, before + 0.75f)); // an undoable edit
    QVERIFY(document->isModified());
    QVERIFY(action->isEnabled());

    // A and B computed here, independently of the window: the file as saved, the edited project.
    auto saved = readProjectFile(path.toStdString());
    QVERIFY2(saved, saved ? "" : saved.message().c_str());
    CpuBackend cpu;
    auto traceA = cpu.compute(saved->problem), traceB = cpu.compute(document->project().problem);
    QVERIFY(traceA && traceB);

    const QList<QWidget *> windowsBefore = QApplication::topLevelWidgets();
    action->trigger();
    MainWindow *other = nullptr;
    for (QWidget *widget : QApplication::topLevelWidgets())
        if (auto *window = qobject_cast<MainWindow *>(widget); window && !windowsBefore.contains(widget))
            other = window;
    QVERIFY2(other, "Compare With Saved opened no new window");
    const std::unique_ptr<MainWindow> closeOther(other);
    ComparisonSource *c = other->comparisonSource();
    QVERIFY(c);
    QSignalSpy compared(c, &ComparisonSource::compared);
    QSignalSpy sideShown(c, &ComparisonSource::sideBySideShown);
    QVERIFY2(compared.wait(60000), qPrintable(other->lastError()));
    QCOMPARE(other->source(), c);
    QCOMPARE(c->sideTitle(0), QStringLiteral("A: causal.attnscope.json"));
    QCOMPARE(c->sideTitle(1), QStringLiteral("B: causal.attnscope.json (as edited)"));

    const AttentionSet &difference = c->comparison()->difference;
    QCOMPARE(difference.layers(), 1);
    QCOMPARE(difference.heads(), int(traceA->weights.size()));
    double largest = 0.0;
    for (int h = 0; h < difference.heads(); ++h) {
        const MatrixF shown = difference.map(0, 0, h);
        const auto &a = traceA->weights[size_t(h)], &b = traceB->weights[size_t(h)];
        QCOMPARE(shown.rows(), a.rows());
        QCOMPARE(shown.cols(), a.cols());
        for (Eigen::Index i = 0; i < a.rows(); ++i)
            for (Eigen::Index j = 0; j < a.cols(); ++j) {
                const double expected = double(b(i, j)) - double(a(i, j));
                QVERIFY2(std::abs(shown(i, j) - expected) <= 1e-5,
                         qPrintable(QStringLiteral("head %1 (%2, %3): %4 shown, %5 expected")
                                        .arg(h)
                                        .arg(i)
                                        .arg(j)
                                        .arg(shown(i, j))
                                        .arg(expected)));
                largest = std::max(largest, std::abs(expected));
            }
    }
    QVERIFY(largest > 1e-3); // the edit changed the attention

    // The project keeps its edit, in front of its own window.
    QCOMPARE(w.source(), static_cast<Source *>(w.project()));
    QCOMPARE(w.document(), document);
    QVERIFY(document->isModified());
    QCOMPARE(document->project().problem.weights.q(0, 0), before + 0.75f);
    QVERIFY(!sideShown.isEmpty() || sideShown.wait(30000)); // the side-by-side panel drawn
    QVERIFY(test::waitForRepaint(other));
    const QPixmap shot = other->screen()->grabWindow(other->winId());
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/comparison-project-with-saved.png")));
    document->undoStack()->undo();
    QVERIFY(!document->isModified());
    QVERIFY(!action->isEnabled());
}

void TestComparison::longDifferenceThumbnailKeepsItsSign()
{
    // 300 tokens: the model view's thumbnails pool blocks of cells. One query moves half its weight
    // from key 50 to key 250: the block of key 50 must keep -0.5 (blue), not its largest value (0).
    const std::int64_t t = 300;
    std::vector<float> a(std::size_t(t * t), 1.0f / float(t));
    std::vector<float> b = a;
    b[std::size_t(200 * t + 50)] -= 0.5f;
    b[std::size_t(200 * t + 250)] += 0.5f;
    auto setA = AttentionSet::fromFloats(std::move(a), 1, 1, 1, t, t);
    auto setB = AttentionSet::fromFloats(std::move(b), 1, 1, 1, t, t);
    QVERIFY(setA && setB);
    auto compared = compareSets(*setA, *setB);
    QVERIFY2(compared, compared ? "" : compared.message().c_str());
    ShownAttention shown;
    shown.set = compared->difference;
    const std::atomic<bool> cancel{false};
    const AttentionJobs::Thumbnails thumbs =
        AttentionJobs::thumbnails(shown, ColorMapKind::Viridis, ScaleScope::Absolute, ColorScaleKind::Linear, cancel);
    QCOMPARE(thumbs.images.size(), std::size_t(1));
    const QImage &image = thumbs.images.front();
    QVERIFY(image.width() < t);
    const ColorMap diverging(ColorMapKind::Diverging);
    bool blue = false, red = false;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            blue = blue || image.pixel(x, y) == diverging.at(0.0);
            red = red || image.pixel(x, y) == diverging.at(1.0);
        }
    QVERIFY2(blue, "the negative change was pooled away");
    QVERIFY(red);
}

QTEST_MAIN(TestComparison)
#include "tst_comparison.moc"
