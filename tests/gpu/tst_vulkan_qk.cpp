// The pooled passes from queries and keys on Vulkan (VulkanBackend::computePooledQk: q and k
// uploaded into the buffers the projections would fill, then shaders/pooled_rows.comp and
// pooled_cells.comp) against the double-precision reference of core/attention/QkAttention.h:
// grouped heads, causal, window, soft-cap, sinks, positions (offset, with gaps, unsorted),
// Tq != Tk, max and mean, the head mean, zoomed blocks, many submissions, one long layer; the
// transfers counted, cancellation, refusals, and the FallbackBackend answering on the CPU when
// the device fails. The Khronos validation layer watches the whole suite.

#include "../common/TestUtil.h"
#include "../common/VulkanFaults.h"
#include "VulkanTestUtil.h"

#include "app/engine/BackendChoice.h"
#include "core/analysis/Pooling.h"
#include "core/attention/QkAttention.h"

#include <QObject>
#include <QTest>

#include <memory>
#include <numeric>
#include <random>

using namespace attnscope;

namespace {

// The long layer: causal with a window (the sliding layers of Gemma and Mistral; and lavapipe
// computes a full causal 8192 in about a minute), one key head for two query heads, hd 16.
constexpr std::int64_t kLongT = 8192, kLongWindow = 1024;

struct QkCase {
    std::int64_t tq = 13, tk = 13;
    int heads = 2, kvHeads = 2, headDim = 8;
    bool causal = false;
    std::int64_t window = 0;
    std::optional<double> softcap;
    bool sinks = false;
    std::vector<std::int64_t> queryPositions, keyPositions;
    std::int64_t bins = 4;
    PoolMode mode = PoolMode::Max;
    bool headMean = true;
    std::int64_t q0 = 0, q1 = -1, k0 = 0, k1 = -1; // the block (PoolOptions)
    std::uint64_t workPerSubmission = 0;           // 0: the default
    bool staging = false;                          // copy through staging buffers (a discrete GPU's way)
};

std::vector<std::int64_t> positionsFrom(std::int64_t first, std::int64_t count)
{
    std::vector<std::int64_t> v(static_cast<size_t>(count));
    std::iota(v.begin(), v.end(), first);
    return v;
}

// Random q and k (seeded by the shape, so each row of data differs), scaled so that the rows'
// weights range from near one-hot to near uniform.
QkLayer layerOf(const QkCase &c)
{
    QkLayer l;
    l.heads = c.heads;
    l.kvHeads = c.kvHeads;
    l.headDim = c.headDim;
    l.scale = 1.5 / std::sqrt(double(c.headDim));
    l.causal = c.causal;
    l.window = c.window;
    l.softcap = c.softcap;
    l.queryPositions = c.queryPositions;
    l.keyPositions = c.keyPositions;
    std::mt19937 rng(std::uint32_t(c.tq * 7919 + c.tk * 104729 + c.heads * 31 + c.kvHeads));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    l.q = MatrixF(c.tq, c.heads * c.headDim);
    l.k = MatrixF(c.tk, c.kvHeads * c.headDim);
    for (Eigen::Index i = 0; i < l.q.size(); ++i)
        l.q.data()[i] = normal(rng);
    for (Eigen::Index i = 0; i < l.k.size(); ++i)
        l.k.data()[i] = normal(rng);
    if (c.sinks) {
        l.sinks = VectorF(c.heads);
        for (int h = 0; h < c.heads; ++h)
            (*l.sinks)(h) = 0.5f * float(h) - 0.25f;
    }
    return l;
}

PoolOptions optionsOf(const QkCase &c)
{
    PoolOptions o;
    o.bins = c.bins;
    o.mode = c.mode;
    o.headMean = c.headMean;
    o.queryBegin = c.q0;
    o.queryEnd = c.q1;
    o.keyBegin = c.k0;
    o.keyEnd = c.k1;
    return o;
}

// Empty when `got` equals the reference pooled over the case's block: every head, the head
// mean, and the block rows' entropies where every key is pooled (else none); never an output.
std::string compareWithReference(const QkLayer &layer, const QkCase &c, const PooledResult &got)
{
    const bool whole = c.q0 == 0 && c.q1 < 0 && c.k0 == 0 && c.k1 < 0;
    const Eigen::Index q1 = c.q1 < 0 ? layer.tq() : c.q1, k1 = c.k1 < 0 ? layer.tk() : c.k1;
    const Eigen::Index rows = q1 - c.q0, keys = k1 - c.k0;
    PooledReference ref;
    if (whole) { // the reference as it stands, block-free
        ref = referencePooledQk(layer, optionsOf(c));
    } else {
        const std::vector<MatrixD> weights = referenceQkWeights(layer);
        MatrixD sum = MatrixD::Zero(rows, keys);
        for (const MatrixD &w : weights) {
            const MatrixD block = w.block(c.q0, c.k0, rows, keys);
            ref.pooled.push_back(poolWeights(block, c.bins, c.mode));
            sum += block;
        }
        ref.headMean = poolWeights(sum / double(layer.heads), c.bins, c.mode);
        PoolOptions all = optionsOf(c);
        all.queryBegin = all.keyBegin = 0;
        all.queryEnd = all.keyEnd = -1;
        ref.entropy = referencePooledQk(layer, all).entropy.middleCols(c.q0, rows);
    }
    if (got.pooled.size() != size_t(layer.heads))
        return "expected " + std::to_string(layer.heads) + " pooled heads, found " + std::to_string(got.pooled.size());
    for (int h = 0; h < layer.heads; ++h) {
        const std::string diff =
            test::compareMatrix("pooled", got.pooled[size_t(h)], ref.pooled[size_t(h)], test::Tolerance::weights());
        if (!diff.empty())
            return "head " + std::to_string(h) + ": " + diff;
    }
    if (c.headMean) {
        if (std::string d = test::compareMatrix("head mean", got.headMean, ref.headMean, test::Tolerance::weights());
            !d.empty())
            return d;
    } else if (got.headMean.size() != 0) {
        return "a head mean nobody asked for";
    }
    if (c.k0 == 0 && c.k1 < 0) {
        if (std::string d = test::compareMatrix("entropy", got.entropy, ref.entropy, test::Tolerance::values());
            !d.empty())
            return d;
    } else if (got.entropy.size() != 0) {
        return "entropies of a block that pools some keys only";
    }
    if (got.output.size() != 0)
        return "an output from queries and keys";
    return {};
}

// Empty when the device's cells, head mean and entropies equal the CPU engine's (float both).
std::string compareWithCpu(const QkLayer &layer, const PoolOptions &options, const PooledResult &got)
{
    auto cpu = computePooledQk(layer, options);
    if (!cpu)
        return "the CPU engine: " + cpu.message();
    for (int h = 0; h < layer.heads; ++h)
        if (std::string d = test::compareMatrix("pooled against the CPU", got.pooled[size_t(h)], cpu->pooled[size_t(h)],
                                                test::Tolerance::weights());
            !d.empty())
            return "head " + std::to_string(h) + ": " + d;
    if (std::string d =
            test::compareMatrix("head mean against the CPU", got.headMean, cpu->headMean, test::Tolerance::weights());
        !d.empty())
        return d;
    return test::compareMatrix("entropy against the CPU", got.entropy, cpu->entropy, test::Tolerance::values());
}

} // namespace

