// The pooled long-sequence path on Vulkan (shaders/pooled_rows.comp, pooled_cells.comp) against
// pooling the full double-precision reference weights: the families of tests/core/tst_pooled.cpp
// at shapes lavapipe runs quickly, forced splitting into many submissions and dispatches, the
// staging path, refusals of what does not fit the device (and the CPU answering for the
// FallbackBackend). The Khronos validation layer watches the whole suite.

#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"
#include "VulkanTestUtil.h"

#include "app/engine/BackendChoice.h"
#include "core/analysis/Pooling.h"
#include "core/attention/PooledAttention.h"
#include "core/attention/ReferenceAttention.h"

#include <QObject>
#include <QTest>

#include <memory>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

struct GpuPoolCase {
    Case c;
    std::int64_t bins = 4;
    PoolMode mode = PoolMode::Max;
    Eigen::Index paddedFrom = -1, paddedTo = -1; // a run of padded keys, when >= 0
};
Q_DECLARE_METATYPE(GpuPoolCase)
Q_DECLARE_METATYPE(VulkanFault)
Q_DECLARE_METATYPE(attnscope::ErrorKind)

class TestVulkanPooled : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();

    void runsOnTheGpu();
    void matchesPooledReference_data();
    void matchesPooledReference();
    void manySubmissionsAndSplitDispatches_data();
    void manySubmissionsAndSplitDispatches();
    void stagingPath();
    void tooLargeForABindingIsRefusedWithTheSize();
    void fallbackComputesWhatTheGpuRefuses();
    void invalidRequestsAreRefused();
    void blocksAndTheHeadMeanRunOnTheGpu_data();
    void blocksAndTheHeadMeanRunOnTheGpu();
    void injectedFaults_data();
    void injectedFaults();
    void modernAttentionMatchesPooledReference_data();
    void modernAttentionMatchesPooledReference();
    void modernAttentionInManySubmissions_data();
    void modernAttentionInManySubmissions();
    void modernAttentionBlocks_data();
    void modernAttentionBlocks();

private:
    std::unique_ptr<VulkanBackend> makeBackend(VulkanBackendOptions options = {});
    void check(VulkanBackend &backend, const GpuPoolCase &pc);
    void check(VulkanBackend &backend, const AttentionProblem &p, const PoolOptions &options);

    std::unique_ptr<VulkanBackend> m_backend; // shared by the rows: shapes change under it
};

namespace {

void addBoth(const char *name, GpuPoolCase pc)
{
    pc.mode = PoolMode::Max;
    QTest::newRow((std::string(name) + ", max").c_str()) << pc;
    pc.mode = PoolMode::Mean;
    QTest::newRow((std::string(name) + ", mean").c_str()) << pc;
}

AttentionProblem problemOf(const GpuPoolCase &pc)
{
    AttentionProblem p = makeProblem(pc.c);
    if (pc.paddedFrom >= 0) {
        p.mask.keyPadding.assign(size_t(p.tk()), true);
        for (Eigen::Index j = pc.paddedFrom; j < pc.paddedTo; ++j)
            p.mask.keyPadding[size_t(j)] = false;
    }
    return p;
}

} // namespace

std::unique_ptr<VulkanBackend> TestVulkanPooled::makeBackend(VulkanBackendOptions options)
{
    options.validation = true;
    auto backend = VulkanBackend::create(options);
    if (!backend) {
        qWarning("%s", backend.message().c_str());
        return nullptr;
    }
    return std::move(*backend);
}

void TestVulkanPooled::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    vk::resetValidationReport();
    m_backend = makeBackend();
    QVERIFY2(m_backend, "a Vulkan device exists but the backend failed to start (see the warning above)");
}

