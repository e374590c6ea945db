// Long attention files (issue 11) in the real main window: a float16 .npy of [1, 2, 4096, 4096]
// (64 MiB, written here row by row, never whole) opens mapped; the model view's thumbnails are
// the max-pooled maps; a head opens pooled at screen resolution and a zoomed block holds the
// file's values exactly; rollout is refused with a message naming what it would need; and no
// allocation anywhere near one map's float copy (T·T·4 bytes) happens on the way. Expected
// values come from the pattern's formula below, never from the code under test.

#include "app/gui/document/AttentionJobs.h"
#include "app/gui/document/LongAttention.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"
#include "app/gui/views/TeachingView.h"
#include "app/gui/views/WindowStatus.h"

#include "../common/WindowTestUtil.h"

#include <QApplication>

#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <Eigen/Core>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

// The largest single allocation while counting: every malloc-family call of the process
// (operator new, Eigen, QImage) goes through these; under AddressSanitizer its own hook sees
// them instead.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_largest{0};
void noteAllocation(std::size_t bytes)
{
    if (!g_counting.load(std::memory_order_relaxed))
        return;
    std::size_t seen = g_largest.load(std::memory_order_relaxed);
    while (bytes > seen && !g_largest.compare_exchange_weak(seen, bytes, std::memory_order_relaxed)) {
    }
}
} // namespace

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Under a sanitizer, whose runtime owns malloc, through its hooks. Declared here: Debian's GCC
// ships the sanitizer runtime without its interface headers.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, std::size_t),
                                                         void (*free_hook)(const volatile void *));
namespace {
void mallocHook(const volatile void *, std::size_t size)
{
    noteAllocation(size);
}
void freeHook(const volatile void *) {}
const int g_hooks = __sanitizer_install_malloc_and_free_hooks(mallocHook, freeHook);
} // namespace
#else
extern "C" {
void *__libc_malloc(std::size_t);
void *__libc_calloc(std::size_t, std::size_t);
void *__libc_realloc(void *, std::size_t);
void *__libc_memalign(std::size_t, std::size_t);

void *malloc(std::size_t size)
{
    noteAllocation(size);
    return __libc_malloc(size);
}
void *calloc(std::size_t count, std::size_t size)
{
    noteAllocation(count * size);
    return __libc_calloc(count, size);
}
void *realloc(void *p, std::size_t size)
{
    noteAllocation(size);
    return __libc_realloc(p, size);
}
void *memalign(std::size_t alignment, std::size_t size)
{
    noteAllocation(size);
    return __libc_memalign(alignment, size);
}
void *aligned_alloc(std::size_t alignment, std::size_t size)
{
    noteAllocation(size);
    return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, std::size_t alignment, std::size_t size)
{
    noteAllocation(size);
    void *p = __libc_memalign(alignment, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
}
#endif

using namespace attnscope;

namespace {

constexpr int kTokens = 4096;
constexpr int kHeads = 2;
constexpr int kWindow = 8;

// The pattern: head 0 gives half of every row to token 0 (an attention sink) and spreads the
// other half over a causal window of the last kWindow tokens (token 0 excluded); head 1
// attends to the previous token only. Row 0 attends to itself.
float pattern(int head, int i, int j)
{
    if (i == 0)
        return j == 0 ? 1.0f : 0.0f;
    if (head == 1)
        return j == i - 1 ? 1.0f : 0.0f;
    if (j == 0)
        return 0.5f;
    const int first = std::max(1, i - kWindow + 1);
    return j >= first && j <= i ? 0.5f / float(i - first + 1) : 0.0f;
}

// What the file holds: the pattern rounded to float16.
float stored(int head, int i, int j)
{
    return float(Eigen::half(pattern(head, i, j)));
}

// A float16 .npy [1, H, T, T], written one row at a time.
bool writeLongFile(const QString &path)
{
    std::string header = "{'descr': '<f2', 'fortran_order': False, 'shape': (1, " + std::to_string(kHeads) + ", " +
                         std::to_string(kTokens) + ", " + std::to_string(kTokens) + "), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    f.write("\x93NUMPY\x01\x00", 8);
    const char length[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
    f.write(length, 2);
    f.write(header.data(), qint64(header.size()));
    std::vector<Eigen::half> row(kTokens);
    for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < kTokens; ++i) {
            for (int j = 0; j < kTokens; ++j)
                row[std::size_t(j)] = Eigen::half(pattern(h, i, j));
            f.write(reinterpret_cast<const char *>(row.data()), qint64(row.size() * sizeof(Eigen::half)));
        }
    return f.error() == QFileDevice::NoError;
}

// One map's float copy: what the long path must never allocate.
constexpr std::size_t kMapFloatBytes = std::size_t(kTokens) * kTokens * sizeof(float);

// Max over the cells of one pooled block of the stored pattern (bins split as core's binStart).
float blockMax(int head, std::int64_t a, std::int64_t b, std::int64_t bins)
{
    float m = 0.0f;
    for (std::int64_t i = a * kTokens / bins; i < (a + 1) * kTokens / bins; ++i)
        for (std::int64_t j = b * kTokens / bins; j < (b + 1) * kTokens / bins; ++j)
            m = std::max(m, stored(head, int(i), int(j)));
    return m;
}

// Waits until the pooled view shows the tile of the block it asks for.
} // namespace

class TestLongAttention : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void opensWithoutFullCopies();
    void thumbnailsAreMaxPooledMaps();
    void statisticsStreamFromTheFile();
    void headOpensPooledWholeMap();
    void zoomedBlockIsExact();
    void wheelZoomsIn();
    void rolloutRefusedNamingItsNeed();
    void thumbnailsPoolTheContractsBlocks();
    void meanOverHeadsIsTheMaxOfTheMean();
    void aProjectAfterwardsLeavesTheFilesState();
    void cleanupTestCase();

private:
    QTemporaryDir m_dir;
    QString m_path;
    std::unique_ptr<MainWindow> m_window;
};

void TestLongAttention::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    m_path = m_dir.filePath(QStringLiteral("long.npy"));
    QVERIFY(writeLongFile(m_path));
    QCOMPARE(QFile(m_path).size(), qint64(128 + std::int64_t(kHeads) * kTokens * kTokens * 2));
}