Q_DECLARE_METATYPE(QkCase)

class TestVulkanQk : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();

    void matchesReference_data();
    void matchesReference();
    void longLayerInManySubmissions();
    void transfersCountWhatMoves();
    void cancelledBeforeItsFirstSubmission();
    void tooLargeForTheDeviceIsRefusedWithWhy();
    void invalidRequestsAreRefused_data();
    void invalidRequestsAreRefused();
    void deviceFaultFallsBackToTheCpu_data();
    void deviceFaultFallsBackToTheCpu();

private:
    std::unique_ptr<VulkanBackend> makeBackend(VulkanBackendOptions options = {});

    std::unique_ptr<VulkanBackend> m_backend; // shared by the rows: shapes change under it
};

std::unique_ptr<VulkanBackend> TestVulkanQk::makeBackend(VulkanBackendOptions options)
{
    options.validation = true;
    auto backend = VulkanBackend::create(options);
    if (!backend) {
        qWarning("%s", backend.message().c_str());
        return nullptr;
    }
    return std::move(*backend);
}

void TestVulkanQk::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    vk::resetValidationReport();
    m_backend = makeBackend();
    QVERIFY2(m_backend, "a Vulkan device exists but the backend failed to start (see the warning above)");
    QVERIFY2(!m_backend->usesCpuForPooled(), "the device cannot bind the pooled passes' buffers");
}

