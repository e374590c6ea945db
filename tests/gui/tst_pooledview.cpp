// Long sequences in the window (issue 11): a project above the pooled threshold opens in the
// pooled view (not refused), its picture equals pooling the double reference, zooming in with
// the wheel computes the visible block exactly, a superseded computation is cancelled, and
// screenshots of a 16384-token project (whole, and a zoomed block with labels) are kept in
// the build tree. Projects are written with .npy references, as long inputs are.

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include "app/gui/document/MemoryBudget.h"
#include "app/gui/document/PooledJobs.h"
#include "app/gui/document/PooledTileSource.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "core/attention/RandomProblem.h"
#include "core/attention/ReferenceAttention.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QUndoStack>
#include <QWheelEvent>

#include <condition_variable>
#include <mutex>

using namespace attnscope;

namespace {

// A random causal project with its input and weights in .npy files beside it.
QString writeLongProject(const QString &dir, Eigen::Index tokens, Eigen::Index modelDim, int heads)
{
    RandomProblemOptions o;
    o.tokens = tokens;
    o.modelDim = modelDim;
    o.heads = heads;
    o.causal = true;
    Project p = randomProject(o);
    p.title = QStringLiteral("Random causal self-attention, T = %1").arg(tokens).toStdString();
    p.folder = dir.toStdString();
    auto reference = [&](const char *field, const char *file, const MatrixF &m) {
        QFile f(QDir(dir).filePath(QLatin1String(file)));
        if (!f.open(QIODevice::WriteOnly))
            return false;
        const std::string bytes = npyBytes({m.rows(), m.cols()}, m.data());
        f.write(bytes.data(), qint64(bytes.size()));
        p.npyReferences[field] = NpyReference{file, m.rows(), m.cols(), matrixFingerprint(m), 0};
        return true;
    };
    if (!reference("query.x", "x.npy", p.problem.xq) || !reference("weights.q", "wq.npy", p.problem.weights.q) ||
        !reference("weights.k", "wk.npy", p.problem.weights.k) ||
        !reference("weights.v", "wv.npy", p.problem.weights.v))
        return {};
    const QString path = QDir(dir).filePath(QStringLiteral("long.attnscope.json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QByteArray::fromStdString(serializeProject(p, dir.toStdString())));
    return path;
}

// Computes tiles as a long project's source does (ProjectTiles, on the CPU), but holds each
// computation at a gate until the test opens it: "the GUI did not wait for the worker" is then
// the GUI going on while the worker is provably still held, and "a newer request stops the
// running one" is the held computation's cancel flag, set before it may go on.
class GatedTileSource : public PooledTileSource
{
public:
    explicit GatedTileSource(std::shared_ptr<const Project> project)
        : m_tiles(std::move(project), std::make_shared<BackendHost>())
    {
        m_shape = m_tiles.shape();
    }

    Result<std::shared_ptr<PooledTile>> computeTile(const PooledBlock &block, const std::atomic<bool> *cancel,
                                                    PoolProgress *progress) const override
    {
        {
            std::unique_lock lock(m_mutex);
            m_held = cancel;
            m_gate.wait(lock, [this] { return m_open; });
            m_held = nullptr;
        }
        return m_tiles.computeTile(block, cancel, progress); // the product's own project tiles
    }

    // Whether a computation waits at the gate now.
    bool isHolding() const
    {
        std::lock_guard lock(m_mutex);
        return m_held != nullptr;
    }
    // Whether the computation held at the gate has been asked to stop.
    bool heldIsCancelled() const
    {
        std::lock_guard lock(m_mutex);
        return m_held && m_held->load();
    }
    // Lets the held computation, and every later one, go on.
    void open()
    {
        std::lock_guard lock(m_mutex);
        m_open = true;
        m_gate.notify_all();
    }

private:
    ProjectTiles m_tiles;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_gate;
    mutable const std::atomic<bool> *m_held = nullptr;
    bool m_open = false;
};

// The bin of `i` when `count` items are split into `bins`, by the contract's boundaries.
std::int64_t binContaining(std::int64_t i, std::int64_t count, std::int64_t bins)
{
    for (std::int64_t a = 0; a < bins; ++a)
        if (a * count / bins <= i && i < (a + 1) * count / bins)
            return a;
    return -1;
}

// The widget position of token (key x, query y) in the pooled view.
QPointF pointOf(const PooledHeatmapView *view, double key, double query)
{
    const QRectF plot = view->plotRect(), v = view->viewRect();
    return {plot.left() + (key - v.left()) / v.width() * plot.width(),
            plot.top() + (query - v.top()) / v.height() * plot.height()};
}

void wheel(QWidget *widget, QPointF pos, int notches)
{
    QWheelEvent event(pos, widget->mapToGlobal(pos), QPoint(), QPoint(0, 120 * notches), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(widget, &event);
}

// The machine's memory budget, with projects past `cells` (Tq·Tk·heads) shown pooled: the
// default, 64M cells, would need files of thousands of megabytes.
MemoryBudget pooledPast(std::int64_t cells)
{
    MemoryBudget budget;
    budget.pooledCells = cells;
    return budget;
}

} // namespace

class TestPooledView : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void aboveThresholdOpensPooledAndZoomIsExact();
    void supersededComputeIsCancelled();
    void tooLargeEvenPooledIsRefusedWithTheBytes();
    void zoomDuringComputeCancelsIt();
    void screenshots16k();
    void meanOverHeadsPoolsTheHeadAverage();
    void hoverNamesRangesAndValue();
    void toolbarColorScaleAndQuantityApply();
    void longProjectOpensOnLogScale();
    void exportFigureDrawsThePooledView();
    void keyboardZoomsPansAndResets();

private:
    QTemporaryDir m_dir;
};

void TestPooledView::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_pooledview"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QVERIFY(m_dir.isValid());
}

void TestPooledView::aboveThresholdOpensPooledAndZoomIsExact()
{
    // T = 3000, H = 2: 18M cells, above a threshold lowered for the test (the full trace
    // would fit, so the threshold alone decides).
    const QString dir = m_dir.filePath(QStringLiteral("t3000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 3000, 32, 2);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(4) << 20));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    QVERIFY(w.project()->pooledView()->isVisible());
    QVERIFY(!w.views()->tabs()->isVisible());
    QVERIFY(w.project()->pooledNotice()->isVisible());
    QVERIFY2(w.project()->pooledNotice()->text().contains(QStringLiteral("pooled")),
             qPrintable(w.project()->pooledNotice()->text()));
    QVERIFY2(w.project()->pooledNotice()->text().contains(QStringLiteral("MiB")),
             qPrintable(w.project()->pooledNotice()->text()));
    // No full computation of it was started (the start-up example's may still finish).
    QVERIFY(w.computeController()->waitForIdle(30000));
    QVERIFY(!w.currentResult() || w.currentResult()->project.problem.tq() != 3000);

    PooledHeatmapView *view = w.project()->pooledView();
    view->setHead(0);
    const PooledTilePtr whole = test::waitForVisibleTile(view, 60000);
    QVERIFY(whole);
    QCOMPARE(whole->block.q0, std::int64_t(0));
    QCOMPARE(whole->block.q1, std::int64_t(3000));
    const AttentionProblem problem = w.document()->problem();
    auto ref = referenceAttention(problem);
    QVERIFY(ref.ok());
    for (int h = 0; h < 2; ++h) {
        const MatrixD expected = poolWeights(ref->weights[size_t(h)], whole->block.bins, PoolMode::Max);
        const std::string diff =
            test::compareMatrix("whole", whole->heads[size_t(h)], expected, test::Tolerance::weights());
        QVERIFY2(diff.empty(), diff.c_str());
    }

    // Zoom in around a point of the plot until the view spans fewer tokens than bins.
    const QRectF plot = view->plotRect();
    const QPointF at(plot.left() + 0.6 * plot.width(), plot.top() + 0.7 * plot.height());
    QSignalSpy ready(view, &PooledHeatmapView::visibleTileReady);
    for (int i = 0; i < 12 && (view->visibleBlock().rows() > view->visibleBlock().bins ||
                               view->visibleBlock().keys() > view->visibleBlock().bins);
         ++i)
        wheel(view, at, 1);
    const PooledBlock block = view->visibleBlock();
    QVERIFY2(block.rows() <= block.bins && block.keys() <= block.bins, "the wheel did not zoom in");
    QVERIFY(block.q0 > 0 && block.k0 > 0);
    const PooledTilePtr exact = test::waitForVisibleTile(view, 60000);
    QVERIFY(exact);
    QVERIFY(exact->block == block);
    QVERIFY(ready.count() >= 1);
    MatrixD meanExpected = MatrixD::Zero(block.rows(), block.keys());
    for (int h = 0; h < 2; ++h) {
        const MatrixD expected = ref->weights[size_t(h)].block(block.q0, block.k0, block.rows(), block.keys());
        meanExpected += expected / 2.0;
        const std::string diff =
            test::compareMatrix("zoomed block", exact->heads[size_t(h)], expected, test::Tolerance::weights());
        QVERIFY2(diff.empty(), diff.c_str());
    }
    const std::string diff = test::compareMatrix("mean", exact->mean, meanExpected, test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());

    // Back under the threshold (an edit to fewer tokens is not possible here: raise it): the
    // next computation is a full one again and the tabs come back.
    w.setMemoryBudget(pooledPast(std::int64_t(1) << 40));
    QVERIFY(w.document()->setHeads(1));
    QVERIFY(!w.project()->isPooled());
    QVERIFY(w.views()->tabs()->isVisible());
    QVERIFY(w.computeController()->waitForIdle(60000));
    QVERIFY(w.currentResult());
    QCOMPARE(w.currentResult()->trace.heads(), 1);
    w.document()->undoStack()->setClean();
}

// A newer request stops the running computation: it reports Cancelled, and the newer one
// is computed.
void TestPooledView::supersededComputeIsCancelled()
{
    RandomProblemOptions o;
    o.tokens = 16384;
    o.modelDim = 64;
    o.heads = 4;
    o.causal = true;
    auto project = std::make_shared<const Project>(randomProject(o));
    auto source = std::make_shared<GatedTileSource>(project);
    const auto openOnExit = qScopeGuard([source] { source->open(); });
    PooledJobs jobs;
    jobs.setSource(source);
    QSignalSpy cancelled(&jobs, &PooledJobs::cancelled);
    QSignalSpy ready(&jobs, &PooledJobs::tileReady);
    const quint64 first = jobs.request(PooledBlock{0, 16384, 0, 16384, 512});
    QVERIFY(jobs.isBusy());
    // The worker has taken the first request and is held before it ends.
    QTRY_VERIFY_WITH_TIMEOUT(source->isHolding(), 20000);
    QVERIFY(jobs.isBusy());
    const quint64 second = jobs.request(PooledBlock{8000, 8040, 7990, 8040, 512});
    // The newer request told the running computation to stop; nothing is reported while it is held.
    QVERIFY(source->heldIsCancelled());
    QCOMPARE(cancelled.count(), 0);
    source->open();
    QVERIFY(cancelled.wait(20000));
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(cancelled.at(0).at(0).value<quint64>(), first);
    QVERIFY(ready.count() > 0 || ready.wait(20000));
    QCOMPARE(ready.count(), 1);
    QCOMPARE(ready.at(0).at(1).value<quint64>(), second);
    const auto tile = ready.at(0).at(0).value<PooledTilePtr>();
    QCOMPARE(tile->heads.front().rows(), Eigen::Index(40));
    QCOMPARE(tile->heads.front().cols(), Eigen::Index(50));
}

// What cannot even be pooled is refused, naming what it needs and what the machine allows;
// the pooled view computes nothing.
void TestPooledView::tooLargeEvenPooledIsRefusedWithTheBytes()
{
    const QString dir = m_dir.filePath(QStringLiteral("t2000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 2000, 32, 2);
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(1) << 20));
    w.resize(1200, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    QVERIFY(w.project()->pooledView()->jobs()->source());
    const ProblemSize size = problemSize(w.document()->problem());
    // Room for the project's copies, not for the pooled computation.
    const std::int64_t budget = projectBytes(size) * 5 + (std::int64_t(64) << 10);
    QVERIFY(editBytes(size, w.memoryBudget()) > budget);
    MemoryBudget tight = w.memoryBudget();
    tight.fixedBytes = budget;
    w.setMemoryBudget(tight);
    QVERIFY(w.document()->setMaskFill(MaskFill::NegLarge)); // an edit that keeps the size
    w.setMemoryBudget(pooledPast(std::int64_t(1) << 20));
    QVERIFY(w.project()->isPooled());
    QVERIFY(!w.project()->pooledView()->jobs()->source()); // nothing is computed
    const QString notice = w.project()->pooledNotice()->text();
    QVERIFY2(notice.contains(QStringLiteral("even pooled")) && notice.contains(QStringLiteral("MiB")) &&
                 notice.contains(QStringLiteral("allows")),
             qPrintable(notice));
    QCOMPARE(w.lastError(), notice);
    w.document()->undoStack()->setClean();
}

// The view's own wiring: a wheel zoom while the whole problem is computed cancels that
// computation (the GUI goes on at once) and computes the zoomed block instead.
void TestPooledView::zoomDuringComputeCancelsIt()
{
    RandomProblemOptions o;
    o.tokens = 16384;
    o.modelDim = 64;
    o.heads = 4;
    o.causal = true;
    auto project = std::make_shared<const Project>(randomProject(o));
    auto source = std::make_shared<GatedTileSource>(project);
    const auto openOnExit = qScopeGuard([source] { source->open(); });
    PooledHeatmapView view;
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy cancelled(view.jobs(), &PooledJobs::cancelled);
    view.setSource(source);
    // The whole problem is being computed: the worker holds it at the gate.
    QTRY_VERIFY_WITH_TIMEOUT(view.jobs()->isBusy() && source->isHolding(), 20000);
    const quint64 whole = view.jobs()->runningId();
    const QRectF plot = view.plotRect();
    wheel(&view, plot.center(), 20);
    QVERIFY(source->isHolding()); // the wheel returned with the worker still held: it did not wait for it
    QVERIFY(view.visibleBlock().rows() < 16384 / 10); // and the view zoomed at once
    // Once the gesture rests, the zoomed block is asked for, which tells the held whole to stop.
    QTRY_VERIFY_WITH_TIMEOUT(source->heldIsCancelled(), 20000);
    QCOMPARE(cancelled.count(), 0);
    source->open();
    QVERIFY(cancelled.wait(20000));
    QCOMPARE(cancelled.at(0).at(0).value<quint64>(), whole);
    const PooledTilePtr tile = test::waitForVisibleTile(&view, 60000);
    QVERIFY(tile);
    QVERIFY(tile->block.rows() < 16384 / 10);
}

// The screenshots: a 16384-token project (d = 64, H = 4, causal) whole, then a block
// zoomed in far enough for token labels. Default threshold: it is pooled on its own.
void TestPooledView::screenshots16k()
{
    const QString dir = m_dir.filePath(QStringLiteral("t16k"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 16384, 64, 4);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.resize(1400, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    QVERIFY2(w.project()->pooledNotice()->text().contains(QStringLiteral("GiB")),
             qPrintable(w.project()->pooledNotice()->text()));
    PooledHeatmapView *view = w.project()->pooledView();
    // The whole problem takes seconds: the progress bar shows while it runs.
    QTRY_VERIFY_WITH_TIMEOUT(view->progressBar()->isVisible() || view->visibleTile(), 30000);
    qInfo("progress bar shown: %s", view->progressBar()->isVisible() ? "yes" : "no (computed first)");
    QVERIFY(test::waitForVisibleTile(view, 300000));
    // On the toolbar's log scale: a 16k causal row spreads its weight thin, which a linear 0..1
    // scale shows as one dark colour.
    auto *scaleBox = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(scaleBox);
    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Log)));
    QCOMPARE(view->colorScaleKind(), ColorScaleKind::Log);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/pooled-16k.png")));

    // Into a block on the diagonal, a third of the way down: about 30 tokens across.
    const QRectF plot = view->plotRect();
    wheel(view, QPointF(plot.left() + 0.35 * plot.width(), plot.top() + 0.35 * plot.height()), 28);
    const PooledBlock block = view->visibleBlock();
    QVERIFY2(block.rows() < 80, qPrintable(QString::number(block.rows())));
    QVERIFY(plot.width() / view->viewRect().width() >= PooledHeatmapView::kLabelPixels);
    QVERIFY(plot.height() / view->viewRect().height() >= PooledHeatmapView::kLabelPixels);
    const PooledTilePtr tile = test::waitForVisibleTile(view, 60000);
    QVERIFY(tile);
    QVERIFY(tile->block == block);
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/pooled-16k-zoom.png")));
}

// "Mean over heads" is the max-pooled mean of the heads' weights (not the mean of each head's
// max-pooled cells, which is larger wherever the heads peak at different keys), and the view
// says what a cell is.
void TestPooledView::meanOverHeadsPoolsTheHeadAverage()
{
    RandomProblemOptions o;
    o.tokens = 3000;
    o.modelDim = 32;
    o.heads = 2;
    o.causal = true;
    auto project = std::make_shared<const Project>(randomProject(o));
    PooledHeatmapView view;
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setSource(std::make_shared<const ProjectTiles>(project, std::make_shared<BackendHost>()));
    QCOMPARE(view.head(), -1); // several heads: the mean first
    const PooledTilePtr tile = test::waitForVisibleTile(&view, 60000);
    QVERIFY(tile);
    QVERIFY(tile->block.bins < 3000); // pooled, several tokens a cell
    auto ref = referenceAttention(project->problem);
    QVERIFY(ref.ok());
    const MatrixD average = (ref->weights[0] + ref->weights[1]) / 2.0;
    const MatrixD expected = poolWeights(average, tile->block.bins, PoolMode::Max);
    const std::string diff = test::compareMatrix("mean over heads", tile->mean, expected, test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());
    auto *caption = view.caption();
    QVERIFY(caption && caption->objectName() == QStringLiteral("pooledCaption"));
    QVERIFY2(caption->text().contains(QStringLiteral("maximum")) &&
                 caption->text().contains(QStringLiteral("averaged over heads")),
             qPrintable(caption->text()));
    view.setHead(1);
    QVERIFY2(caption->text().contains(QStringLiteral("head 1")), qPrintable(caption->text()));
}

// Hover names the query and key ranges of the cell under the cursor and its value: ranges of
// tokens while pooled, the tokens themselves at one token a cell. A screenshot of the window with
// the hover text over it is kept (pooled-3000-hover.png).
void TestPooledView::hoverNamesRangesAndValue()
{
    const QString dir = m_dir.filePath(QStringLiteral("hover3000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 3000, 32, 2);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(4) << 20));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    PooledHeatmapView *view = w.project()->pooledView();
    QCOMPARE(view->head(), -1);
    const PooledTilePtr whole = test::waitForVisibleTile(view, 60000);
    QVERIFY(whole);
    const std::int64_t bins = whole->mean.rows();
    QVERIFY(bins < 3000);

    // Pooled: the tokens under the pixel lie in bins a, c of the whole tile.
    const QPoint pixel = pointOf(view, 1200.6, 2100.3).toPoint();
    QTest::mouseMove(view, pixel);
    const QString pooled = view->lastHoverText();
    const QRectF plot = view->plotRect();
    const auto query = std::int64_t(std::floor((pixel.y() - plot.top()) / plot.height() * 3000.0));
    const auto key = std::int64_t(std::floor((pixel.x() - plot.left()) / plot.width() * 3000.0));
    const std::int64_t a = binContaining(query, 3000, bins), c = binContaining(key, 3000, bins);
    QVERIFY(a >= 0 && c >= 0);
    const std::int64_t qa = a * 3000 / bins, qb = (a + 1) * 3000 / bins, ka = c * 3000 / bins,
                       kb = (c + 1) * 3000 / bins;
    QVERIFY2(pooled.contains(QStringLiteral("Queries %1–%2 (%3 tokens)").arg(qa).arg(qb - 1).arg(qb - qa)),
             qPrintable(pooled));
    QVERIFY2(pooled.contains(QStringLiteral("Keys %1–%2 (%3 tokens)").arg(ka).arg(kb - 1).arg(kb - ka)),
             qPrintable(pooled));
    QVERIFY2(pooled.contains(QStringLiteral("Largest weight averaged over heads in this block: %1")
                                 .arg(QString::number(double(whole->mean(a, c)), 'g', 4))),
             qPrintable(pooled));
    QCOMPARE(QToolTip::text(), pooled);

    // One token a cell: the tokens' labels and the exact weight of head 1 (heads count from 0, as
    // everywhere in the program).
    view->setHead(1);
    auto *headBox = view->findChild<QComboBox *>();
    QVERIFY(headBox);
    QCOMPARE(headBox->currentText(), QStringLiteral("Head 1"));
    view->setViewRect(QRectF(1490, 1500, 20, 20));
    const PooledTilePtr exact = test::waitForVisibleTile(view, 60000);
    QVERIFY(exact);
    QCOMPARE(exact->heads[1].rows(), Eigen::Index(20));
    QTest::mouseMove(view, pointOf(view, 1497.5, 1505.5).toPoint());
    const QString one = view->lastHoverText();
    const auto &tokens = w.document()->project().queryTokens;
    QVERIFY2(one.contains(QStringLiteral("Query 1505: “%1”").arg(QString::fromStdString(tokens[1505]))),
             qPrintable(one));
    QVERIFY2(one.contains(QStringLiteral("Key 1497: “%1”").arg(QString::fromStdString(tokens[1497]))), qPrintable(one));
    QVERIFY2(one.contains(QStringLiteral("Weight of head 1: %1")
                              .arg(QString::number(double(exact->heads[1](1505 - 1500, 1497 - 1490)), 'g', 4))),
             qPrintable(one));
    QCOMPARE(QToolTip::text(), one);

    // The screenshot: the window with the tooltip painted where it shows.
    QImage shot = w.grab().toImage();
    for (QWidget *top : QApplication::topLevelWidgets())
        if (top->inherits("QTipLabel") && top->isVisible()) {
            QPainter painter(&shot);
            painter.drawPixmap(w.mapFromGlobal(top->pos()), top->grab());
        }
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/pooled-3000-hover.png")));

    // Outside the map: no text.
    QTest::mouseMove(view, QPoint(4, view->height() - 4));
    QVERIFY(view->lastHoverText().isEmpty());
    w.document()->undoStack()->setClean();
}

// The toolbar's colour scale colours the pooled view (checked on painted pixels of an exact
// block), and asking for scores, which the pooled path does not compute, shows a notice while
// the map keeps showing weights.
void TestPooledView::longProjectOpensOnLogScale()
{
    // On a linear 0..1 scale a long causal head is one dark colour (its weights are ~1/T):
    // a project shown pooled switches a linear toolbar scale to log, and gives linear back
    // when a short project replaces it. A scale the user chose is left alone.
    const QString dir = m_dir.filePath(QStringLiteral("log3000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 3000, 32, 2);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(4) << 20));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto *scaleBox = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(scaleBox);
    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Linear)));
    const QString tutorial = QStringLiteral(":/examples/self-attention-tutorial.attnscope.json");

    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    QCOMPARE(ColorScaleKind(scaleBox->currentData().toInt()), ColorScaleKind::Log);
    QCOMPARE(w.project()->pooledView()->colorScaleKind(), ColorScaleKind::Log);
    QVERIFY(w.openExample(tutorial));
    QVERIFY(!w.project()->isPooled());
    QCOMPARE(ColorScaleKind(scaleBox->currentData().toInt()), ColorScaleKind::Linear);

    // Chosen by the user: percentile stays through a long project and back.
    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Percentile)));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    QCOMPARE(ColorScaleKind(scaleBox->currentData().toInt()), ColorScaleKind::Percentile);
    QVERIFY(w.openExample(tutorial));
    QCOMPARE(ColorScaleKind(scaleBox->currentData().toInt()), ColorScaleKind::Percentile);

    // Linear chosen again while the long project is shown: followed.
    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Linear)));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QCOMPARE(ColorScaleKind(scaleBox->currentData().toInt()), ColorScaleKind::Log);
    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Linear)));
    QCOMPARE(w.project()->pooledView()->colorScaleKind(), ColorScaleKind::Linear);
    QVERIFY(w.openExample(tutorial));
    QCOMPARE(ColorScaleKind(scaleBox->currentData().toInt()), ColorScaleKind::Linear);
    w.document()->undoStack()->setClean();
}