void TestLongAttention::cleanupTestCase()
{
    m_window.reset();
}

// Before: opening made the layer's trace (one float copy per head, 64 MiB each here) and the
// rollout's T x T doubles (128 MiB each).
void TestLongAttention::opensWithoutFullCopies()
{
    m_window = std::make_unique<MainWindow>();
    MainWindow &w = *m_window;
    // CI's file is 64 MiB: "long" here is past 16M cells a layer (the default is 64M, reached
    // by 8192-token files), and the budget (256 MiB) is below the rollout's 512 MiB.
    MemoryBudget budget;
    budget.fixedBytes = std::int64_t(256) << 20;
    budget.pooledCells = std::int64_t(16) << 20;
    w.setMemoryBudget(budget);
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    g_largest = 0;
    g_counting = true;
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QVERIFY(w.openFile(m_path));
    QVERIFY(opened.wait(30000));
    QVERIFY(w.setSource()->attention()->file && w.setSource()->attention()->file->mapped);
    QVERIFY(w.setSource()->isLong());
    QVERIFY(QTest::qWaitFor(
        [&] {
            return w.views()->modelView()->isFilled() && w.views()->statsTable()->isFilled() &&
                   w.views()->rolloutView()->isFilled();
        },
        60000));
    QVERIFY(w.attentionController()->waitForIdle(120000));
    QVERIFY(test::waitForVisibleTile(w.views()->filePooled()));
    // Every view painted what it holds, while the allocations are still counted.
    QVERIFY(test::waitForRepaint(&w));
    g_counting = false;
    QVERIFY2(g_largest.load() < kMapFloatBytes / 4,
             qPrintable(QStringLiteral("largest allocation %1 bytes; one map as floats is %2")
                            .arg(g_largest.load())
                            .arg(kMapFloatBytes)));
    // The tabs that would copy the layer in full are hidden; the pooled head is offered.
    QTabWidget *tabs = w.views()->tabs();
    QVERIFY(!tabs->isTabVisible(0));
    QVERIFY(tabs->isTabVisible(tabs->indexOf(w.views()->filePooled())));
    QVERIFY(!w.setSource()->mergeWordsAction()->isEnabled());
    w.views()->modelView()->viewport()->repaint();
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/long-attention-model.png")));
}

