// The Vulkan backend against the double reference: every semantic family of the CPU
// engine's suite, shapes that are no multiple of any tile, many heads, weights beyond
// maxStorageBufferRange, forced splitting of bindings and dispatches, buffer reuse and the
// staging path. The Khronos validation layer watches the whole suite; any warning fails it.

#include "../common/BackendChecks.h"
#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"
#include "VulkanTestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/ReferenceAttention.h"
#include "core/attention/Validation.h"

#include <QObject>
#include <QTest>

#include <memory>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

using attnscope::test::checkAgainstReference;

class TestVulkan : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void cleanupTestCase();

    void reportsDevice();
    void matchesReference_data();
    void matchesReference();
    void modernAttentionMatchesReference_data();
    void modernAttentionMatchesReference();
    void modernAttentionSplitAcrossChunks_data();
    void modernAttentionSplitAcrossChunks();
    void oddShapes_data();
    void oddShapes();
    void thirtyTwoHeads();
    void fullyMaskedRows_data();
    void fullyMaskedRows();
    void largeLogitsDoNotOverflow();
    void reuseAcrossRecomputes();
    void stagingPath();
    void countsDeviceTransfers_data();
    void countsDeviceTransfers();
    void splitBindingsAndDispatches_data();
    void splitBindingsAndDispatches();
    void refusesWhatCannotBeBound();
    void weightsBeyondMaxStorageBufferRange();
    void invalidProblemIsRefused();

private:
    std::unique_ptr<VulkanBackend> makeBackend(VulkanBackendOptions options = {});

    std::unique_ptr<VulkanBackend> m_backend; // shared by the data-driven rows: shapes change under it
};

std::unique_ptr<VulkanBackend> TestVulkan::makeBackend(VulkanBackendOptions options)
{
    options.validation = true;
    auto backend = VulkanBackend::create(options);
    if (!backend) {
        qWarning("%s", backend.message().c_str());
        return nullptr;
    }
    return std::move(*backend);
}

void TestVulkan::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    vk::resetValidationReport();
    m_backend = makeBackend();
    QVERIFY2(m_backend, "a Vulkan device exists but the backend failed to start (see the warning above)");
}

