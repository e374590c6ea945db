// Regressions of issue 8 seen through the real widgets (offscreen): the scale editor's undo
// steps, numbers a table cell refuses, sizes refused with a message, and what the views show
// when a computation fails.

#include "app/gui/document/MemoryBudget.h"
#include "app/gui/views/EditorPanels.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/MatrixModel.h"
#include "core/attention/CpuBackend.h"

#include "../common/TestUtil.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QGraphicsEffect>
#include <QLabel>
#include <QProgressBar>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace attnscope;

namespace {

const QString kTutorial = QStringLiteral(":/examples/self-attention-tutorial.attnscope.json");

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

bool settle(MainWindow &w)
{
    if (!w.computeController()->waitForIdle(30000))
        return false;
    return w.currentResult() && w.currentResult()->generation == w.computeController()->latestGeneration() &&
           serializeProject(w.currentResult()->project) == serializeProject(w.document()->project());
}

void typeInto(QAbstractSpinBox *spin, const QString &text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

} // namespace

class TestGuiEdits : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void scaleEditorUndoStepsPerField();
    void cellRefusesNumbersBeyondFloat_data();
    void cellRefusesNumbersBeyondFloat();
    void sizeBeyondMemoryRefusedWithMessage();
    void sharedScaleReadsTheWorkersRanges();
    void failedComputeMarksViewsStale();
    void deviceLostOnVulkanMarksViewsStale();
    void failureAdviceFollowsTheKind();
    void longComputeShowsProgress();

private:
    std::unique_ptr<MainWindow> m_window;
};

void TestGuiEdits::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_guiedits"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestGuiEdits::init()
{
    m_window = std::make_unique<MainWindow>();
    m_window->resize(1400, 900);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(m_window->openExample(kTutorial));
    QVERIFY(settle(*m_window));
}

void TestGuiEdits::cleanup()
{
    setMemoryBudgetForTesting(0);
    qunsetenv("ATTNSCOPE_VULKAN_FAULT");
    if (m_window && m_window->document())
        m_window->document()->undoStack()->setClean();
    m_window.reset();
}

void TestGuiEdits::scaleEditorUndoStepsPerField()
{
    MainWindow &w = *m_window;
    ModelPanel *panel = w.modelPanel();
    QUndoStack *stack = w.document()->undoStack();
    QComboBox *mode = panel->scaleBox();
    auto choose = [mode](ScaleMode m) {
        mode->setCurrentIndex(mode->findData(int(m)));
        emit mode->activated(mode->currentIndex());
    };
    choose(ScaleMode::Custom);
    QCOMPARE(stack->count(), 1);
    typeInto(panel->scaleValueBox(), QStringLiteral("0.5"));
    typeInto(panel->scaleValueBox(), QStringLiteral("0.25")); // consecutive value edits: one step
    QCOMPARE(w.document()->problem().spec.scale(), 0.25);
    QCOMPARE(stack->count(), 2);
    choose(ScaleMode::None); // a mode switch is always its own step
    QCOMPARE(stack->count(), 3);
    choose(ScaleMode::Custom);
    QCOMPARE(stack->count(), 4);
    stack->undo();
    QCOMPARE(w.document()->problem().spec.scaleMode, ScaleMode::None);
    stack->undo();
    QCOMPARE(w.document()->problem().spec.scaleMode, ScaleMode::Custom);
    QCOMPARE(w.document()->problem().spec.scale(), 0.25);
    QCOMPARE(panel->scaleBox()->currentData().toInt(), int(ScaleMode::Custom));
}

void TestGuiEdits::cellRefusesNumbersBeyondFloat_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("1e39") << QStringLiteral("1e39");
    QTest::newRow("-1e39") << QStringLiteral("-1e39");
    QTest::newRow("3.5e38") << QStringLiteral("3.5e38");
    QTest::newRow("inf") << QStringLiteral("inf");
    QTest::newRow("nan") << QStringLiteral("nan");
    QTest::newRow("1e999") << QStringLiteral("1e999");
}

