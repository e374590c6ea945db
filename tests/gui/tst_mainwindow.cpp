// The main window driven through its real widgets (offscreen): every edit is checked on the
// document and on what the heatmap shows.

#include "app/gui/document/Autosave.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/EditorPanels.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/MaskEditor.h"
#include "app/gui/views/MatrixModel.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/TeachingView.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowStatus.h"
#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QGraphicsEffect>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextCursor>
#include <QTimer>
#include <QUndoStack>

using namespace attnscope;

namespace {

const QString kTutorial = QStringLiteral(":/examples/self-attention-tutorial.attnscope.json");
const QString kMultihead = QStringLiteral(":/examples/multihead-causal.attnscope.json");

// Waits until the views show a result computed from the document as it is now.
bool settle(MainWindow &w)
{
    if (!w.computeController()->waitForIdle(20000))
        return false;
    return w.currentResult() && w.currentResult()->generation == w.computeController()->latestGeneration() &&
           serializeProject(w.currentResult()->project) == serializeProject(w.document()->project());
}

// The colour of cell (query, key) as the enlarged heatmap widget paints it.
QColor shownColor(MainWindow &w, int query, int key)
{
    HeatmapView *v = w.views()->headView();
    const QImage image = v->grab().toImage();
    const QPointF corner = v->cellRect(query, key).topLeft() + QPointF(3, 3);
    return QColor(image.pixel(corner.toPoint()));
}

QColor expectedColor(MainWindow &w, float weight)
{
    const HeatmapData &d = w.views()->headView()->data();
    return QColor::fromRgb(
        ColorMap(w.views()->headView()->settings().colorMap).at((weight - d.rangeMin) / (d.rangeMax - d.rangeMin)));
}

// Weights recomputed from the document itself, independent of the window's pipeline.
MatrixF weightsOf(const Project &p, int head)
{
    auto t = CpuBackend().compute(p.problem);
    return t ? t->weights[size_t(head)] : MatrixF();
}

void typeInto(QWidget *editor, const QString &text)
{
    QVERIFY(editor);
    if (auto *line = qobject_cast<QLineEdit *>(editor))
        line->selectAll();
    else if (auto *spin = qobject_cast<QAbstractSpinBox *>(editor))
        spin->selectAll();
    QTest::keyClicks(editor, text);
    QTest::keyClick(editor, Qt::Key_Return);
}

// Answers the next modal dialog: records whether it is a Save dialog and closes it.
struct DialogWatcher {
    bool sawSaveDialog = false;
    QString other;
    QTimer timer;
    DialogWatcher()
    {
        timer.setInterval(20);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            QWidget *modal = QApplication::activeModalWidget();
            if (!modal)
                return;
            if (auto *d = qobject_cast<QFileDialog *>(modal))
                sawSaveDialog = d->acceptMode() == QFileDialog::AcceptSave;
            else
                other = modal->metaObject()->className();
            modal->close();
        });
        timer.start();
    }
};

// The real CPU engine that says it is half done, then waits until the test opens its gate.
class HalfwayBackend : public AttentionBackend
{
public:
    explicit HalfwayBackend(std::shared_ptr<QSemaphore> gate) : m_gate(std::move(gate)) {}
    std::string name() const override { return m_cpu.name(); }
    std::string deviceName() const override { return m_cpu.deviceName(); }
    Result<AttentionTrace> compute(const AttentionProblem &problem) override
    {
        reportProgress(0.5);
        m_gate->acquire();
        return m_cpu.compute(problem);
    }

private:
    std::shared_ptr<QSemaphore> m_gate;
    CpuBackend m_cpu;
};

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void editCellInTable();
    void changeHeadsWithSpinBox();
    void toggleMaskCell();
    void maskPresetShowsTheDocumentsMask();
    void undoRedoShortcuts();
    void openSaveRoundTrip();
    void malformedFileRefusedDocumentUntouched();
    void referenceOutsideTheFolderIsRefused();
    void saveSaysWhichReferencesItCouldNotKeep();
    void tokenEditsAndModels();
    void selectingACellExplainsIt();
    void stepViewSideBySideAndClickableCells();
    void settingsRemembered();
    void unsavedChangesPrompt();
    void unreadableRecoveryCopyIsOfferedWithItsError();
    void dropOpensProject();
    void statusBarShowsBackend();
    void saveAsShortcutWhereverTheFocusIs_data();
    void saveAsShortcutWhereverTheFocusIs();
    void failedComputeMarksViewsStale();
    void deviceLostOnVulkanMarksViewsStale();
    void failureAdviceFollowsTheKind();
    void longComputeShowsProgress();