void TestLongAttention::thumbnailsAreMaxPooledMaps()
{
    QVERIFY(m_window);
    const auto thumbs = m_window->views()->modelView()->thumbnails();
    QVERIFY(thumbs);
    QCOMPARE(thumbs->layers, 1);
    QCOMPARE(thumbs->heads, kHeads);
    QCOMPARE(int(thumbs->pooled.size()), kHeads);
    const int bins = 128; // AttentionJobs::kThumbnailSize
    for (int h = 0; h < kHeads; ++h) {
        const MatrixF &p = thumbs->pooled[std::size_t(h)];
        QCOMPARE(int(p.rows()), bins);
        QCOMPARE(int(p.cols()), bins);
        for (int a = 0; a < bins; ++a)
            for (int b = 0; b < bins; ++b)
                if (p(a, b) != blockMax(h, a, b, bins))
                    QFAIL(qPrintable(QStringLiteral("head %1 cell (%2, %3): %4, expected %5")
                                         .arg(h)
                                         .arg(a)
                                         .arg(b)
                                         .arg(p(a, b))
                                         .arg(blockMax(h, a, b, bins))));
        QCOMPARE(thumbs->images[std::size_t(h)].size(), QSize(bins, bins));
    }
    // The sink column and the diagonal show, the far past does not.
    QCOMPARE(thumbs->pooled[0](100, 0), 0.5f);
    QCOMPARE(thumbs->pooled[0](100, 50), 0.0f);
    QCOMPARE(thumbs->pooled[1](100, 99), 1.0f);
}

// The statistics as attnscope-cli defines them, of the pattern: head 1 attends to the previous
// token with weight 1; head 0 gives token 0 half of every row but the first (all of it).
void TestLongAttention::statisticsStreamFromTheFile()
{
    QVERIFY(m_window);
    HeadStatsModel *model = m_window->views()->statsTable()->statsModel();
    QCOMPARE(model->rowCount(), kHeads);
    const auto stats = model->statistics();
    QVERIFY(stats && stats->size() == std::size_t(kHeads));
    QCOMPARE((*stats)[1].previous.value(), 1.0);
    QVERIFY(std::abs((*stats)[1].distance - double(kTokens - 1) / kTokens) < 1e-12);
    QVERIFY(std::abs((*stats)[0].first - (1.0 + 0.5 * (kTokens - 1)) / kTokens) < 1e-12);
}

// Activating a head in the model view opens it pooled: the whole map at most 512 cells a side,
// each the max of its block.
void TestLongAttention::headOpensPooledWholeMap()
{
    QVERIFY(m_window);
    MainWindow &w = *m_window;
    const QRect tile = w.views()->modelView()->tileRect(0, 1);
    QTest::mouseClick(w.views()->modelView()->viewport(), Qt::LeftButton, {}, tile.center());
    PooledHeatmapView *view = w.views()->filePooled();
    QCOMPARE(w.views()->tabs()->currentWidget(), view);
    QCOMPARE(view->head(), 1);
    const PooledTilePtr whole = test::waitForVisibleTile(view);
    QVERIFY(whole);
    QCOMPARE(whole->block.q0, 0);
    QCOMPARE(whole->block.q1, kTokens);
    const std::int64_t bins = whole->heads[0].rows();
    QVERIFY(bins >= 16 && bins <= 512);
    for (int h = 0; h < kHeads; ++h)
        for (std::int64_t a = 0; a < bins; a += 7)
            for (std::int64_t b = 0; b < bins; b += 5)
                QCOMPARE(whole->heads[std::size_t(h)](a, b), blockMax(h, a, b, bins));
}