void TestGuiEdits::cellRefusesNumbersBeyondFloat()
{
    QFETCH(QString, text);
    MainWindow &w = *m_window;
    MatrixModel *model = w.matrixEditor(MatrixId::Wq)->model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const float before = w.document()->problem().weights.q(0, 0);
    QVERIFY(!model->setData(model->index(0, 0), text));
    QCOMPARE(w.document()->problem().weights.q(0, 0), before);
    QCOMPARE(w.document()->undoStack()->count(), 0);
    // The largest float is still a number: accepted, saved and opened again.
    QVERIFY(model->setData(model->index(0, 0), QStringLiteral("3.4e38")));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.attnscope.json"));
    QVERIFY(w.saveTo(path));
    auto reread = Document::readProject(path);
    QVERIFY2(reread.ok(), reread ? "" : reread.message().c_str());
    QCOMPARE(reread->problem.weights.q(0, 0), 3.4e38f);
}

void TestGuiEdits::sizeBeyondMemoryRefusedWithMessage()
{
    MainWindow &w = *m_window;
    QVERIFY(w.document()->setHeads(64));
    QVERIFY(w.document()->setHeadDimQK(4096));
    QVERIFY(w.computeController()->waitForIdle(30000));
    const MatrixF q = w.document()->problem().weights.q, k = w.document()->problem().weights.k;
    const int steps = w.document()->undoStack()->count();
    QSpinBox *dq = w.modelPanel()->inputDimBox();
    typeInto(dq, QStringLiteral("65536")); // W_Q and W_K would be 64 GiB each
    QCOMPARE(w.document()->undoStack()->count(), steps);
    QCOMPARE(w.document()->problem().dq(), 4);
    QVERIFY(w.document()->problem().weights.q == q);
    QVERIFY(w.document()->problem().weights.k == k);
    QCOMPARE(dq->value(), 4); // the editor shows the document again
    QVERIFY2(w.lastError().contains(QStringLiteral("GiB")) && w.lastError().contains(QStringLiteral("65536")),
             qPrintable(w.lastError()));
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestGuiEdits::sharedScaleReadsTheWorkersRanges()
{
    MainWindow &w = *m_window;
    QVERIFY(w.document()->setHeads(3));
    QVERIFY(settle(w));
    const ComputedTracePtr r = w.currentResult();
    QCOMPARE(int(r->ranges.maxWeight.size()), 3);
    for (HeatmapQuantity quantity : {HeatmapQuantity::Weights, HeatmapQuantity::Scores}) {
        HeatmapViewSettings s = w.headView()->settings();
        s.quantity = quantity;
        s.scope = ScaleScope::Shared;
        w.headView()->setSettings(s);
        const HeatmapData &shown = w.headView()->data();
        // The same range as a pass over every head here would give.
        const HeatmapData here =
            HeatmapData::fromTrace(r->project, r->trace, w.headView()->head(), quantity, ScaleScope::Shared);
        QCOMPARE(shown.rangeMin, here.rangeMin);
        QCOMPARE(shown.rangeMax, here.rangeMax);
    }
    // The mean over heads is the worker's, not recomputed on the GUI thread.
    QCOMPARE(w.meanView()->data().values, r->ranges.meanWeights.get());
}

void TestGuiEdits::failedComputeMarksViewsStale()
{
    MainWindow &w = *m_window;
    QCOMPARE(w.currentResult()->trace.heads(), 1);
    QVERIFY(!w.resultIsStale());
    QSignalSpy failed(w.computeController(), &ComputeController::failed);
    QVERIFY(w.document()->setHeads(3));
    // Before the computation starts, the worker's budget becomes too small for it.
    setMemoryBudgetForTesting(64);
    QVERIFY(failed.wait(10000));
    // The views still hold the 1-head result, but they say it is not the document's.
    QCOMPARE(w.currentResult()->trace.heads(), 1);
    QVERIFY(w.resultIsStale());
    QVERIFY(w.viewTabs()->graphicsEffect() && w.viewTabs()->graphicsEffect()->isEnabled());
    QVERIFY2(w.staleReason().contains(QStringLiteral("memory")), qPrintable(w.staleReason()));
    QVERIFY2(w.statusText().contains(w.staleReason().section(QLatin1Char('\n'), 0, 0)), qPrintable(w.statusText()));
    // The next computation that succeeds clears it.
    setMemoryBudgetForTesting(0);
    QVERIFY(w.document()->setHeads(2));
    QVERIFY(settle(w));
    QVERIFY(!w.resultIsStale());
    QVERIFY(!w.viewTabs()->graphicsEffect() || !w.viewTabs()->graphicsEffect()->isEnabled());
    QCOMPARE(w.currentResult()->trace.heads(), 2);
}

void TestGuiEdits::deviceLostOnVulkanMarksViewsStale()
{
    // Backend > Vulkan chosen explicitly, on lavapipe, with the device lost at every compute.
    MainWindow &w = *m_window;
    qputenv("ATTNSCOPE_VULKAN_FAULT", "device-lost");
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
    QVERIFY(w.resultIsStale());
    QVERIFY(w.staleReason().contains(QStringLiteral("vkWaitForFences")));
    const auto kind = failed.last().at(2).value<ErrorKind>();
    if (kind == ErrorKind::DeviceLost)
        QVERIFY2(w.staleReason().contains(QStringLiteral("CPU")), qPrintable(w.staleReason()));
}

void TestGuiEdits::failureAdviceFollowsTheKind()
{
    // A lost device suggests the CPU (or Automatic); memory failures suggest a smaller project.
    QVERIFY(MainWindow::failureAdvice(ErrorKind::DeviceLost).contains(QStringLiteral("CPU")));
    QVERIFY(MainWindow::failureAdvice(ErrorKind::DeviceLost).contains(QStringLiteral("Automatic")));
    QVERIFY(MainWindow::failureAdvice(ErrorKind::OutOfMemory).contains(QStringLiteral("smaller")));
    QVERIFY(MainWindow::failureAdvice(ErrorKind::TooLarge).contains(QStringLiteral("smaller")));
    QVERIFY(MainWindow::failureAdvice(ErrorKind::InvalidInput).isEmpty()); // the message says it all
}

void TestGuiEdits::longComputeShowsProgress()
{
    // Typing computes quietly; a computation that runs past half a second shows a bar in the
    // status bar with the fraction done, gone when the result arrives.
    MainWindow &w = *m_window;
    auto gate = std::make_shared<QSemaphore>(0);
    const std::unique_ptr<QSemaphore, void (*)(QSemaphore *)> opener(gate.get(),
                                                                     [](QSemaphore *g) { g->release(100); });
    w.computeController()->setBackend(std::make_shared<HalfwayBackend>(gate));
    QProgressBar *bar = w.computeProgressBar();
    QVERIFY(!bar->isVisible());
    QVERIFY(w.document()->setHeads(2));
    QTRY_VERIFY(w.computeController()->isBusy());
    QVERIFY(!bar->isVisible()); // not at once
    QTRY_VERIFY_WITH_TIMEOUT(bar->isVisible(), 10000);
    QVERIFY(w.computeController()->runningMilliseconds() >= MainWindow::kProgressAfterMs);
    QCOMPARE(bar->value(), 50);
    QVERIFY2(bar->text().contains(QStringLiteral("50")), qPrintable(bar->text()));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/compute-progress.png")));
    gate->release();
    QVERIFY(settle(w));
    QVERIFY(!bar->isVisible());
    QCOMPARE(w.currentResult()->trace.heads(), 2);
}

QTEST_MAIN(TestGuiEdits)
#include "tst_guiedits.moc"