private:
    std::unique_ptr<MainWindow> m_window;
};

void TestMainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestMainWindow::init()
{
    if (m_window && m_window->document())
        m_window->document()->undoStack()->setClean();
    m_window = std::make_unique<MainWindow>();
    m_window->resize(1400, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(m_window->openExample(kTutorial));
    QVERIFY(settle(*m_window));
}

void TestMainWindow::editCellInTable()
{
    MainWindow &w = *m_window;
    QTableView *table = w.project()->matrixEditor(MatrixId::Wq)->table();
    table->parentWidget()->parentWidget()->setFocus();
    const QModelIndex idx = table->model()->index(0, 0);
    const MatrixF before = w.currentResult()->trace.weights[0];
    table->setCurrentIndex(idx);
    table->edit(idx);
    typeInto(table->findChild<QLineEdit *>() ? static_cast<QWidget *>(table->findChild<QLineEdit *>())
                                             : QApplication::focusWidget(),
             QStringLiteral("2.5"));
    // The delegate commits on Return through a queued call.
    QTRY_COMPARE(w.document()->problem().weights.q(0, 0), 2.5f);
    QCOMPARE(w.document()->undoStack()->count(), 1);
    QVERIFY(w.isWindowModified());
    QVERIFY(settle(w));
    const MatrixF shown = w.currentResult()->trace.weights[0];
    QVERIFY(shown != before);
    QVERIFY(shown.isApprox(weightsOf(w.document()->project(), 0)));
    QCOMPARE(shownColor(w, 0, 1), expectedColor(w, shown(0, 1)));
    QCOMPARE(shownColor(w, 2, 2), expectedColor(w, shown(2, 2)));
}

void TestMainWindow::changeHeadsWithSpinBox()
{
    MainWindow &w = *m_window;
    QSpinBox *heads = w.project()->modelPanel()->headsBox();
    heads->setFocus();
    typeInto(heads, QStringLiteral("3"));
    QCOMPARE(w.document()->problem().spec.heads, 3);
    QCOMPARE(w.document()->problem().weights.q.cols(), 9);
    QVERIFY(settle(w));
    QCOMPARE(w.views()->grid()->heads(), 3);
    QCOMPARE(w.currentResult()->trace.heads(), 3);
    // Click the third head in the grid: the enlarged view shows it.
    QTest::mouseClick(w.views()->grid(), Qt::LeftButton, {}, w.views()->grid()->tileRect(2).center().toPoint());
    QCOMPARE(w.views()->headView()->head(), 2);
    const MatrixF expected = weightsOf(w.document()->project(), 2);
    QVERIFY(w.views()->headView()->data().values->isApprox(expected));
    QCOMPARE(shownColor(w, 1, 0), expectedColor(w, expected(1, 0)));
    // Head 1 is unchanged by adding heads.
    QVERIFY(w.currentResult()->trace.weights[0].isApprox(weightsOf(*Document::readProject(kTutorial), 0)));
}

void TestMainWindow::toggleMaskCell()
{
    MainWindow &w = *m_window;
    MaskGrid *grid = w.project()->maskEditor()->grid();
    QTest::mouseClick(grid, Qt::LeftButton, {}, grid->cellRect(0, 2).center().toPoint());
    QVERIFY(w.document()->problem().mask.allowed);
    QCOMPARE(int((*w.document()->problem().mask.allowed)(0, 2)), 0);
    QVERIFY(settle(w));
    const AttentionTrace &t = w.currentResult()->trace;
    QCOMPARE(int(t.allowed(0, 2)), 0);
    QCOMPARE(t.weights[0](0, 2), 0.0f);
    QVERIFY(std::abs(t.weights[0].row(0).sum() - 1.0f) < 1e-5f);
    const QColor masked = shownColor(w, 0, 2);
    QVERIFY2(masked == HeatmapRenderer::maskedColor() || masked == QColor(0x80, 0x80, 0x80), qPrintable(masked.name()));
    // A drag across row 1 is one undo step.
    QTest::mousePress(grid, Qt::LeftButton, {}, grid->cellRect(1, 0).center().toPoint());
    QTest::mouseMove(grid, grid->cellRect(1, 1).center().toPoint());
    QTest::mouseMove(grid, grid->cellRect(1, 2).center().toPoint());
    QTest::mouseRelease(grid, Qt::LeftButton, {}, grid->cellRect(1, 2).center().toPoint());
    QCOMPARE(w.document()->undoStack()->count(), 2);
    QVERIFY(settle(w));
    QVERIFY(w.currentResult()->trace.emptyRows[1]);
    QCOMPARE(w.currentResult()->trace.weights[0].row(1).sum(), 0.0f);
    // Presets through the editor.
    w.project()->maskEditor()->presetBox()->setCurrentIndex(
        w.project()->maskEditor()->presetBox()->findData(int(MaskPreset::None)));
    w.project()->maskEditor()->applyPreset();
    QVERIFY(!w.document()->problem().mask.allowed);
    QVERIFY(settle(w));
    QVERIFY(!w.currentResult()->trace.emptyRows[1]);
}

void TestMainWindow::maskPresetShowsTheDocumentsMask()
{
    // The preset box kept the previous document's choice: after a sliding window was applied,
    // a project with no mask opened with "Sliding window" shown, as if it had one.
    MainWindow w;
    QComboBox *box = w.project()->maskEditor()->presetBox();
    const auto shown = [box] { return MaskPreset(box->currentData().toInt()); };
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QCOMPARE(shown(), MaskPreset::Causal);
    auto *width = w.project()->maskEditor()->findChild<QSpinBox *>();
    QVERIFY(width);
    width->setValue(3);
    box->setCurrentIndex(box->findData(int(MaskPreset::SlidingWindow)));
    w.project()->maskEditor()->applyPreset();
    QCOMPARE(shown(), MaskPreset::SlidingWindow);
    // Issue 23: the window is the mask's own field (the width box edits it live), no longer a band
    // of custom cells.
    QCOMPARE(w.document()->problem().mask.window, std::int64_t(3));
    QVERIFY(!w.document()->problem().mask.allowed);
    QVERIFY(w.openExample(kTutorial)); // no mask at all
    QCOMPARE(shown(), MaskPreset::None);
    width->setValue(7);
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QCOMPARE(shown(), MaskPreset::Causal);
    // A sliding window is shown with its width; undoing it shows what is left.
    box->setCurrentIndex(box->findData(int(MaskPreset::SlidingWindow)));
    width->setValue(2);
    w.project()->maskEditor()->applyPreset();
    w.document()->undoStack()->undo();
    QCOMPARE(shown(), MaskPreset::Causal);
    w.document()->undoStack()->redo();
    QCOMPARE(shown(), MaskPreset::SlidingWindow);
    QCOMPARE(width->value(), 2);
}

void TestMainWindow::undoRedoShortcuts()
{
    MainWindow &w = *m_window;
    const Project original = w.document()->project();
    const MatrixF originalWeights = w.currentResult()->trace.weights[0];
    QVERIFY(w.document()->setValue(MatrixId::Xq, 1, 1, -3.0f));
    QVERIFY(settle(w));
    const MatrixF edited = w.currentResult()->trace.weights[0];
    QVERIFY(edited != originalWeights);
    w.activateWindow();
    QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(w.document()->problem().xq(1, 1), original.problem.xq(1, 1));
    QVERIFY(!w.isWindowModified());
    QVERIFY(settle(w));
    QVERIFY(w.currentResult()->trace.weights[0] == originalWeights);
    QCOMPARE(shownColor(w, 1, 0), expectedColor(w, originalWeights(1, 0)));
    QTest::keyClick(&w, Qt::Key_Y, Qt::ControlModifier);
    QCOMPARE(w.document()->problem().xq(1, 1), -3.0f);
    QVERIFY(settle(w));
    QVERIFY(w.currentResult()->trace.weights[0] == edited);
    QCOMPARE(shownColor(w, 1, 0), expectedColor(w, edited(1, 0)));
}

void TestMainWindow::openSaveRoundTrip()
{
    MainWindow &w = *m_window;
    QTemporaryDir dir;
    QVERIFY(w.openExample(kMultihead));
    QVERIFY(w.document()->setValue(MatrixId::Wk, 2, 1, 0.75f));
    QVERIFY(w.document()->setTokenLabel(TokenSide::Query, 0, QStringLiteral("<bos>")));
    QVERIFY(w.isWindowModified());
    const QString path = dir.filePath(QStringLiteral("round.attnscope.json"));
    QVERIFY(w.project()->saveTo(path));
    QVERIFY(!w.isWindowModified());
    QVERIFY(w.windowTitle().contains(QStringLiteral("round.attnscope.json")));
    QVERIFY(settle(w));
    const Project saved = w.document()->project();
    const MatrixF shown = w.currentResult()->trace.weights[1];

    MainWindow other;
    other.resize(1000, 700);
    other.show();
    QVERIFY(other.openFile(path));
    QVERIFY(settle(other));
    QCOMPARE(serializeProject(other.document()->project()), serializeProject(saved));
    QCOMPARE(other.document()->filePath(), QFileInfo(path).absoluteFilePath());
    QVERIFY(other.currentResult()->trace.weights[1] == shown);
    QCOMPARE(other.views()->grid()->heads(), saved.problem.spec.heads);
    QCOMPARE(QSettings().value(QStringLiteral("files/recent")).toStringList().value(0),
             QFileInfo(path).absoluteFilePath());
}

void TestMainWindow::malformedFileRefusedDocumentUntouched()
{
    MainWindow &w = *m_window;
    QVERIFY(w.document()->setValue(MatrixId::Wv, 0, 1, 9.0f));
    QVERIFY(settle(w));
    Document *doc = w.document();
    const std::string before = serializeProject(doc->project());
    const ComputedTracePtr shown = w.currentResult();
    const int undoCount = doc->undoStack()->count();

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.attnscope.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QString text = QString::fromStdString(serializeProject(*Document::readProject(kTutorial)));
    text.replace(QStringLiteral("\"heads\": 1"), QStringLiteral("\"heads\": 2"));
    f.write(text.toUtf8());
    f.close();

    QVERIFY(!w.openFile(path));
    QCOMPARE(w.document(), doc);
    QCOMPARE(serializeProject(doc->project()), before);
    QCOMPARE(doc->undoStack()->count(), undoCount);
    QVERIFY(w.isWindowModified());
    QVERIFY2(w.lastError().contains(QStringLiteral("weights.q")), qPrintable(w.lastError()));
    QVERIFY(w.lastError().contains(QStringLiteral("bad.attnscope.json")));
    auto *box = w.findChild<QMessageBox *>(QStringLiteral("errorBox"));
    QVERIFY(box);
    QVERIFY(box->text().contains(QStringLiteral("weights.q")));
    box->close();
    QVERIFY(settle(w));
    QCOMPARE(w.currentResult(), shown); // nothing recomputed, same heatmap
    QCOMPARE(shownColor(w, 0, 0), expectedColor(w, shown->trace.weights[0](0, 0)));
    QVERIFY(!w.openFile(dir.filePath(QStringLiteral("missing.attnscope.json"))));
    QCOMPARE(w.document(), doc);
}

namespace {

// A self-attention project whose query.x is the reference `reference`, and x.npy beside it.
QString writeReferencingProject(const QString &folder, const QString &reference)
{
    const float x[] = {1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1};
    QFile npy(folder + QStringLiteral("/x.npy"));
    if (!npy.open(QIODevice::WriteOnly))
        return {};
    const std::string bytes = npyBytes({3, 4}, x);
    npy.write(bytes.data(), qint64(bytes.size()));
    npy.close();
    const QString path = folder + QStringLiteral("/p.attnscope.json");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QStringLiteral(R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1, "headDimQK": 2,
        "headDimV": 2, "query": {"tokens": ["a", "b", "c"], "x": {"npy": "%1"}},
        "weights": {"q": [[1, 0], [0, 1], [1, 0], [0, 1]], "k": [[1, 0], [0, 1], [1, 0], [0, 1]],
                    "v": [[1, 0], [0, 1], [1, 0], [0, 1]]}})")
                .arg(reference)
                .toUtf8());
    return path;
}

} // namespace