void TestVulkanPooled::cleanup()
{
    const std::string problems = test::validationProblems();
    vk::resetValidationReport();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkanPooled::check(VulkanBackend &backend, const GpuPoolCase &pc)
{
    PoolOptions options;
    options.bins = pc.bins;
    options.mode = pc.mode;
    check(backend, problemOf(pc), options);
}

// The whole problem pooled on the GPU against the pooled double reference: every head's cells,
// the head mean where asked for, the entropies and the output.
void TestVulkanPooled::check(VulkanBackend &backend, const AttentionProblem &p, const PoolOptions &options)
{
    auto ref = referencePooled(p, options);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
    AttentionBackend &base = backend;
    auto got = base.computePooled(p, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    QCOMPARE(got->pooled.size(), size_t(p.spec.heads));
    const Eigen::Index nq = std::min<Eigen::Index>(options.bins, p.tq()),
                       nk = std::min<Eigen::Index>(options.bins, p.tk());
    for (int h = 0; h < p.spec.heads; ++h) {
        QCOMPARE(got->pooled[size_t(h)].rows(), nq);
        QCOMPARE(got->pooled[size_t(h)].cols(), nk);
        const std::string diff =
            test::compareMatrix("pooled", got->pooled[size_t(h)], ref->pooled[size_t(h)], test::Tolerance::weights());
        QVERIFY2(diff.empty(), ("head " + std::to_string(h) + ": " + diff).c_str());
    }
    if (options.headMean) {
        const std::string diff =
            test::compareMatrix("head mean", got->headMean, ref->headMean, test::Tolerance::weights());
        QVERIFY2(diff.empty(), diff.c_str());
    }
    std::string diff = test::compareMatrix("entropy", got->entropy, ref->entropy, test::Tolerance::values());
    QVERIFY2(diff.empty(), diff.c_str());
    diff = test::compareMatrix("output", got->output, ref->output, test::Tolerance::values());
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanPooled::runsOnTheGpu()
{
    QVERIFY(!m_backend->usesCpuForPooled());
    const std::uint64_t before = m_backend->stats().submissions;
    GpuPoolCase pc;
    pc.c.tq = 9;
    check(*m_backend, pc);
    // It went through the device (the CPU engine submits nothing), in one submission.
    QCOMPARE(m_backend->stats().submissions, before + 1);
    QVERIFY(m_backend->stats().dispatches >= 5); // three projections, rows, cells, output
}

void TestVulkanPooled::matchesPooledReference_data()
{
    QTest::addColumn<GpuPoolCase>("pc");
    GpuPoolCase base;
    base.c.tq = 10;
    base.c.heads = 2;
    base.bins = 4; // 10 / 4: bins of 2 and 3 rows
    addBoth("self, T not divisible by N", base);
    GpuPoolCase pc = base;
    pc.bins = 50;
    addBoth("N > T", pc);
    pc.bins = 10;
    addBoth("N = T", pc);
    pc = base;
    pc.bins = 1;
    addBoth("one bin", pc);
    pc = base;
    pc.c.heads = 5;
    pc.c.dk = 5;
    pc.c.dv = 2;
    addBoth("five heads, dK != dV", pc);
    pc = base;
    pc.c.causal = true;
    addBoth("causal", pc);
    pc.c.fill = MaskFill::NegLarge;
    addBoth("causal, -1e9", pc);
    pc = base;
    pc.c.padding = true;
    addBoth("padding", pc);
    pc = base;
    pc.c.custom = true;
    addBoth("custom mask with an empty row, -inf", pc);
    pc.c.fill = MaskFill::NegLarge;
    addBoth("custom mask with an empty row, -1e9", pc);
    pc = base;
    pc.c.causal = true;
    pc.c.padding = true;
    pc.c.fill = MaskFill::NegLarge;
    addBoth("causal and padding, -1e9", pc);
    pc = base;
    pc.c.causal = true;
    pc.paddedFrom = 0;
    pc.paddedTo = 3; // rows 0-2 see no key: under -1e9 uniform over every key, the later ones too
    addBoth("causal, first keys padded, -inf", pc);
    pc.c.fill = MaskFill::NegLarge;
    addBoth("causal, first keys padded, -1e9", pc);
    pc = base;
    pc.paddedFrom = 0;
    pc.paddedTo = 10; // every key padded: every row empty
    addBoth("every key padded, -inf", pc);
    pc.c.fill = MaskFill::NegLarge;
    addBoth("every key padded, -1e9", pc);
    pc = base;
    pc.c.mode = AttentionMode::Cross;
    pc.c.tq = 7;
    pc.c.tk = 13;
    pc.c.dq = 4;
    pc.c.dkv = 9;
    pc.c.dk = 4;
    pc.c.dv = 2;
    pc.c.padding = true;
    pc.c.biases = true;
    pc.bins = 5;
    addBoth("cross, Tq != Tk, padding, biases", pc);
    GpuPoolCase withValue = pc;
    withValue.c.dvIn = 6; // attention(query, key, value): V comes from its own input
    addBoth("cross, separate value input, padding, biases", withValue);
    pc.c.outputProjection = false;
    pc.c.biases = false;
    pc.bins = 3;
    addBoth("cross, no Wo", pc);
    pc.c.custom = true;
    pc.c.causal = true;
    addBoth("cross, custom and causal, no Wo", pc);
    pc = base;
    pc.c.outputProjection = false;
    pc.c.biases = true;
    addBoth("self, no Wo, biases", pc);

    // Rows longer than a workgroup (64 keys), context wider than one sweep (256 columns),
    // logits of tens whose maxima move along the row.
    GpuPoolCase big = base;
    big.c.tq = 150;
    big.c.dq = 8;
    big.c.dk = 4;
    big.c.dv = 3;
    big.c.causal = true;
    big.bins = 37;
    addBoth("T=150 causal, N=37", big);
    big.bins = 100; // cells of 1 or 2 x 1 or 2: one thread each, two workgroups of key bins
    addBoth("T=150 causal, N=100", big);
    big.bins = 37;
    big.c.fill = MaskFill::NegLarge;
    addBoth("T=150 causal, -1e9", big);
    big.c.causal = false;
    big.c.fill = MaskFill::NegInf;
    big.paddedFrom = 64;
    big.paddedTo = 128;
    addBoth("T=150, a padded run of keys", big);
    big.c.inputScale = 3.0;
    big.paddedFrom = -1;
    big.c.causal = true;
    addBoth("T=150 causal, large logits", big);
    GpuPoolCase wide = base;
    wide.c.heads = 1;
    wide.c.tq = 70;
    wide.c.dq = 8;
    wide.c.dk = 2;
    wide.c.dv = 300;
    wide.bins = 7;
    addBoth("dV = 300: two context sweeps", wide);
}

void TestVulkanPooled::matchesPooledReference()
{
    QFETCH(GpuPoolCase, pc);
    check(*m_backend, pc);
}

// A budget of a few multiply-adds per submission makes every query row its own chunk (cells
// then span chunks and combine), and one workgroup per axis splits every dispatch.
void TestVulkanPooled::manySubmissionsAndSplitDispatches_data()
{
    QTest::addColumn<GpuPoolCase>("pc");
    QTest::addColumn<unsigned>("maxGroups");
    QTest::addColumn<qulonglong>("work");
    GpuPoolCase pc;
    pc.c.tq = 11;
    pc.c.heads = 3;
    pc.c.causal = true;
    pc.c.padding = true;
    pc.bins = 4;
    for (PoolMode mode : {PoolMode::Max, PoolMode::Mean}) {
        pc.mode = mode;
        const char *m = mode == PoolMode::Max ? "max" : "mean";
        QTest::newRow((std::string("many submissions, ") + m).c_str()) << pc << 0u << 1ull;
        QTest::newRow((std::string("many submissions, 1 group per axis, ") + m).c_str()) << pc << 1u << 1ull;
        GpuPoolCase custom = pc;
        custom.c.causal = false;
        custom.c.custom = true;
        custom.c.fill = MaskFill::NegLarge;
        QTest::newRow((std::string("custom, -1e9, 2 groups per axis, ") + m).c_str()) << custom << 2u << 1ull;
        GpuPoolCase cooperative = pc; // cells of 6 x 11 pairs: one workgroup each
        cooperative.bins = 2;
        QTest::newRow((std::string("workgroup per cell, 1 group per axis, ") + m).c_str()) << cooperative << 1u << 1ull;
        GpuPoolCase longer = pc; // chunks of 37 rows, bins of 18 or 19 rows: cells span chunks
        longer.c.tq = 300;
        longer.c.dq = 8;
        longer.c.dk = 4;
        longer.c.dv = 4;
        longer.c.heads = 2;
        longer.bins = 16;
        QTest::newRow((std::string("T=300 in chunks of 37 rows, ") + m).c_str())
            << longer << 0u << qulonglong(37 * 300 * 2 * 16);
    }
}

void TestVulkanPooled::manySubmissionsAndSplitDispatches()
{
    QFETCH(GpuPoolCase, pc);
    QFETCH(unsigned, maxGroups);
    QFETCH(qulonglong, work);
    VulkanBackendOptions o;
    o.pooledWorkPerSubmission = work;
    o.maxWorkGroupCount = maxGroups;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    check(*backend, pc);
    // Per row: Tk keys x heads x (3 dK + dV) multiply-adds.
    const std::uint64_t perRow = std::uint64_t(pc.c.tq) * std::uint64_t(pc.c.heads) * (3 * pc.c.dk + pc.c.dv);
    const std::uint64_t rows = std::max<std::uint64_t>(1, work / perRow);
    QCOMPARE(backend->stats().submissions, (std::uint64_t(pc.c.tq) + rows - 1) / rows);
}

void TestVulkanPooled::stagingPath()
{
    VulkanBackendOptions o;
    o.forceStaging = true;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    GpuPoolCase pc;
    pc.c.tq = 12;
    pc.c.biases = true;
    pc.c.custom = true;
    pc.bins = 5;
    check(*backend, pc);
    QVERIFY(backend->stats().staging);
    pc.mode = PoolMode::Mean; // the same buffers again
    check(*backend, pc);
}

// A buffer the pooled shaders bind whole must fit maxStorageBufferRange: refused as TooLarge,
// naming the buffer and its bytes, and the backend still works for what fits.
void TestVulkanPooled::tooLargeForABindingIsRefusedWithTheSize()
{
    VulkanBackendOptions o;
    o.maxStorageBufferRange = 4096;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    Case c;
    c.tq = 200;
    c.dq = 8;
    c.heads = 2;
    c.dk = 4; // K: 200 x 8 floats = 6400 bytes
    const AttentionProblem p = makeProblem(c);
    PoolOptions options;
    options.bins = 8;
    auto got = backend->computePooled(p, options);
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::TooLarge);
    QVERIFY2(got.message().find("6400 bytes") != std::string::npos, got.message().c_str());
    QVERIFY(!backend->lost());
    GpuPoolCase small;
    small.c.tq = 6;
    check(*backend, small);
}

void TestVulkanPooled::fallbackComputesWhatTheGpuRefuses()
{
    VulkanBackendOptions o;
    o.validation = true;
    o.maxAllocationBytes = 4096;
    auto vulkan = VulkanBackend::create(o);
    QVERIFY2(vulkan.ok(), vulkan.ok() ? "" : vulkan.message().c_str());
    FallbackBackend fallback(std::move(*vulkan));
    QVERIFY(!fallback.usesCpuForPooled());
    Case c;
    c.tq = 200;
    c.dq = 4;
    c.heads = 1; // every buffer but the pooled maps fits in 4 KiB
    const AttentionProblem p = makeProblem(c);
    PoolOptions options;
    options.bins = 64; // 64 x 64 floats = 16 KiB of pooled maps
    auto ref = referencePooled(p, options);
    QVERIFY(ref.ok());
    auto got = fallback.computePooled(p, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    QVERIFY(fallback.lastRun().fellBack);
    const std::string notice = fallback.takeNotice();
    QVERIFY2(notice.find("16384 bytes") != std::string::npos, notice.c_str());
    const std::string diff = test::compareMatrix("pooled", got->pooled[0], ref->pooled[0], test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());
    // The GPU stays in use for the next request, which fits.
    QVERIFY(!fallback.fellBack());
    const AttentionProblem small = makeProblem(Case{});
    options.bins = 2;
    QVERIFY(fallback.computePooled(small, options).ok());
    QVERIFY(!fallback.lastRun().fellBack);
}

void TestVulkanPooled::invalidRequestsAreRefused()
{
    const AttentionProblem p = makeProblem(Case{});
    PoolOptions options;
    options.bins = 0;
    auto got = m_backend->computePooled(p, options);
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::InvalidInput);
    AttentionProblem bad = p;
    bad.weights.k.resize(3, 3);
    options.bins = 2;
    got = m_backend->computePooled(bad, options);
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::InvalidInput);
    QVERIFY2(got.message().find("weights.k") != std::string::npos, got.message().c_str());
}

struct GpuBlockCase {
    GpuPoolCase pc;
    std::int64_t q0 = 0, q1 = -1, k0 = 0, k1 = -1;
};
Q_DECLARE_METATYPE(GpuBlockCase)

void TestVulkanPooled::blocksAndTheHeadMeanRunOnTheGpu_data()
{
    QTest::addColumn<GpuBlockCase>("bc");
    GpuBlockCase whole;
    whole.pc.c.tq = whole.pc.c.tk = 11;
    whole.pc.c.heads = 3;
    whole.pc.bins = 4;
    QTest::newRow("whole problem, head mean") << whole;
    GpuBlockCase zoom = whole;
    zoom.q0 = 3, zoom.q1 = 10, zoom.k0 = 2, zoom.k1 = 9;
    zoom.pc.bins = 3;
    QTest::newRow("zoomed block") << zoom;
    GpuBlockCase rowsOnly = zoom;
    rowsOnly.k0 = 0, rowsOnly.k1 = -1;
    QTest::newRow("rows of every key (entropy and output too)") << rowsOnly;
    GpuBlockCase causal = zoom;
    causal.pc.c.causal = true;
    QTest::newRow("causal block") << causal;
    GpuBlockCase padded = zoom;
    padded.pc.paddedFrom = 4, padded.pc.paddedTo = 7;
    padded.pc.mode = PoolMode::Mean;
    QTest::newRow("padded keys, mean") << padded;
    GpuBlockCase large = causal;
    large.pc.c.fill = MaskFill::NegLarge;
    QTest::newRow("causal block, -1e9") << large;
    GpuBlockCase cross = zoom;
    cross.pc.c.mode = AttentionMode::Cross;
    cross.pc.c.tk = 13;
    cross.k1 = 12;
    QTest::newRow("cross, Tq != Tk") << cross;
}

// The GUI's pooled view asks for zoomed blocks and the head mean. They used to run on the CPU
// engine whatever the backend; now the shaders pool them, equal to pooling the reference's
// weights over the block (the head mean: the weights averaged over heads, then pooled).
void TestVulkanPooled::blocksAndTheHeadMeanRunOnTheGpu()
{
    QFETCH(GpuBlockCase, bc);
    const AttentionProblem p = problemOf(bc.pc);
    auto ref = referenceAttention(p);
    QVERIFY(ref.ok());
    PoolOptions options;
    options.bins = bc.pc.bins;
    options.mode = bc.pc.mode;
    options.queryBegin = bc.q0;
    options.queryEnd = bc.q1;
    options.keyBegin = bc.k0;
    options.keyEnd = bc.k1;
    options.headMean = true;
    PoolProgress progress;
    options.progress = &progress;
    const std::uint64_t before = m_backend->stats().submissions;
    AttentionBackend &base = *m_backend;
    auto got = base.computePooled(p, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    QVERIFY2(m_backend->stats().submissions > before, "the block was not computed on the device");
    QVERIFY(progress.done > 0 && progress.done == progress.total);

    const Eigen::Index q1 = bc.q1 < 0 ? p.tq() : bc.q1, k1 = bc.k1 < 0 ? p.tk() : bc.k1;
    const Eigen::Index rows = q1 - bc.q0, keys = k1 - bc.k0;
    MatrixD sum = MatrixD::Zero(rows, keys);
    for (int h = 0; h < bc.pc.c.heads; ++h) {
        const MatrixD block = ref->weights[size_t(h)].block(bc.q0, bc.k0, rows, keys);
        sum += block;
        const std::string diff = test::compareMatrix(
            "pooled", got->pooled[size_t(h)], poolMatrix(block, bc.pc.bins, bc.pc.mode), test::Tolerance::weights());
        QVERIFY2(diff.empty(), ("head " + std::to_string(h) + ": " + diff).c_str());
    }
    const MatrixD mean = sum / double(bc.pc.c.heads);
    const std::string diff = test::compareMatrix("head mean", got->headMean, poolMatrix(mean, bc.pc.bins, bc.pc.mode),
                                                 test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());

    if (bc.k0 == 0 && k1 == p.tk()) {
        auto whole = referencePooled(p, PoolOptions{});
        QVERIFY(whole.ok());
        std::string d = test::compareMatrix("entropy", got->entropy, MatrixD(whole->entropy.middleCols(bc.q0, rows)),
                                            test::Tolerance::values());
        QVERIFY2(d.empty(), d.c_str());
        d = test::compareMatrix("output", got->output, MatrixD(whole->output.middleRows(bc.q0, rows)),
                                test::Tolerance::values());
        QVERIFY2(d.empty(), d.c_str());
    } else {
        QCOMPARE(got->entropy.size(), Eigen::Index(0));
        QCOMPARE(got->output.size(), Eigen::Index(0));
    }

    // A block outside the problem is refused, as by the CPU engine.
    options.queryEnd = p.tq() + 1;
    auto outside = base.computePooled(p, options);
    QVERIFY(!outside.ok());
    QCOMPARE(outside.kind(), ErrorKind::InvalidInput);
}

// A fault is an Error of its kind; a lost device (or a wait that gave up while the GPU may still
// run the submission) refuses later work and is destroyed safely; FallbackBackend answers on the
// CPU with the reference's values.
void TestVulkanPooled::injectedFaults_data()
{
    QTest::addColumn<VulkanFault>("fault");
    QTest::addColumn<ErrorKind>("kind");
    QTest::addColumn<bool>("lost");
    QTest::newRow("out of memory") << VulkanFault::OutOfMemory << ErrorKind::OutOfMemory << false;
    QTest::newRow("device lost") << VulkanFault::DeviceLost << ErrorKind::DeviceLost << true;
    QTest::newRow("timeout") << VulkanFault::Timeout << ErrorKind::DeviceLost << true;
}

void TestVulkanPooled::injectedFaults()
{
    QFETCH(VulkanFault, fault);
    QFETCH(ErrorKind, kind);
    QFETCH(bool, lost);
    VulkanBackendOptions o;
    o.fault = fault;
    o.pooledWorkPerSubmission = 1; // the timeout strikes with later chunks still to record
    Case c;
    c.tq = 7;
    const AttentionProblem p = makeProblem(c);
    PoolOptions options;
    options.bins = 3;
    {
        auto backend = makeBackend(o);
        QVERIFY(backend);
        auto got = backend->computePooled(p, options);
        QVERIFY(!got.ok());
        QCOMPARE(got.kind(), kind);
        QCOMPARE(backend->lost(), lost);
        if (lost)
            QCOMPARE(backend->computePooled(p, options).kind(), ErrorKind::DeviceLost);
    } // destroyed while a timed-out submission may still run: it waits for the device first
    auto vulkan = makeBackend(o);
    QVERIFY(vulkan);
    FallbackBackend fallback(std::move(vulkan));
    auto got = fallback.computePooled(p, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    QVERIFY(fallback.lastRun().fellBack);
    QCOMPARE(fallback.fellBack(), lost); // gives the device up only when it is gone
    auto ref = referencePooled(p, options);
    QVERIFY(ref.ok());
    const std::string diff = test::compareMatrix("pooled", got->pooled[1], ref->pooled[1], test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanPooled::modernAttentionMatchesPooledReference_data()
{
    test::addModernCases();
}

// design.md's "Modern attention" pooled on the GPU, as tests/core/tst_pooled.cpp holds the CPU
// engine to it: max and mean, bins coarser than the rows and one per row, the head mean too.
void TestVulkanPooled::modernAttentionMatchesPooledReference()
{
    QFETCH(Case, c);
    const AttentionProblem p = makeProblem(c);
    for (PoolMode mode : {PoolMode::Max, PoolMode::Mean})
        for (std::int64_t bins : {std::int64_t(3), std::int64_t(p.tq())}) {
            PoolOptions options;
            options.bins = bins;
            options.mode = mode;
            options.headMean = true;
            check(*m_backend, p, options);
            if (QTest::currentTestFailed()) {
                qWarning("with %s pooling to %lld bins", mode == PoolMode::Max ? "max" : "mean",
                         static_cast<long long>(bins));
                return;
            }
        }
}

// Every query row its own submission (the row statistics, sinks included, are reused by a
// later cell pass) and every dispatch split to one or two workgroups per axis.
void TestVulkanPooled::modernAttentionInManySubmissions_data()
{
    QTest::addColumn<Case>("c");
    QTest::addColumn<unsigned>("maxGroups");
    Case c;
    c.tq = 13;
    c.heads = 6;
    c.kvHeads = 2;
    c.dk = 4;
    c.dv = 3;
    c.biases = true;
    c.rope = true;
    c.causal = true;
    c.window = 4;
    c.softcap = 1.5;
    c.sinks = true;
    QTest::newRow("self, 1 group per axis") << c << 1u;
    c.qkNorm = true;
    QTest::newRow("self, q/k norms, 1 group per axis") << c << 1u;
    c.qkNorm = false;
    c.fill = MaskFill::NegLarge;
    c.custom = true;
    QTest::newRow("self, custom, -1e9, 2 groups per axis") << c << 2u;
    c.fill = MaskFill::NegInf;
    c.custom = false;
    c.mode = AttentionMode::Cross;
    c.tk = 11;
    c.dkv = 5;
    c.queryPositions = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}; // causal and window compare these
    QTest::newRow("cross, given query positions, 1 group per axis") << c << 1u;
}

void TestVulkanPooled::modernAttentionInManySubmissions()
{
    QFETCH(Case, c);
    QFETCH(unsigned, maxGroups);
    VulkanBackendOptions o;
    o.pooledWorkPerSubmission = 1;
    o.maxWorkGroupCount = maxGroups;
    o.forceStaging = true;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    PoolOptions options;
    options.bins = 4;
    options.headMean = true;
    for (PoolMode mode : {PoolMode::Max, PoolMode::Mean}) {
        options.mode = mode;
        const std::uint64_t before = backend->stats().submissions;
        check(*backend, makeProblem(c), options);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(backend->stats().submissions - before, std::uint64_t(c.tq));
    }
}

void TestVulkanPooled::modernAttentionBlocks_data()
{
    QTest::addColumn<GpuBlockCase>("bc");
    GpuBlockCase all;
    all.pc.c.tq = 12;
    all.pc.c.heads = 4;
    all.pc.c.kvHeads = 2;
    all.pc.c.dk = 4;
    all.pc.c.biases = true;
    all.pc.c.rope = true;
    all.pc.c.causal = true;
    all.pc.c.window = 5;
    all.pc.c.softcap = 2.0;
    all.pc.c.sinks = true;
    all.pc.bins = 3;
    all.q0 = 3, all.q1 = 11, all.k0 = 2, all.k1 = 9;
    QTest::newRow("zoomed block, everything together") << all;
    GpuBlockCase rows = all;
    rows.k0 = 0, rows.k1 = -1;
    rows.pc.mode = PoolMode::Mean;
    QTest::newRow("rows of every key, everything together, mean") << rows;
    GpuBlockCase positions = all;
    positions.pc.c.queryPositions = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22};
    positions.pc.c.fill = MaskFill::NegLarge;
    QTest::newRow("zoomed block, given positions, -1e9") << positions;
}

// Blocks (the GUI's zoom) and the head mean with every modern field: the cells of the full
// computation over the block, entropies and output for blocks of every key.
void TestVulkanPooled::modernAttentionBlocks()
{
    QFETCH(GpuBlockCase, bc);
    const AttentionProblem p = problemOf(bc.pc);
    auto ref = referenceAttention(p);
    QVERIFY(ref.ok());
    PoolOptions options;
    options.bins = bc.pc.bins;
    options.mode = bc.pc.mode;
    options.queryBegin = bc.q0;
    options.queryEnd = bc.q1;
    options.keyBegin = bc.k0;
    options.keyEnd = bc.k1;
    options.headMean = true;
    AttentionBackend &base = *m_backend;
    auto got = base.computePooled(p, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const Eigen::Index q1 = bc.q1 < 0 ? p.tq() : bc.q1, k1 = bc.k1 < 0 ? p.tk() : bc.k1;
    const Eigen::Index rows = q1 - bc.q0, keys = k1 - bc.k0;
    MatrixD sum = MatrixD::Zero(rows, keys);
    for (int h = 0; h < bc.pc.c.heads; ++h) {
        const MatrixD block = ref->weights[size_t(h)].block(bc.q0, bc.k0, rows, keys);
        sum += block;
        const std::string diff = test::compareMatrix(
            "pooled", got->pooled[size_t(h)], poolMatrix(block, bc.pc.bins, bc.pc.mode), test::Tolerance::weights());
        QVERIFY2(diff.empty(), ("head " + std::to_string(h) + ": " + diff).c_str());
    }
    const std::string diff = test::compareMatrix(
        "head mean", got->headMean, poolMatrix(MatrixD(sum / double(bc.pc.c.heads)), bc.pc.bins, bc.pc.mode),
        test::Tolerance::weights());
    QVERIFY2(diff.empty(), diff.c_str());
    if (bc.k0 == 0 && k1 == p.tk()) {
        auto whole = referencePooled(p, PoolOptions{});
        QVERIFY(whole.ok());
        std::string d = test::compareMatrix("entropy", got->entropy, MatrixD(whole->entropy.middleCols(bc.q0, rows)),
                                            test::Tolerance::values());
        QVERIFY2(d.empty(), d.c_str());
        d = test::compareMatrix("output", got->output, MatrixD(whole->output.middleRows(bc.q0, rows)),
                                test::Tolerance::values());
        QVERIFY2(d.empty(), d.c_str());
    }
}

QTEST_GUILESS_MAIN(TestVulkanPooled)
#include "tst_vulkan_pooled.moc"