// A block of 40 x 40 tokens is shown one cell per token: the file's values, exactly.
void TestLongAttention::zoomedBlockIsExact()
{
    QVERIFY(m_window);
    PooledHeatmapView *view = m_window->views()->filePooled();
    g_largest = 0;
    g_counting = true;
    view->setViewRect(QRectF(990, 1000, 40, 40));
    const PooledTilePtr tile = test::waitForVisibleTile(view);
    g_counting = false;
    QVERIFY(tile);
    QCOMPARE(tile->block.q0, 1000);
    QCOMPARE(tile->block.k0, 990);
    QCOMPARE(tile->heads[0].rows(), 40);
    QCOMPARE(tile->heads[0].cols(), 40);
    for (int a = 0; a < 40; ++a)
        for (int b = 0; b < 40; ++b) {
            for (int h = 0; h < kHeads; ++h)
                QCOMPARE(tile->heads[std::size_t(h)](a, b), stored(h, 1000 + a, 990 + b));
            QCOMPARE(tile->mean(a, b), (stored(0, 1000 + a, 990 + b) + stored(1, 1000 + a, 990 + b)) / 2.0f);
        }
    QVERIFY2(g_largest.load() < kMapFloatBytes / 16, qPrintable(QString::number(g_largest.load())));
    // The picture: the first 48 tokens, with the sink column and the window.
    view->setHead(0);
    view->setViewRect(QRectF(0, 0, 48, 48));
    QVERIFY(test::waitForVisibleTile(view));
    view->repaint();
    QVERIFY(view->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/long-attention-zoom.png")));

    // With the pooled tab in front, Export Figure draws this block of the file.
    ExportFigureDialog *dialog = m_window->figures()->showFigureDialog();
    QVERIFY2(dialog, qPrintable(m_window->lastError()));
    QCOMPARE(dialog->options().view, FigureView::Head);
    QCOMPARE(dialog->options().head, 0);
    const auto figure = dialog->exporter().figure(dialog->options());
    QVERIFY2(figure->title().contains(QStringLiteral("long.npy, layer 0: queries 0\u201347, keys 0\u201347")) &&
                 figure->title().endsWith(QStringLiteral("head 0")),
             qPrintable(figure->title()));
    const PooledHeatmapView::PooledFigure source = view->pooledFigure(QStringLiteral("file"));
    QCOMPARE(source.set.queries(), std::int64_t(48));
    for (int a = 0; a < 48; a += 5)
        for (int b = 0; b < 48; b += 3)
            QCOMPARE(source.set.at(0, 0, 0, a, b), stored(0, a, b));
    dialog->setPath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/long-attention-export.png"));
    QVERIFY2(dialog->exportFigure(), qPrintable(dialog->lastError()));
    dialog->close();
}

void TestLongAttention::wheelZoomsIn()
{
    QVERIFY(m_window);
    PooledHeatmapView *view = m_window->views()->filePooled();
    view->setViewRect(QRectF(0, 0, kTokens, kTokens));
    QVERIFY(test::waitForVisibleTile(view));
    const QPointF pos = view->plotRect().center();
    QWheelEvent event(pos, view->mapToGlobal(pos), QPoint(), QPoint(0, 120 * 5), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &event);
    QVERIFY(view->viewRect().width() < kTokens * 0.5);
    const PooledTilePtr tile = test::waitForVisibleTile(view);
    QVERIFY(tile);
    QVERIFY(tile->block.keys() < kTokens);
    const std::int64_t rows = tile->heads[0].rows(), cols = tile->heads[0].cols();
    // Every cell the max of its block of the zoomed range.
    for (std::int64_t a = 0; a < rows; a += 3)
        for (std::int64_t b = 0; b < cols; b += 3) {
            float m = 0.0f;
            const auto &bl = tile->block;
            for (std::int64_t i = bl.q0 + a * bl.rows() / rows; i < bl.q0 + (a + 1) * bl.rows() / rows; ++i)
                for (std::int64_t j = bl.k0 + b * bl.keys() / cols; j < bl.k0 + (b + 1) * bl.keys() / cols; ++j)
                    m = std::max(m, stored(0, int(i), int(j)));
            QCOMPARE(tile->heads[0](a, b), m);
        }
}

void TestLongAttention::rolloutRefusedNamingItsNeed()
{
    QVERIFY(m_window);
    const QString error = m_window->views()->rolloutView()->error();
    QVERIFY2(error.contains(QStringLiteral("512 MiB")) && error.contains(QString::number(kTokens)), qPrintable(error));
}

// The thumbnails split rows and keys into the blocks of design.md's pooled cells (cell a covers
// [floor(a*T/N), floor((a+1)*T/N))), like every other pooled view. Before, they put row i in
// cell floor(i*N/T): for T = 130 and N = 128, row 1 went to cell 0 while the contract's cell 0
// holds row 0 only.
void TestLongAttention::thumbnailsPoolTheContractsBlocks()
{
    constexpr int t = 130;
    std::vector<float> values(std::size_t(t) * t, 0.0f);
    values[std::size_t(1) * t + 1] = 1.0f; // row 1, key 1: cell (1, 1) of the contract
    auto set = AttentionSet::fromFloats(std::move(values), 1, 1, 1, t, t);
    QVERIFY(set);
    ShownAttention source;
    source.set = *set;
    const std::atomic<bool> cancel{false};
    const auto thumbs =
        AttentionJobs::thumbnails(source, ColorMapKind::Viridis, ScaleScope::Absolute, ColorScaleKind::Linear, cancel);
    QCOMPARE(int(thumbs.pooled.size()), 1);
    const MatrixF &p = thumbs.pooled[0];
    QCOMPARE(int(p.rows()), AttentionJobs::kThumbnailSize);
    QCOMPARE(p(1, 1), 1.0f);
    QCOMPARE(p(0, 0), 0.0f);
    QCOMPARE(p(0, 1), 0.0f);
    QCOMPARE(p(1, 0), 0.0f);
}

// The pooled "mean over heads" of an attention file is, as the caption and the README say, the
// maximum over each block of the head-averaged weights. Before, it was the mean of each head's
// block maxima: here 1.0 where no cell of the mean exceeds 0.5.
void TestLongAttention::meanOverHeadsIsTheMaxOfTheMean()
{
    constexpr int t = 4, heads = 2;
    std::vector<float> values(std::size_t(heads) * t * t, 0.0f);
    values[0 * t * t + 0 * t + 0] = 1.0f; // head 0: row 0, key 0
    values[1 * t * t + 1 * t + 1] = 1.0f; // head 1: row 1, key 1 (the same 2 x 2 block)
    values[1 * t * t + 3 * t + 2] = 0.25f;
    auto set = AttentionSet::fromFloats(std::move(values), 1, 1, heads, t, t);
    QVERIFY(set);
    const AttentionFileTiles tiles(*set, 0);
    PooledBlock block;
    block.q0 = 0;
    block.q1 = t;
    block.k0 = 0;
    block.k1 = t;
    block.bins = 2;
    auto tile = tiles.computeTile(block, nullptr, nullptr);
    QVERIFY(tile);
    const MatrixF &mean = (*tile)->mean;
    QCOMPARE(int(mean.rows()), 2);
    QCOMPARE(mean(0, 0), 0.5f);
    QCOMPARE(mean(1, 1), 0.125f);
    QCOMPARE(mean(0, 1), 0.0f);
    QCOMPARE((*tile)->heads[0](0, 0), 1.0f);
    QCOMPARE((*tile)->heads[1](0, 0), 1.0f);
    QCOMPARE((*tile)->heads[1](1, 1), 0.25f);
}

// The file's state goes with it: the status bar's "long attention file" notice, the pooled tab and
// the hidden full-copy tabs were left over a project opened next (the notice until the next failure).
void TestLongAttention::aProjectAfterwardsLeavesTheFilesState()
{
    MainWindow &w = *m_window;
    QVERIFY(w.setSource() && w.setSource()->isLong());
    QVERIFY2(w.status()->notice().contains(QStringLiteral("Long attention file")), qPrintable(w.status()->notice()));
    QVERIFY(w.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json")));
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult());
    QVERIFY(!w.setSource());
    QVERIFY2(w.status()->notice().isEmpty(), qPrintable(w.status()->notice()));
    QTabWidget *tabs = w.views()->tabs();
    QVERIFY(tabs->isTabVisible(0));
    QVERIFY(!tabs->isTabVisible(tabs->indexOf(w.views()->filePooled())));
    QVERIFY(tabs->isTabVisible(tabs->indexOf(w.views()->teaching())));
}

QTEST_MAIN(TestLongAttention)
#include "tst_longattention.moc"