void TestMainWindow::referenceOutsideTheFolderIsRefused()
{
    // A shared project reaching for a file of the reader's: refused when opened, the same
    // way whether that file exists or not, and the open document stays.
    MainWindow &w = *m_window;
    Document *doc = w.document();
    QTemporaryDir dir;
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("shared"))));
    QVERIFY(!writeReferencingProject(dir.path(), QStringLiteral("x.npy")).isEmpty()); // secret: the x.npy above
    QStringList messages;
    for (const QString &reference : {QStringLiteral("../x.npy"), QStringLiteral("../missing.npy")}) {
        const QString path = writeReferencingProject(dir.filePath(QStringLiteral("shared")), reference);
        QVERIFY(!w.openFile(path));
        QCOMPARE(w.document(), doc);
        QVERIFY2(w.lastError().endsWith(reference +
                                        QStringLiteral(": refused: the file is outside the project's folder (a "
                                                       "reference must lead to a file in that folder or a folder "
                                                       "below it)")),
                 qPrintable(w.lastError()));
        messages << w.lastError().remove(reference);
        for (auto *box : w.findChildren<QMessageBox *>(QStringLiteral("errorBox")))
            box->close();
    }
    QCOMPARE(messages[0], messages[1]);
}

void TestMainWindow::saveSaysWhichReferencesItCouldNotKeep()
{
    // x.npy rewritten after the project was opened: Save writes the values shown, and a box
    // says so. Save As into another folder copies x.npy there, which the status bar says.
    MainWindow &w = *m_window;
    QTemporaryDir dir;
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("a"))) && QDir().mkpath(dir.filePath(QStringLiteral("b"))));
    const QString path = writeReferencingProject(dir.filePath(QStringLiteral("a")), QStringLiteral("x.npy"));
    QVERIFY(w.openFile(path));
    const MatrixF shown = w.document()->problem().xq;

    QVERIFY(w.project()->saveTo(dir.filePath(QStringLiteral("b/copy.attnscope.json"))));
    const auto *message = w.findChild<ElidedLabel *>(QStringLiteral("statusMessage"));
    QVERIFY(message);
    QVERIFY2(message->text().contains(QStringLiteral("x.npy was copied beside it as x.npy.")),
             qPrintable(message->text()));
    QVERIFY(!w.findChild<QMessageBox *>(QStringLiteral("saveNotesBox")));
    QCOMPARE(test::readAll(dir.filePath(QStringLiteral("b/x.npy"))),
             test::readAll(dir.filePath(QStringLiteral("a/x.npy"))));

    const float other[] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
    {
        QFile npy(dir.filePath(QStringLiteral("a/x.npy")));
        QVERIFY(npy.open(QIODevice::WriteOnly | QIODevice::Truncate));
        const std::string bytes = npyBytes({3, 4}, other);
        npy.write(bytes.data(), qint64(bytes.size()));
    }
    QVERIFY(w.project()->saveTo(path));
    auto *box = w.findChild<QMessageBox *>(QStringLiteral("saveNotesBox"));
    QVERIFY(box);
    QVERIFY2(box->informativeText().contains(QStringLiteral("query.x: x.npy changed on disk since it was opened")),
             qPrintable(box->informativeText()));
    box->close();
    auto reopened = Document::readProject(path);
    QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.message().c_str());
    QCOMPARE(reopened->problem.xq, shown);
}