void TestVulkan::cleanup()
{
    const std::string problems = test::validationProblems();
    vk::resetValidationReport();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkan::cleanupTestCase()
{
    m_backend.reset(); // destruction is validated too
    const std::string problems = test::validationProblems();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkan::reportsDevice()
{
    QCOMPARE(m_backend->name(), std::string("vulkan"));
    QCOMPARE(m_backend->deviceName(), m_backend->deviceInfo().label());
    QVERIFY(!m_backend->deviceInfo().name.empty());
    QVERIFY(m_backend->deviceInfo().maxStorageBufferRange > 0);
}

void TestVulkan::matchesReference_data()
{
    test::addSemanticCases();
}

void TestVulkan::matchesReference()
{
    QFETCH(Case, c);
    const AttentionProblem p = makeProblem(c);
    const std::string diff = checkAgainstReference(*m_backend, p, c.fill == MaskFill::NegInf);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkan::modernAttentionMatchesReference_data()
{
    test::addModernCases();
}

// design.md's "Modern attention" on the GPU: each field alone and combined, against the double
// reference, with the trace's grouped k/v and the vectors before RoPE.
void TestVulkan::modernAttentionMatchesReference()
{
    QFETCH(Case, c);
    const AttentionProblem p = makeProblem(c);
    const std::string diff = checkAgainstReference(*m_backend, p, c.fill == MaskFill::NegInf);
    QVERIFY2(diff.empty(), diff.c_str());
    auto trace = m_backend->compute(p);
    QVERIFY(trace.ok());
    QCOMPARE(int(trace->k.size()), c.kvHeads > 0 ? c.kvHeads : c.heads);
    QCOMPARE(int(trace->kBeforeRope.size()), c.rope ? int(trace->k.size()) : 0);
    QCOMPARE(int(trace->qBeforeRope.size()), c.rope ? c.heads : 0);
}

// Grouped heads, q/k norms, RoPE, window, soft-cap and sinks with every pass split by tight limits and
// copied through staging buffers. Eight query heads read two key/value heads (groups of 4):
// two workgroups per axis make chunks of two heads, the second starting mid-group; one per axis
// makes every head its own chunk.
void TestVulkan::modernAttentionSplitAcrossChunks_data()
{
    QTest::addColumn<Case>("c");
    QTest::addColumn<qulonglong>("maxRange");
    QTest::addColumn<uint>("maxGroups");
    Case c;
    c.tq = 37;
    c.dq = 10;
    c.heads = 8;
    c.kvHeads = 2;
    c.dk = 4;
    c.dv = 3;
    c.dOut = 7;
    c.biases = true;
    c.rope = true;
    c.causal = true;
    c.window = 5;
    c.padding = true;
    c.softcap = 2.0;
    c.sinks = true;
    QTest::newRow("self, bindings of 1 KiB") << c << qulonglong(1024) << 0u;
    QTest::newRow("self, chunks of 2 heads (mid-group)") << c << qulonglong(0) << 2u;
    QTest::newRow("self, one workgroup per axis") << c << qulonglong(0) << 1u;
    c.qkNorm = true; // headnorm.comp split too: a chunk of rows, heads or both per dispatch
    QTest::newRow("self, q/k norms, bindings of 1 KiB") << c << qulonglong(1024) << 0u;
    QTest::newRow("self, q/k norms, one workgroup per axis") << c << qulonglong(0) << 1u;
    c.qkNorm = false;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("self, -1e9, 2 KiB and 2 workgroups") << c << qulonglong(2048) << 2u;
    c.fill = MaskFill::NegInf;
    c.mode = AttentionMode::Cross;
    c.tk = 29;
    c.dkv = 6;
    c.kvHeads = 4; // groups of 2: chunks of one head start mid-group
    c.keyPositions.resize(29);
    for (size_t j = 0; j < c.keyPositions.size(); ++j)
        c.keyPositions[j] = std::int64_t(2 * j);
    QTest::newRow("cross, key positions, one workgroup per axis") << c << qulonglong(0) << 1u;
    QTest::newRow("cross, key positions, 2 KiB and 2 workgroups") << c << qulonglong(2048) << 2u;
    // A head of 300 dimensions does not fit a 1 KiB binding: the scores accumulate over depth
    // chunks and are soft-capped once, after the last; RoPE's pairs split too.
    Case deep;
    deep.tq = 5;
    deep.heads = 2;
    deep.kvHeads = 1;
    deep.dk = 300;
    deep.rope = true;
    deep.softcap = 1.0;
    deep.causal = true;
    QTest::newRow("dK = 300: the scores' depth split, soft-capped once") << deep << qulonglong(1024) << 0u;
}

void TestVulkan::modernAttentionSplitAcrossChunks()
{
    QFETCH(Case, c);
    QFETCH(qulonglong, maxRange);
    QFETCH(uint, maxGroups);
    VulkanBackendOptions o;
    o.forceStaging = true;
    o.maxStorageBufferRange = maxRange;
    o.maxWorkGroupCount = maxGroups;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    const std::string diff = checkAgainstReference(*backend, makeProblem(c), c.fill == MaskFill::NegInf);
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(backend->stats().staging);
    QVERIFY2(backend->stats().dispatches > 9, "the limits must really split the passes");
}

void TestVulkan::oddShapes_data()
{
    QTest::addColumn<Case>("c");
    for (int tokens : {1, 3, 17, 65, 129})
        for (int dk : {1, 5, 63}) {
            Case c;
            c.mode = tokens % 2 ? AttentionMode::Cross : AttentionMode::Self;
            c.tq = tokens;
            c.tk = tokens == 1 ? 1 : tokens - 2; // cross: Tk differs from Tq
            c.dq = 7;
            c.dkv = 9;
            c.heads = 3;
            c.dk = dk;
            c.dv = dk == 63 ? 5 : dk + 2;
            c.dOut = 11;
            c.biases = true;
            c.causal = tokens > 3;
            c.padding = tokens > 1;
            QTest::addRow("T=%d, dK=%d", tokens, dk) << c;
        }
}

void TestVulkan::oddShapes()
{
    QFETCH(Case, c);
    const std::string diff = checkAgainstReference(*m_backend, makeProblem(c, 7), true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkan::thirtyTwoHeads()
{
    Case c;
    c.tq = 33;
    c.heads = 32;
    c.dk = 4;
    c.dv = 3;
    c.dq = 40;
    c.causal = true;
    c.biases = true;
    const std::string diff = checkAgainstReference(*m_backend, makeProblem(c), true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkan::fullyMaskedRows_data()
{
    test::addMaskFillRows();
}

void TestVulkan::fullyMaskedRows()
{
    QFETCH(int, fill);
    const std::string failure = test::checkFullyMaskedRow(*m_backend, MaskFill(fill));
    QVERIFY2(failure.empty(), failure.c_str());
}

void TestVulkan::largeLogitsDoNotOverflow()
{
    Case c;
    c.scaleMode = ScaleMode::None;
    c.inputScale = 40.0; // |q·k| reaches 1e4 and more
    c.causal = true;
    const AttentionProblem p = makeProblem(c);
    auto ref = referenceAttention(p);
    QVERIFY(ref.ok());
    QVERIFY2(ref->scores[0].cwiseAbs().maxCoeff() > 1e4, "the case must really produce logits beyond 1e4");
    const std::string diff = checkAgainstReference(*m_backend, p, true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkan::reuseAcrossRecomputes()
{
    auto backend = makeBackend();
    QVERIFY(backend);
    Case c;
    c.tq = 9;
    c.causal = true;
    c.biases = true;
    // Same shape twice, with different numbers: one buffer set, one submission per compute,
    // and the second result reflects the second inputs (nothing stale).
    for (std::uint64_t seed : {1u, 2u}) {
        const std::string diff = checkAgainstReference(*backend, makeProblem(c, seed), true);
        QVERIFY2(diff.empty(), diff.c_str());
    }
    QCOMPARE(backend->stats().bufferAllocations, std::uint64_t(1));
    QCOMPARE(backend->stats().submissions, std::uint64_t(2));
    QCOMPARE(backend->stats().computes, std::uint64_t(2));
    // A different shape gets new buffers, then the first shape again.
    Case other = c;
    other.mode = AttentionMode::Cross;
    other.tk = 13;
    other.heads = 4;
    for (const Case &k : {other, c}) {
        const std::string diff = checkAgainstReference(*backend, makeProblem(k, 3), true);
        QVERIFY2(diff.empty(), diff.c_str());
    }
    QCOMPARE(backend->stats().bufferAllocations, std::uint64_t(3));
    QCOMPARE(backend->stats().submissions, std::uint64_t(4));
    // Seven passes (Q, K, V, scores, softmax, weights·V, output) with default limits.
    QCOMPARE(backend->stats().dispatches, std::uint64_t(7));
}

void TestVulkan::stagingPath()
{
    VulkanBackendOptions o;
    o.forceStaging = true;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    Case c;
    c.mode = AttentionMode::Cross;
    c.tq = 5;
    c.tk = 8;
    c.padding = true;
    c.biases = true;
    const std::string diff = checkAgainstReference(*backend, makeProblem(c), true);
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(backend->stats().staging);
}

void TestVulkan::countsDeviceTransfers_data()
{
    QTest::addColumn<bool>("staging");
    QTest::newRow("mapped device memory") << false;
    QTest::newRow("through staging buffers") << true;
}

// The counters behind `model --verbose`: one full compute and one pooled compute of known
// shapes from a fresh backend. The expected bytes are the buffers' sizes as the shapes give them
// (floats and mask words of 4 bytes), the same whether they are copied through staging or not.
void TestVulkan::countsDeviceTransfers()
{
    QFETCH(bool, staging);
    QVERIFY(!CpuBackend().transfers().has_value());
    VulkanBackendOptions o;
    o.forceStaging = staging;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    QCOMPARE(backend->transfers()->submissions, std::uint64_t(0));
    QCOMPARE(backend->transfers()->uploaded, std::uint64_t(0));
    QCOMPARE(backend->transfers()->readBack, std::uint64_t(0));

    Case c;
    c.tq = 7;
    c.dq = 6;
    c.heads = 4;
    c.kvHeads = 2;
    c.dk = 4;
    c.dv = 3;
    c.dOut = 5;
    c.biases = true;
    c.rope = true;
    c.qkNorm = true;
    c.sinks = true;
    c.causal = true;
    c.padding = true;
    const AttentionProblem p = makeProblem(c);
    const std::uint64_t tq = 7, t = tq, dq = 6, h = 4, g = 2, dk = 4, dv = 3, dout = 5, f = 4;
    // Inputs: x, W_Q, W_K, W_V, W_O, the four biases, the sinks, two RoPE tables (a cos and a
    // sin per pair: dK floats a row), the two norm weights.
    const std::uint64_t inputs = f * (tq * dq + dq * h * dk + dq * g * dk + dq * g * dv + h * dv * dout + h * dk +
                                      g * dk + g * dv + dout + h + (tq + t) * dk + 2 * dk);
    const std::uint64_t maskWords = tq * 1; // ceil(7 / 32) words a row
    // Results: Q and K before RoPE, Q, K, V, scores, weights, context, output.
    const std::uint64_t results =
        f * (2 * (tq * h * dk + t * g * dk) + t * g * dv + 2 * h * tq * t + tq * h * dv + tq * dout);
    auto trace = backend->compute(p);
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
    auto after = backend->transfers();
    QVERIFY(after.has_value());
    QCOMPARE(after->submissions, std::uint64_t(1));
    QCOMPARE(after->uploaded, inputs + 4 * maskWords);
    QCOMPARE(after->readBack, results);

    // Rows [0, 6) pooled to 3 x 3 bins with the head mean: the same inputs with the key padding as one
    // word of bits and the bins' bounds; back come the context, the entropies, the cells
    // (one slot per head and one for the mean) and the output.
    PoolOptions options;
    options.bins = 3;
    options.queryEnd = 6;
    options.headMean = true;
    auto pooled = backend->computePooled(p, options);
    QVERIFY2(pooled.ok(), pooled.ok() ? "" : pooled.message().c_str());
    const std::uint64_t nq = 3, nk = 3;
    const std::uint64_t pooledUp = inputs + 4 * 1 + 4 * (nq + 1) + 4 * (nk + 1);
    const std::uint64_t pooledBack = f * (tq * h * dv + h * tq + (h + 1) * nq * nk + tq * dout);
    const auto total = backend->transfers();
    QVERIFY(total->submissions >= 2);
    QCOMPARE(total->submissions, backend->stats().submissions);
    QCOMPARE(total->uploaded, after->uploaded + pooledUp);
    QCOMPARE(total->readBack, after->readBack + pooledBack);
}

void TestVulkan::splitBindingsAndDispatches_data()
{
    QTest::addColumn<qulonglong>("maxRange");
    QTest::addColumn<uint>("maxGroups");
    QTest::newRow("bindings of 4 KiB") << qulonglong(4096) << 0u;
    QTest::newRow("bindings of 1 KiB") << qulonglong(1024) << 0u;
    QTest::newRow("one workgroup per axis") << qulonglong(0) << 1u;
    QTest::newRow("both: 2 KiB, 2 workgroups") << qulonglong(2048) << 2u;
}

void TestVulkan::splitBindingsAndDispatches()
{
    QFETCH(qulonglong, maxRange);
    QFETCH(uint, maxGroups);
    VulkanBackendOptions o;
    o.maxStorageBufferRange = maxRange;
    o.maxWorkGroupCount = maxGroups;
    auto backend = makeBackend(o);
    QVERIFY(backend);
    Case c;
    c.mode = AttentionMode::Cross;
    c.tq = 70;
    c.tk = 67;
    c.dq = 21;
    c.dkv = 19;
    c.heads = 3;
    c.dk = 7;
    c.dv = 5;
    c.dOut = 9;
    c.biases = true;
    c.causal = true;
    c.padding = true;
    c.custom = true;
    for (MaskFill fill : {MaskFill::NegInf, MaskFill::NegLarge}) {
        c.fill = fill;
        const std::string diff = checkAgainstReference(*backend, makeProblem(c), fill == MaskFill::NegInf);
        QVERIFY2(diff.empty(), diff.c_str());
        QVERIFY2(backend->stats().dispatches > 7, "the limits must really split the passes");
        QCOMPARE(backend->stats().submissions, std::uint64_t(fill == MaskFill::NegInf ? 1 : 2));
    }
}

void TestVulkan::refusesWhatCannotBeBound()
{
    VulkanBackendOptions o;
    o.maxStorageBufferRange = 256; // a scores row of 300 keys does not fit
    auto backend = makeBackend(o);
    QVERIFY(backend);
    Case c;
    c.tq = 300;
    auto t = backend->compute(makeProblem(c));
    QVERIFY(!t.ok());
    QVERIFY2(t.message().find("maxStorageBufferRange") != std::string::npos, t.message().c_str());
    QVERIFY2(t.message().find("softmax") != std::string::npos, t.message().c_str());
    QCOMPARE(t.kind(), ErrorKind::TooLarge); // what FallbackBackend answers on the CPU for this call only
    QVERIFY(!backend->lost());               // a refusal is no device failure: smaller problems still run
    c.tq = 4;
    const std::string diff = checkAgainstReference(*backend, makeProblem(c), true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkan::weightsBeyondMaxStorageBufferRange()
{
    // Wq alone is 65536 x 520 floats = 130 MiB: more than lavapipe's 128 MiB binding limit,
    // so the projection must split its depth and accumulate.
    Case c;
    c.mode = AttentionMode::Cross;
    c.tq = 3;
    c.tk = 5;
    c.dq = 65536;
    c.dkv = 8;
    c.heads = 2;
    c.dk = 260;
    c.dv = 4;
    c.biases = true;
    c.causal = true;
    const AttentionProblem p = makeProblem(c);
    const std::uint64_t wqBytes = std::uint64_t(p.weights.q.size()) * sizeof(float);
    QVERIFY2(wqBytes > (std::uint64_t(128) << 20), "the case must exceed 128 MiB of weights");
    const std::string diff = checkAgainstReference(*m_backend, p, true);
    QVERIFY2(diff.empty(), diff.c_str());
    if (wqBytes > m_backend->deviceInfo().maxStorageBufferRange)
        QVERIFY(m_backend->stats().dispatches > 7);
}

void TestVulkan::invalidProblemIsRefused()
{
    AttentionProblem p = makeProblem(Case{});
    p.weights.k.resize(6, 5);
    auto t = m_backend->compute(p);
    QVERIFY(!t.ok());
    QCOMPARE(QString::fromStdString(t.message()),
             QStringLiteral("weights.k: expected 6 x 6 (d_kv x heads*headDimQK), found 6 x 5"));
    QCOMPARE(t.kind(), ErrorKind::InvalidInput);
    QVERIFY(!m_backend->lost());
}

QTEST_GUILESS_MAIN(TestVulkan)
#include "tst_vulkan.moc"