void TestVulkanQk::cleanup()
{
    const std::string problems = test::validationProblems();
    vk::resetValidationReport();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkanQk::matchesReference_data()
{
    QTest::addColumn<QkCase>("c");
    auto both = [](const std::string &name, QkCase c) {
        c.mode = PoolMode::Max;
        QTest::newRow((name + ", max").c_str()) << c;
        c.mode = PoolMode::Mean;
        QTest::newRow((name + ", mean").c_str()) << c;
    };
    QkCase plain;
    both("heads of their own, no mask", plain);
    QkCase gqa = plain;
    gqa.heads = 4, gqa.kvHeads = 2, gqa.tq = gqa.tk = 17, gqa.causal = true, gqa.bins = 5;
    both("grouped heads, causal", gqa);
    QkCase mqa = gqa;
    mqa.heads = 3, mqa.kvHeads = 1, mqa.window = 4;
    both("one key head, causal window", mqa);
    QkCase capped = gqa;
    capped.softcap = 2.0, capped.sinks = true;
    both("soft-cap and sinks", capped);
    QkCase wide = plain;
    wide.tq = 9, wide.tk = 15, wide.bins = 4;
    both("Tq != Tk", wide);
    wide.causal = true, wide.window = 5;
    both("Tq != Tk, causal window", wide);
    QkCase single = plain;
    single.bins = 1, single.headMean = false;
    both("one cell, no head mean", single);
    QkCase cells = plain;
    cells.bins = 13; // a cell per weight: one thread per cell
    both("a cell per weight", cells);

    // Offset queries: the last 1000 positions of a 2000-key context, as a dump of a chunked prefill.
    QkCase offset;
    offset.tq = 1000, offset.tk = 2000, offset.heads = 2, offset.kvHeads = 1, offset.causal = true;
    offset.queryPositions = positionsFrom(1000, 1000);
    offset.bins = 16;
    both("queries at 1000..1999, keys 0..1999, causal", offset);
    offset.window = 300, offset.sinks = true;
    both("queries at 1000..1999, causal window, sinks", offset);

    QkCase gaps;
    gaps.tq = gaps.tk = 21, gaps.heads = 2, gaps.kvHeads = 1, gaps.causal = true, gaps.window = 9, gaps.bins = 5;
    for (std::int64_t i = 0; i < 21; ++i)
        gaps.queryPositions.push_back(3 * i + (i % 4 == 0 ? 1 : 0) + 100000);
    gaps.keyPositions = gaps.queryPositions;
    both("positions with gaps, causal window", gaps);
    QkCase unsorted = gaps;
    std::reverse(unsorted.keyPositions.begin(), unsorted.keyPositions.end());
    both("key positions in reverse", unsorted);
    QkCase none = gaps;
    none.queryPositions = positionsFrom(0, 21); // every key lies after every query: empty rows
    none.sinks = true;
    both("rows without keys, sinks", none);

    QkCase zoom = gqa;
    zoom.q0 = 3, zoom.q1 = 15, zoom.k0 = 2, zoom.k1 = 11, zoom.bins = 3;
    both("zoomed block", zoom);
    QkCase rowsOnly = zoom;
    rowsOnly.k0 = 0, rowsOnly.k1 = -1;
    both("rows of every key (entropies too)", rowsOnly);
    QkCase offsetZoom = offset;
    offsetZoom.q0 = 100, offsetZoom.q1 = 700, offsetZoom.k0 = 900, offsetZoom.k1 = 1500;
    both("zoomed block of offset queries", offsetZoom);

    QkCase chunked = capped;
    chunked.workPerSubmission = 1; // a row per submission
    both("a submission per row", chunked);
    QkCase chunkedGaps = gaps;
    chunkedGaps.workPerSubmission = 3 * 21 * 2 * 8 * 3; // three rows per submission
    chunkedGaps.q0 = 2, chunkedGaps.q1 = 20;
    both("positions with gaps, three rows per submission", chunkedGaps);
    QkCase staged = offsetZoom;
    staged.staging = true, staged.sinks = true;
    both("staged uploads and read-back", staged);
}

void TestVulkanQk::matchesReference()
{
    QFETCH(QkCase, c);
    const QkLayer layer = layerOf(c);
    const Status valid = validateQkLayer(layer);
    QVERIFY2(valid.ok(), valid.ok() ? "" : valid.message().c_str());
    VulkanBackendOptions vo;
    vo.pooledWorkPerSubmission = c.workPerSubmission;
    vo.forceStaging = c.staging;
    const bool ownBackend = c.workPerSubmission || c.staging;
    std::unique_ptr<VulkanBackend> own = ownBackend ? makeBackend(vo) : nullptr;
    QVERIFY(!ownBackend || own);
    VulkanBackend &backend = own ? *own : *m_backend;
    PoolOptions options = optionsOf(c);
    PoolProgress progress;
    options.progress = &progress;
    const std::uint64_t before = backend.stats().submissions;
    AttentionBackend &base = backend;
    auto got = base.computePooledQk(layer, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const std::uint64_t submissions = backend.stats().submissions - before;
    QVERIFY2(submissions > 0, "nothing was computed on the device");
    QCOMPARE(progress.done.load(), std::int64_t(submissions));
    QCOMPARE(progress.total.load(), std::int64_t(submissions));
    if (c.workPerSubmission == 1) {
        const std::int64_t q1 = c.q1 < 0 ? c.tq : c.q1;
        QCOMPARE(submissions, std::uint64_t(q1 - c.q0));
    } else if (c.workPerSubmission) {
        QVERIFY(submissions > 1);
    }
    QCOMPARE(backend.stats().staging, c.staging);
    const std::string diff = compareWithReference(layer, c, *got);
    QVERIFY2(diff.empty(), diff.c_str());
    const std::string cpu = compareWithCpu(layer, optionsOf(c), *got);
    QVERIFY2(cpu.empty(), cpu.c_str());
}

// A long layer: 32-bit indexing over T² pairs, the default chunking (several submissions), and
// every key of a causal row with grouped heads.
void TestVulkanQk::longLayerInManySubmissions()
{
    QkCase c;
    c.tq = c.tk = kLongT;
    c.heads = 2, c.kvHeads = 1, c.headDim = 16, c.causal = true, c.window = kLongWindow;
    c.bins = 64;
    c.sinks = true;
    const QkLayer layer = layerOf(c);
    VulkanBackendOptions vo;
    vo.pooledWorkPerSubmission = std::uint64_t(1) << 28; // T = 8192: 25 submissions
    auto backend = makeBackend(vo);
    QVERIFY(backend);
    auto got = backend->computePooledQk(layer, optionsOf(c));
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    QVERIFY2(backend->stats().submissions > 1, "expected the long layer in several submissions");
    const std::string diff = compareWithReference(layer, c, *got); // streamed row by row
    QVERIFY2(diff.empty(), diff.c_str());
    const std::string cpu = compareWithCpu(layer, optionsOf(c), *got);
    QVERIFY2(cpu.empty(), cpu.c_str());
}

// What moves is q, k, the sinks, the bin bounds and the positions up; the entropies and the
// cells back; no value, context or output buffer exists on this path.
void TestVulkanQk::transfersCountWhatMoves()
{
    QkCase c;
    c.tq = 9, c.tk = 15, c.heads = 4, c.kvHeads = 2, c.causal = true, c.sinks = true, c.bins = 4;
    c.queryPositions = positionsFrom(6, 9);
    const QkLayer layer = layerOf(c);
    const auto before = *m_backend->transfers();
    auto got = m_backend->computePooledQk(layer, optionsOf(c));
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const auto after = *m_backend->transfers();
    const std::uint64_t f = 4, nq = 4, nk = 4;
    const std::uint64_t up = (9 * 4 * 8 + 15 * 2 * 8 + 4) * f + (nq + 1 + nk + 1) * 4 + (3 * 9 + 15) * 4;
    const std::uint64_t back = 4 * 9 * f + (4 + 1) * nq * nk * f;
    QCOMPARE(after.uploaded - before.uploaded, up);
    QCOMPARE(after.readBack - before.readBack, back);
    QCOMPARE(after.submissions - before.submissions, std::uint64_t(1));
    QCOMPARE(got->output.size(), Eigen::Index(0));
}

void TestVulkanQk::cancelledBeforeItsFirstSubmission()
{
    QkCase c;
    const QkLayer layer = layerOf(c);
    std::atomic<bool> cancel{true};
    PoolOptions options = optionsOf(c);
    options.cancel = &cancel;
    const std::uint64_t before = m_backend->stats().submissions;
    auto got = m_backend->computePooledQk(layer, options);
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::Cancelled);
    QCOMPARE(m_backend->stats().submissions, before);
    QVERIFY(!m_backend->lost());
    cancel = false; // and the backend computes the next request
    auto again = m_backend->computePooledQk(layer, options);
    QVERIFY2(again.ok(), again.ok() ? "" : again.message().c_str());
    const std::string diff = compareWithReference(layer, c, *again);
    QVERIFY2(diff.empty(), diff.c_str());
}

// What the device cannot hold or compare is TooLarge (a FallbackBackend then asks the CPU), one
// line naming it; the backend stays usable.
void TestVulkanQk::tooLargeForTheDeviceIsRefusedWithWhy()
{
    VulkanBackendOptions o;
    o.maxStorageBufferRange = 4096;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    QkCase c;
    c.tq = 6, c.tk = 200, c.heads = 2, c.kvHeads = 1; // k: 200 x 8 floats = 6400 bytes
    auto big = backend->computePooledQk(layerOf(c), optionsOf(c));
    QVERIFY(!big.ok());
    QCOMPARE(big.kind(), ErrorKind::TooLarge);
    QVERIFY2(big.message().find("pooled K") != std::string::npos, big.message().c_str());
    QVERIFY2(big.message().find("6400 bytes") != std::string::npos, big.message().c_str());

    QkCase far;
    far.tq = far.tk = 2, far.causal = true;
    far.queryPositions = {0, std::int64_t(1) << 33};
    far.keyPositions = far.queryPositions;
    auto spread = backend->computePooledQk(layerOf(far), optionsOf(far));
    QVERIFY(!spread.ok());
    QCOMPARE(spread.kind(), ErrorKind::TooLarge);
    QVERIFY2(spread.message().find("positions") != std::string::npos, spread.message().c_str());
    QVERIFY2(spread.message().find('\n') == std::string::npos, spread.message().c_str());

    QVERIFY(!backend->lost());
    QkCase small;
    const QkLayer layer = layerOf(small);
    auto got = backend->computePooledQk(layer, optionsOf(small));
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const std::string diff = compareWithReference(layer, small, *got);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanQk::invalidRequestsAreRefused_data()
{
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<qlonglong>("bins");
    QTest::addColumn<qlonglong>("keyEnd");
    QTest::addColumn<QString>("expected");
    QTest::newRow("key heads not dividing the heads") << 3 << 4LL << -1LL << "kvHeads";
    QTest::newRow("no bins") << 2 << 0LL << -1LL << "bin count";
    QTest::newRow("keys past the layer") << 2 << 4LL << 14LL << "keys [0, 14)";
}

void TestVulkanQk::invalidRequestsAreRefused()
{
    QFETCH(int, kvHeads);
    QFETCH(qlonglong, bins);
    QFETCH(qlonglong, keyEnd);
    QFETCH(QString, expected);
    QkCase c;
    c.heads = 4;
    c.bins = bins;
    c.k1 = keyEnd;
    QkLayer layer = layerOf(c);
    layer.kvHeads = kvHeads; // k keeps its 2 key heads' columns
    auto got = m_backend->computePooledQk(layer, optionsOf(c));
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::InvalidInput);
    QVERIFY2(got.message().find(expected.toStdString()) != std::string::npos, got.message().c_str());
    QVERIFY2(got.message().find('\n') == std::string::npos, got.message().c_str());
    QVERIFY(!m_backend->lost());
}

void TestVulkanQk::deviceFaultFallsBackToTheCpu_data()
{
    QTest::addColumn<QString>("fault");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<bool>("permanent");
    QTest::newRow("device lost") << "device-lost"
                                 << "VK_ERROR_DEVICE_LOST" << true;
    QTest::newRow("out of memory") << "oom"
                                   << "VK_ERROR_OUT_OF_DEVICE_MEMORY" << false;
}

// A device that fails mid-request: the FallbackBackend answers it on the CPU engine, equal to
// the reference, and says so once; a lost device is given up, out of memory only for that call.
void TestVulkanQk::deviceFaultFallsBackToTheCpu()
{
    QFETCH(QString, fault);
    QFETCH(QString, expected);
    QFETCH(bool, permanent);
    BackendOptions o;
    o.vulkan.validation = true;
    o.vulkanDevice = "0";
    auto parsed = test::parseVulkanFault(fault.toStdString());
    QVERIFY(parsed.ok());
    o.vulkan.fault = *parsed;
    auto s = createBackend(BackendRequest::Auto, o);
    QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
    QCOMPARE(s->backend->name(), std::string("vulkan"));
    QVERIFY(!s->backend->usesCpuForPooled());

    QkCase c;
    c.heads = 4, c.kvHeads = 2, c.causal = true, c.sinks = true;
    const QkLayer layer = layerOf(c);
    auto got = s->backend->computePooledQk(layer, optionsOf(c));
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const std::string diff = compareWithReference(layer, c, *got);
    QVERIFY2(diff.empty(), diff.c_str());
    const ComputeRun ran = lastComputeRun(*s->backend);
    QCOMPARE(ran.backend, std::string("cpu"));
    QVERIFY(ran.fellBack);
    const std::string notice = takeBackendNotice(*s->backend);
    QVERIFY2(notice.find(expected.toStdString()) != std::string::npos, notice.c_str());
    QVERIFY(takeBackendNotice(*s->backend).empty());
    QCOMPARE(s->backend->name(), std::string(permanent ? "cpu" : "vulkan"));

    // A bad request is the caller's error, never a fallback.
    QkLayer bad = layer;
    bad.kvHeads = 3;
    auto refused = s->backend->computePooledQk(bad, optionsOf(c));
    QVERIFY(!refused.ok());
    QCOMPARE(refused.kind(), ErrorKind::InvalidInput);
    QVERIFY(takeBackendNotice(*s->backend).empty());
}

QTEST_GUILESS_MAIN(TestVulkanQk)
#include "tst_vulkan_qk.moc"