void TestMainWindow::tokenEditsAndModels()
{
    MainWindow &w = *m_window;
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
    for (MatrixId id : kAllMatrices)
        testers.push_back(std::make_unique<QAbstractItemModelTester>(
            w.project()->matrixEditor(id)->model(), QAbstractItemModelTester::FailureReportingMode::QtTest));
    MatrixEditor *xq = w.project()->matrixEditor(MatrixId::Xq);
    MatrixModel *model = xq->model();
    QVERIFY(model->setData(model->index(1, 0), QStringLiteral("Robots")));
    QCOMPARE(w.document()->project().queryTokens[1], std::string("Robots"));
    QVERIFY(!model->setData(model->index(1, 1), QStringLiteral("not a number")));
    xq->table()->setCurrentIndex(model->index(0, 0));
    xq->insertToken();
    QCOMPARE(w.document()->problem().tq(), 4);
    QCOMPARE(model->rowCount(), 4);
    QVERIFY(settle(w));
    QCOMPARE(w.views()->headView()->data().rows(), 4);
    QCOMPARE(w.views()->headView()->data().rowLabels.value(2), QStringLiteral("Robots"));
    w.document()->setMode(AttentionMode::Cross);
    QCOMPARE(w.project()->matrixEditor(MatrixId::Xkv)->model()->rowCount(), 4);
    w.project()->matrixEditor(MatrixId::Xkv)->removeToken();
    QVERIFY(settle(w));
    QCOMPARE(w.views()->headView()->data().cols(), 3);
    QCOMPARE(w.views()->headView()->data().rows(), 4);
    w.project()->matrixEditor(MatrixId::Wo)->findChild<QCheckBox *>()->click();
    QVERIFY(w.document()->problem().weights.o);
    QVERIFY(w.project()->matrixEditor(MatrixId::Wo)->model()->rowCount() > 0);
    w.document()->undoStack()->setIndex(0);
    QVERIFY(settle(w));
    QCOMPARE(w.views()->headView()->data().rows(), 3);
}