void TestPooledView::exportFigureDrawsThePooledView()
{
    // Export Figure and Copy Figure on a long project draw the pooled view's visible block.
    // (They drew the window's last full result: the start-up example's figure.) Export Data
    // writes full tensors: it says why it has none and what writes pooled ones.
    const QString dir = m_dir.filePath(QStringLiteral("export3000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 3000, 32, 2);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(4) << 20));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json")));
    QVERIFY(w.computeController()->waitForIdle(30000));
    QVERIFY(w.currentResult()); // the example's full result stays in the window
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    PooledHeatmapView *view = w.project()->pooledView();
    view->setHead(1);
    const PooledTilePtr whole = test::waitForVisibleTile(view, 60000);
    QVERIFY(whole);

    ExportFigureDialog *dialog = w.figures()->showFigureDialog();
    QVERIFY2(dialog, qPrintable(w.lastError()));
    QVERIFY(dialog->hasFigure());
    const FigureOptions options = dialog->options();
    QCOMPARE(options.view, FigureView::Head);
    QCOMPARE(options.head, 1);
    // The head is the view's, named in the title: not changed in the dialog.
    auto *headSpin = dialog->findChild<QSpinBox *>(QStringLiteral("head"));
    QVERIFY(headSpin && !headSpin->isEnabled());
    const auto figure = dialog->exporter().figure(options);
    QVERIFY2(figure->title().contains(QStringLiteral("2999")), qPrintable(figure->title()));
    QVERIFY2(figure->title().contains(QStringLiteral("head 1")), qPrintable(figure->title()));
    // The figure's values are the tile's: the same set the dialog draws from.
    const PooledHeatmapView::PooledFigure source = view->pooledFigure(QStringLiteral("long"));
    QCOMPARE(source.set.heads(), 2);
    QCOMPARE(source.set.queries(), whole->heads[1].rows());
    QVERIFY(source.set.map(0, 0, 1) == whole->heads[1]);
    QCOMPARE(source.set.queryTokens.size(), size_t(whole->heads[1].rows()));
    // A bin of about six tokens is labelled by its range.
    QVERIFY2(QString::fromStdString(source.set.queryTokens[1]).contains(QChar(0x2013)),
             source.set.queryTokens[1].c_str());
    // Cells without a weight (above the causal diagonal) are drawn masked, as the view greys them.
    QVERIFY(source.allowed);
    const Eigen::Index last = source.set.keys() - 1;
    QCOMPARE(int((*source.allowed)(0, last)), 0);
    QCOMPARE(int((*source.allowed)(last, 0)), 1);
    QVERIFY(figure->problem().isEmpty());
    const auto heatmaps = figure->heatmaps(QRectF(0, 0, 600, 600));
    QCOMPARE(int(heatmaps.size()), 1);
    QVERIFY(!heatmaps[0].data->isAllowed(0, last) && heatmaps[0].data->isAllowed(last, 0));
    dialog->setPath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/pooled-export.png"));
    QVERIFY2(dialog->exportFigure(), qPrintable(dialog->lastError()));
    QImage png(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/pooled-export.png"));
    QVERIFY(!png.isNull());
    QVERIFY(dialog->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/pooled-export-dialog.png")));
    dialog->close();
    QVERIFY(w.figures()->copyFigure());

    // Zoomed to an exact block: token labels, and the figure follows the view.
    view->setViewRect(QRectF(1000, 1500, 16, 16));
    const PooledTilePtr exact = test::waitForVisibleTile(view, 60000);
    QVERIFY(exact);
    // Every row and column in view is labelled, the first one too when its edge is just off
    // the top (the wheel leaves the view at fractions of a token).
    view->setViewRect(QRectF(1000.25, 1500.25, 16, 16));
    QCOMPARE(view->queryLabelTokens().front(), std::int64_t(1500));
    QCOMPARE(view->keyLabelTokens().front(), std::int64_t(1000));
    QCOMPARE(view->queryLabelTokens().back(), std::int64_t(1515)); // 1516's middle is below the view
    QCOMPARE(int(view->queryLabelTokens().size()), 16);
    view->setViewRect(QRectF(1000, 1500, 16, 16));
    QCOMPARE(view->queryLabelTokens().front(), std::int64_t(1500));
    QCOMPARE(int(view->queryLabelTokens().size()), 16);
    // The line above the map names the first and last token shown, as the labels and hover do.
    auto *info = view->findChild<QLabel *>(QStringLiteral("pooledInfo"));
    QVERIFY(info);
    QVERIFY2(info->text().startsWith(QStringLiteral("Queries 1500\u20131515 \u00d7 keys 1000\u20131015")),
             qPrintable(info->text()));
    const PooledHeatmapView::PooledFigure zoomed = view->pooledFigure(QStringLiteral("long"));
    QCOMPARE(zoomed.set.queries(), std::int64_t(16));
    QCOMPARE(QString::fromStdString(zoomed.set.keyTokens[0]),
             QString::fromStdString(w.document()->project().keyLabels()[1000]));
    QVERIFY(zoomed.set.map(0, 0, 1) == exact->heads[1]);

    // The mean over heads: drawn as the mean, from the pooled mean (not a mean of maxima).
    view->setHead(-1);
    const PooledHeatmapView::PooledFigure mean = view->pooledFigure(QStringLiteral("long"));
    QCOMPARE(mean.set.heads(), 1);
    QCOMPARE(mean.view, FigureView::Mean);
    QVERIFY(mean.set.map(0, 0, 0) == exact->mean);

    QVERIFY(!w.figures()->showDataDialog());
    QVERIFY2(w.lastError().contains(QStringLiteral("--pool")), qPrintable(w.lastError()));
    w.document()->undoStack()->setClean();
}

void TestPooledView::keyboardZoomsPansAndResets()
{
    // Without a wheel: + and - zoom around the middle, the arrow keys pan by a quarter of the
    // view, Home (or a double-click) shows the whole problem again.
    const QString dir = m_dir.filePath(QStringLiteral("keys3000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 3000, 32, 2);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(4) << 20));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    PooledHeatmapView *view = w.project()->pooledView();
    const QRectF whole(0, 0, 3000, 3000);
    QCOMPARE(view->viewRect(), whole);
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Plus);
    const QRectF in = view->viewRect();
    QVERIFY2(in.width() < 3000 && in.height() < 3000, "+ did not zoom in");
    QCOMPARE(in.center(), whole.center());
    QTest::keyClick(view, Qt::Key_Right);
    QCOMPARE(view->viewRect().left(), in.left() + in.width() / 4);
    QTest::keyClick(view, Qt::Key_Down);
    QCOMPARE(view->viewRect().top(), in.top() + in.height() / 4);
    QTest::keyClick(view, Qt::Key_Minus);
    QVERIFY(view->viewRect().width() > in.width());
    QTest::keyClick(view, Qt::Key_Home);
    QCOMPARE(view->viewRect(), whole);
    QTest::keyClick(view, Qt::Key_Plus);
    QTest::keyClick(view, Qt::Key_Plus);
    QVERIFY(view->viewRect().width() < 3000);
    QTest::mouseDClick(view, Qt::LeftButton, {}, view->plotRect().center().toPoint());
    QCOMPARE(view->viewRect(), whole);
    w.document()->undoStack()->setClean();
}

void TestPooledView::toolbarColorScaleAndQuantityApply()
{
    const QString dir = m_dir.filePath(QStringLiteral("scale3000"));
    QVERIFY(QDir().mkpath(dir));
    const QString path = writeLongProject(dir, 3000, 32, 2);
    QVERIFY(!path.isEmpty());
    MainWindow w;
    w.setMemoryBudget(pooledPast(std::int64_t(4) << 20));
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(w.openFile(path), qPrintable(w.lastError()));
    QVERIFY(w.project()->isPooled());
    PooledHeatmapView *view = w.project()->pooledView();
    view->setHead(0);
    const PooledTilePtr whole = test::waitForVisibleTile(view, 60000);
    QVERIFY(whole);
    auto *scaleBox = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(scaleBox);
    QComboBox *quantityBox = nullptr, *mapBox = nullptr;
    for (QComboBox *box : w.findChildren<QComboBox *>()) {
        if (box->findData(int(HeatmapQuantity::Scores)) >= 0 &&
            box->itemText(box->findData(int(HeatmapQuantity::Scores))).contains(QStringLiteral("Scores")))
            quantityBox = box;
        if (box->findText(ColorMap::displayName(ColorMapKind::Viridis)) >= 0)
            mapBox = box;
    }
    QVERIFY(quantityBox && mapBox);
    const ColorMap map(ColorMapKind(mapBox->currentData().toInt()));

    // An exact block below the diagonal (every key allowed), cells many pixels wide.
    view->setViewRect(QRectF(1000, 1500, 16, 16));
    const PooledTilePtr exact = test::waitForVisibleTile(view, 60000);
    QVERIFY(exact);
    QCOMPARE(exact->heads[0].rows(), Eigen::Index(16));
    // Its largest weight: well inside the log scale's range, where linear and log colours differ.
    Eigen::Index r = 0, c = 0;
    for (Eigen::Index i = 0; i < 16; ++i)
        for (Eigen::Index j = 0; j < 16; ++j)
            if (exact->heads[0](i, j) > exact->heads[0](r, c))
                r = i, c = j;
    const double value = exact->heads[0](r, c);
    qInfo("cell (%lld, %lld): weight %g", qlonglong(r), qlonglong(c), value);
    QVERIFY(value > 0.0);
    const QPoint at = pointOf(view, double(1000 + c) + 0.5, double(1500 + r) + 0.5).toPoint();
    auto pixel = [&] { return view->grab().toImage().pixel(at) & 0xffffff; };

    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Linear)));
    QCOMPARE(view->colorScaleKind(), ColorScaleKind::Linear);
    const QRgb linear = pixel();
    QCOMPARE(linear, map.at(value) & 0xffffff); // weights 0..1

    scaleBox->setCurrentIndex(scaleBox->findData(int(ColorScaleKind::Log)));
    QCOMPARE(view->colorScaleKind(), ColorScaleKind::Log);
    // Log over [max(smallest positive value, 1e-4), 1] of the whole problem's tile.
    double smallest = 1.0;
    for (Eigen::Index i = 0; i < whole->heads[0].size(); ++i)
        if (whole->heads[0].data()[i] > 0.0f)
            smallest = std::min(smallest, double(whole->heads[0].data()[i]));
    const double lo = std::max(smallest, 1e-4);
    const double position = std::clamp((std::log10(value) - std::log10(lo)) / -std::log10(lo), 0.0, 1.0);
    const QRgb logColor = pixel();
    QCOMPARE(logColor, map.at(position) & 0xffffff);
    QVERIFY(logColor != linear);

    QVERIFY(!view->quantityNotice()->isVisible());
    quantityBox->setCurrentIndex(quantityBox->findData(int(HeatmapQuantity::Scores)));
    QVERIFY(view->quantityNotice()->isVisible());
    QVERIFY2(view->quantityNotice()->text().contains(QStringLiteral("Only attention weights are pooled")),
             qPrintable(view->quantityNotice()->text()));
    QCOMPARE(pixel(), logColor); // still the weights
    quantityBox->setCurrentIndex(quantityBox->findData(int(HeatmapQuantity::Weights)));
    QVERIFY(!view->quantityNotice()->isVisible());
    w.document()->undoStack()->setClean();
}

QTEST_MAIN(TestPooledView)
#include "tst_pooledview.moc"