void TestMainWindow::selectingACellExplainsIt()
{
    MainWindow &w = *m_window;
    HeatmapView *v = w.views()->headView();
    QTest::mouseClick(v, Qt::LeftButton, {}, v->cellRect(0, 1).center().toPoint());
    const QString html = w.views()->teaching()->html();
    const auto &t = w.currentResult()->trace;
    QVERIFY(html.contains(QStringLiteral("Thinking")));
    QVERIFY2(html.contains(QString::number(double(t.weights[0](0, 1)), 'g', 4)), qPrintable(html.right(2000)));
    QVERIFY(html.contains(QStringLiteral("3 \u00d7 3"))); // shapes printed
    // Scores: the dot product of q_0 and k_1 is printed.
    QVERIFY(html.contains(QString::number(double(t.scores[0](0, 1)), 'g', 4)));
    w.views()->lines()->setOverlay(true);
    QVERIFY(!w.views()->lines()->grab().toImage().isNull());
}

void TestMainWindow::stepViewSideBySideAndClickableCells()
{
    // The step view stacked every tensor one under the other, and its numbers could not be
    // clicked: the cell to explain had to be picked in a heatmap.
    MainWindow &w = *m_window;
    w.resize(1500, 900);
    TeachingView *teaching = w.views()->teaching();
    w.views()->tabs()->setCurrentWidget(teaching);
    QTRY_VERIFY(teaching->isVisible());
    QCoreApplication::processEvents();
    QVERIFY2(teaching->room() > 70, qPrintable(QString::number(teaching->room())));
    const QString sideBySide = QStringLiteral("<table cellspacing='0' cellpadding='0'><tr><td valign='top'");
    QVERIFY2(teaching->html().contains(sideBySide), qPrintable(teaching->html().left(1500)));
    // A narrow view: one under the other again.
    teaching->setMinimumWidth(0);
    w.resize(700, 900);
    QTRY_VERIFY(teaching->room() < 40 || !teaching->html().contains(sideBySide));

    w.resize(1500, 900);
    QTRY_VERIFY(teaching->html().contains(sideBySide));
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // A click on the cell (1, 2) of a Tq x Tk table: explained, and selected in the heatmap.
    QCoreApplication::processEvents();
    const auto findAnchor = [&] {
        QTextCursor cursor(teaching->document());
        while (!cursor.atEnd()) {
            cursor.movePosition(QTextCursor::NextCharacter);
            if (cursor.charFormat().anchorHref() == QLatin1String("cell:1,2"))
                return cursor;
        }
        return QTextCursor();
    };
    QTextCursor cursor = findAnchor();
    QVERIFY(!cursor.isNull());
    teaching->setTextCursor(cursor);
    teaching->ensureCursorVisible();
    QCoreApplication::processEvents();
    cursor = findAnchor();
    QSignalSpy clicked(teaching, &TeachingView::cellClicked);
    // The middle of the number before the cursor: the anchor under the mouse.
    QPoint at = teaching->cursorRect(cursor).center();
    for (int dx = 0; dx < 40 && teaching->anchorAt(at) != QLatin1String("cell:1,2"); ++dx)
        at -= QPoint(1, 0);
    QCOMPARE(teaching->anchorAt(at), QStringLiteral("cell:1,2"));
    QTest::mouseClick(teaching->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.first().value(0).toInt(), 1);
    QCOMPARE(clicked.first().value(1).toInt(), 2);
    QCOMPARE(w.views()->headView()->selectedCell(), std::optional<QPoint>(QPoint(2, 1)));
    QVERIFY2(teaching->html().contains(QStringLiteral("query 1")), qPrintable(teaching->html().right(800)));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/step-view-side-by-side.png")));
}

void TestMainWindow::settingsRemembered()
{
    m_window->viewBar()->setColorMap(ColorMapKind::Magma);
    QVERIFY(m_window->close());
    MainWindow next;
    QCOMPARE(next.views()->headView()->settings().colorMap, ColorMapKind::Magma);
    QVERIFY(next.openExample(kTutorial));
    next.resize(900, 700);
    next.show();
    QVERIFY(QTest::qWaitForWindowExposed(&next));
    QVERIFY(settle(next));
    const float w01 = next.currentResult()->trace.weights[0](0, 1);
    const QImage image = next.views()->headView()->grab().toImage();
    const QPointF corner = next.views()->headView()->cellRect(0, 1).topLeft() + QPointF(3, 3);
    QCOMPARE(QColor(image.pixel(corner.toPoint())), QColor::fromRgb(ColorMap(ColorMapKind::Magma).at(w01)));
}

namespace {

// Answers the next modal message box with `button`.
void answerNextPrompt(QMessageBox::StandardButton button, QString *text)
{
    QTimer::singleShot(0, [button, text] {
        auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
        if (!box)
            return;
        *text = box->text();
        box->button(button)->click();
    });
}

} // namespace

void TestMainWindow::unsavedChangesPrompt()
{
    MainWindow &w = *m_window;
    QVERIFY(w.document()->setValue(MatrixId::Wq, 0, 0, 7.0f));
    QString asked;
    answerNextPrompt(QMessageBox::Cancel, &asked);
    QVERIFY(!w.close()); // cancelled: the window stays, the edit too
    QVERIFY(asked.contains(QStringLiteral("unsaved")));
    QVERIFY(w.isVisible());
    QCOMPARE(w.document()->problem().weights.q(0, 0), 7.0f);
    asked.clear();
    answerNextPrompt(QMessageBox::Discard, &asked);
    QVERIFY(w.close());
    QVERIFY(!asked.isEmpty());
}

void TestMainWindow::unreadableRecoveryCopyIsOfferedWithItsError()
{
    // A recovery copy of a run that is gone, spoilt on disk: the window says so with the
    // error, Keep leaves it, and only Discard deletes it.
    MainWindow &w = *m_window;
    QVERIFY(QDir().mkpath(Autosaver::recoveryDirectory()));
    const QString copy =
        QDir(Autosaver::recoveryDirectory()).filePath(QStringLiteral("1-0123456789abcdef-1.attnscope.json"));
    {
        QFile f(copy);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"attnscope\", \"version\": 1, <b>spoilt</b>");
    }
    for (const QMessageBox::ButtonRole role : {QMessageBox::RejectRole, QMessageBox::DestructiveRole}) {
        QString text;
        QTimer::singleShot(0, [&] {
            auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
            if (!box)
                return;
            text = box->text();
            for (QAbstractButton *button : box->buttons())
                if (box->buttonRole(button) == role)
                    button->click();
        });
        QVERIFY(!w.offerRecovery());
        QVERIFY2(text.contains(copy) && text.contains(QStringLiteral("not valid JSON")), qPrintable(text));
        QCOMPARE(QFile::exists(copy), role == QMessageBox::RejectRole);
    }
}

void TestMainWindow::dropOpensProject()
{
    MainWindow &w = *m_window;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("dropped.attnscope.json"));
    {
        Document d(*Document::readProject(kMultihead));
        QVERIFY(d.save(path).ok());
    }
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &drop);
    QCOMPARE(w.document()->filePath(), QFileInfo(path).absoluteFilePath());
    QVERIFY(settle(w));
    QCOMPARE(w.views()->grid()->heads(), 2);
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("dropped.attnscope.json")));
}

void TestMainWindow::statusBarShowsBackend()
{
    const QString text = m_window->statusText();
    QVERIFY2(text.contains(QStringLiteral("cpu")) && text.contains(QStringLiteral("computed in")), qPrintable(text));
}

void TestMainWindow::saveAsShortcutWhereverTheFocusIs_data()
{
    QTest::addColumn<QString>("focus");
    QTest::newRow("heatmap") << QStringLiteral("heatmap");
    QTest::newRow("table cell being edited") << QStringLiteral("cell");
    QTest::newRow("spin box") << QStringLiteral("spin");
    QTest::newRow("spin box after an edit") << QStringLiteral("spinEdited");
}

void TestMainWindow::saveAsShortcutWhereverTheFocusIs()
{
    QFETCH(QString, focus);
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    if (focus == QLatin1String("heatmap")) {
        w->views()->headView()->setFocus();
    } else if (focus == QLatin1String("cell")) {
        QTableView *table = w->project()->matrixEditor(MatrixId::Wq)->table();
        const QModelIndex cell = table->model()->index(0, 0);
        table->setCurrentIndex(cell);
        table->edit(cell);
        QTRY_VERIFY(QApplication::focusWidget() && QApplication::focusWidget()->parentWidget() == table->viewport());
    } else {
        QSpinBox *heads = w->project()->modelPanel()->headsBox();
        heads->setFocus();
        if (focus == QLatin1String("spinEdited"))
            QTest::keyClick(heads, Qt::Key_Up);
    }
    QWidget *target = QApplication::focusWidget();
    QVERIFY(target);
    // The cell's editor closes when the dialog takes the focus: its name is kept, not the widget.
    const QString focused = QString::fromLatin1(target->metaObject()->className());
    DialogWatcher watcher;
    QTest::keyClick(target, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_VERIFY2(watcher.sawSaveDialog,
                 qPrintable(QStringLiteral("focus in %1; other dialog: %2").arg(focused, watcher.other)));
}

void TestMainWindow::failedComputeMarksViewsStale()
{
    MainWindow &w = *m_window;
    QCOMPARE(w.currentResult()->trace.heads(), 1);
    QVERIFY(!w.banner()->isStale());
    QSignalSpy failed(w.computeController(), &ComputeController::failed);
    QVERIFY(w.document()->setHeads(3));
    // Before the computation starts, the worker's budget becomes too small for it.
    MemoryBudget tiny;
    tiny.fixedBytes = 64;
    w.setMemoryBudget(tiny);
    QVERIFY(failed.wait(10000));
    // The views still hold the 1-head result, but they say it is not the document's.
    QCOMPARE(w.currentResult()->trace.heads(), 1);
    QVERIFY(w.banner()->isStale());
    QVERIFY(w.views()->tabs()->graphicsEffect() && w.views()->tabs()->graphicsEffect()->isEnabled());
    QVERIFY2(w.banner()->reason().contains(QStringLiteral("memory")), qPrintable(w.banner()->reason()));
    QVERIFY2(w.statusText().contains(w.banner()->reason().section(QLatin1Char('\n'), 0, 0)),
             qPrintable(w.statusText()));
    // The next computation that succeeds clears it.
    w.setMemoryBudget(MemoryBudget());
    QVERIFY(w.document()->setHeads(2));
    QVERIFY(settle(w));
    QVERIFY(!w.banner()->isStale());
    QVERIFY(!w.views()->tabs()->graphicsEffect() || !w.views()->tabs()->graphicsEffect()->isEnabled());
    QCOMPARE(w.currentResult()->trace.heads(), 2);
}

void TestMainWindow::deviceLostOnVulkanMarksViewsStale()
{
    // Backend > Vulkan chosen explicitly, on lavapipe, with the device lost at every compute.
    MainWindow &w = *m_window;
    BackendOptions faulty;
    faulty.vulkan.fault = VulkanFault::DeviceLost;
    w.computeController()->setBackendOptions(faulty);
    QSignalSpy changed(w.computeController(), &ComputeController::backendChanged);
    QSignalSpy failed(w.computeController(), &ComputeController::failed);
    w.computeController()->setBackendRequest(BackendRequest::Vulkan);
    QVERIFY(changed.wait(30000));
    if (changed.at(0).at(0).toString().isEmpty())
        QFAIL(qPrintable(QStringLiteral("no Vulkan device: ") + changed.at(0).at(2).toString()));
    QVERIFY(w.document()->setHeads(3));
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > 0, 30000);
    QVERIFY(w.computeController()->waitForIdle());
    QCOMPARE(w.currentResult()->trace.heads(), 1);
    QVERIFY(w.banner()->isStale());
    QVERIFY(w.banner()->reason().contains(QStringLiteral("vkWaitForFences")));
    const auto kind = failed.last().at(2).value<ErrorKind>();
    if (kind == ErrorKind::DeviceLost)
        QVERIFY2(w.banner()->reason().contains(QStringLiteral("CPU")), qPrintable(w.banner()->reason()));
}

void TestMainWindow::failureAdviceFollowsTheKind()
{
    // A lost device suggests the CPU (or Automatic); memory failures suggest a smaller project.
    QVERIFY(ProjectSource::failureAdvice(ErrorKind::DeviceLost).contains(QStringLiteral("CPU")));
    QVERIFY(ProjectSource::failureAdvice(ErrorKind::DeviceLost).contains(QStringLiteral("Automatic")));
    QVERIFY(ProjectSource::failureAdvice(ErrorKind::OutOfMemory).contains(QStringLiteral("smaller")));
    QVERIFY(ProjectSource::failureAdvice(ErrorKind::TooLarge).contains(QStringLiteral("smaller")));
    QVERIFY(ProjectSource::failureAdvice(ErrorKind::InvalidInput).isEmpty()); // the message says it all
}

void TestMainWindow::longComputeShowsProgress()
{
    // Typing computes quietly; a computation that runs past half a second shows a bar in the
    // status bar with the fraction done, gone when the result arrives.
    MainWindow &w = *m_window;
    auto gate = std::make_shared<QSemaphore>(0);
    const std::unique_ptr<QSemaphore, void (*)(QSemaphore *)> opener(gate.get(),
                                                                     [](QSemaphore *g) { g->release(100); });
    w.computeController()->setBackend(std::make_shared<HalfwayBackend>(gate));
    QProgressBar *bar = w.status()->progressBar();
    QVERIFY(!bar->isVisible());
    QVERIFY(w.document()->setHeads(2));
    QTRY_VERIFY(w.computeController()->isBusy());
    QVERIFY(!bar->isVisible()); // not at once
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
    QVERIFY(w.computeController()->runningMilliseconds() >= ProjectSource::kProgressAfterMs);
    QCOMPARE(bar->value(), 50);
    QVERIFY2(bar->text().contains(QStringLiteral("50")), qPrintable(bar->text()));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/compute-progress.png")));
    gate->release();
    QVERIFY(settle(w));
    QVERIFY(!bar->isVisible());
    QCOMPARE(w.currentResult()->trace.heads(), 2);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
