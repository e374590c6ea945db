// The pooled long-sequence path (design.md, `compute --pool N`) against pooling the full
// double-precision reference weights: every mask family, both fills, self and cross attention,
// bins that do not divide T, more bins than tokens, and sizes that span several query blocks
// and key tiles of the engine.

#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"

#include "core/attention/AttentionBackend.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/PooledAttention.h"
#include "core/io/MemoryLimits.h"

#include <QObject>
#include <QTest>

#include <cstdlib>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

struct PoolCase {
    Case c;
    std::int64_t bins = 4;
    PoolMode mode = PoolMode::Max;
    Eigen::Index paddedFrom = -1, paddedTo = -1; // a run of padded keys, when >= 0
};
Q_DECLARE_METATYPE(PoolCase)

class TestPooled : public QObject
{
    Q_OBJECT

private slots:
    void matchesPooledReference_data();
    void matchesPooledReference();
    void poolWeightsByHand();
    void binsBelowOneAreRefused();
    void tooLargeIsRefusedWithTheSize();
    void backendDefaultRunsTheCpuEngine();
};

namespace {

void addBoth(const char *name, PoolCase pc)
{
    pc.mode = PoolMode::Max;
    QTest::newRow((std::string(name) + ", max").c_str()) << pc;
    pc.mode = PoolMode::Mean;
    QTest::newRow((std::string(name) + ", mean").c_str()) << pc;
}

} // namespace

void TestPooled::matchesPooledReference_data()
{
    QTest::addColumn<PoolCase>("pc");
    PoolCase base;
    base.c.tq = 10;
    base.c.heads = 2;
    base.bins = 4; // 10 / 4: bins of 2 and 3 rows
    addBoth("self, T not divisible by N", base);
    PoolCase pc = base;
    pc.bins = 50;
    addBoth("N > T", pc);
    pc = base;
    pc.bins = 1;
    addBoth("one bin", pc);
    pc = base;
    pc.c.causal = true;
    addBoth("causal", pc);
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
    pc.c.outputProjection = false;
    pc.c.biases = false;
    pc.bins = 3;
    addBoth("cross, no Wo", pc);

    // Sizes that span several query blocks (256 rows) and key tiles (512 keys).
    PoolCase big = base;
    big.c.tq = 1100;
    big.c.dq = 16;
    big.c.dk = 8;
    big.c.dv = 4;
    big.c.causal = true;
    big.bins = 37;
    addBoth("T=1100 causal, N=37", big);
    big.c.fill = MaskFill::NegLarge;
    addBoth("T=1100 causal, -1e9", big);
    big.c.causal = false;
    big.c.fill = MaskFill::NegInf;
    big.paddedFrom = 512;
    big.paddedTo = 1024; // one whole key tile padded: skipped
    addBoth("T=1100, a padded key tile", big);
    big.c.fill = MaskFill::NegLarge;
    addBoth("T=1100, a padded key tile, -1e9", big);
    big.paddedFrom = 0;
    big.paddedTo = 1100; // every key padded: every row empty
    addBoth("T=1100, every key padded, -1e9", big);
    big.c.fill = MaskFill::NegInf;
    addBoth("T=1100, every key padded, -inf", big);
    big = base;
    big.c.mode = AttentionMode::Cross;
    big.c.tq = 600;
    big.c.tk = 1300;
    big.c.dq = 8;
    big.c.dkv = 12;
    big.c.dk = 8;
    big.c.dv = 3;
    big.c.custom = true;
    big.bins = 128;
    addBoth("cross T=600 x 1300, custom mask, N=128", big);
    big.c.custom = false;
    big.c.causal = true;
    big.c.inputScale = 3.0; // logits of tens: row maxima move from tile to tile
    addBoth("cross causal, large logits", big);

    // design.md's "Modern attention": grouped K/V, RoPE, windows (whole key tiles outside them
    // skipped), soft-caps and sinks, alone and together.
    PoolCase modern = base;
    modern.c.heads = 4;
    modern.c.dk = 4;
    modern.c.kvHeads = 2;
    addBoth("grouped-query, 2 key/value heads", modern);
    modern.c.kvHeads = 1;
    modern.c.rope = true;
    modern.c.sinks = true;
    addBoth("multi-query, RoPE, sinks", modern);
    modern.c.causal = true;
    modern.c.custom = true; // an empty row beside the sink
    modern.c.fill = MaskFill::NegLarge;
    addBoth("sinks, an empty row, -1e9", modern);
    modern = base;
    modern.c.window = 3;
    modern.c.causal = true;
    modern.c.softcap = 0.8;
    modern.c.inputScale = 2.0;
    addBoth("causal window 3, soft-cap", modern);
    PoolCase longWindow = big;
    longWindow.c = Case{};
    longWindow.c.tq = 1300;
    longWindow.c.dq = 8;
    longWindow.c.heads = 4;
    longWindow.c.kvHeads = 2;
    longWindow.c.dk = 8;
    longWindow.c.dv = 3;
    longWindow.c.causal = true;
    longWindow.c.window = 300; // keys before the window: whole tiles skipped
    longWindow.c.rope = true;
    longWindow.c.sinks = true;
    longWindow.c.softcap = 4.0;
    longWindow.bins = 64;
    addBoth("T=1300 causal window 300, RoPE, grouped, sinks, soft-cap", longWindow);
    longWindow.c.fill = MaskFill::NegLarge;
    addBoth("T=1300 causal window 300, everything, -1e9", longWindow);
    longWindow.c.fill = MaskFill::NegInf;
    longWindow.c.queryPositions.resize(1300);
    for (size_t i = 0; i < 1300; ++i) // positions with gaps: the window compares positions
        longWindow.c.queryPositions[i] = std::int64_t(i * 2 + (i > 650 ? 1000 : 0));
    addBoth("T=1300, RoPE positions with a gap, window by position", longWindow);
}

void TestPooled::matchesPooledReference()
{
    QFETCH(PoolCase, pc);
    AttentionProblem p = makeProblem(pc.c);
    if (pc.paddedFrom >= 0) {
        p.mask.keyPadding.assign(size_t(p.tk()), true);
        for (Eigen::Index j = pc.paddedFrom; j < pc.paddedTo; ++j)
            p.mask.keyPadding[size_t(j)] = false;
    }
    PoolOptions options;
    options.bins = pc.bins;
    options.mode = pc.mode;
    auto ref = referencePooled(p, options);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
    for (int threads : {1, 2}) {
        options.threads = threads;
        auto got = computePooledCpu(p, options);
        QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
        QCOMPARE(got->pooled.size(), size_t(pc.c.heads));
        const Eigen::Index nq = std::min<Eigen::Index>(pc.bins, p.tq()), nk = std::min<Eigen::Index>(pc.bins, p.tk());
        for (int h = 0; h < pc.c.heads; ++h) {
            QCOMPARE(got->pooled[size_t(h)].rows(), nq);
            QCOMPARE(got->pooled[size_t(h)].cols(), nk);
            const std::string diff = test::compareMatrix("pooled", got->pooled[size_t(h)], ref->pooled[size_t(h)],
                                                         test::Tolerance::weights());
            QVERIFY2(diff.empty(), ("head " + std::to_string(h) + ": " + diff).c_str());
        }
        std::string diff = test::compareMatrix("entropy", got->entropy, ref->entropy, test::Tolerance::values());
        QVERIFY2(diff.empty(), diff.c_str());
        diff = test::compareMatrix("output", got->output, ref->output, test::Tolerance::values());
        QVERIFY2(diff.empty(), diff.c_str());
    }
}

// The reference pooling itself, on a matrix whose pooled values are known by hand.
void TestPooled::poolWeightsByHand()
{
    MatrixD w(3, 5);
    w << 0.1, 0.2, 0.3, 0.4, 0.0, //
        0.5, 0.0, 0.0, 0.0, 0.5,  //
        0.2, 0.2, 0.2, 0.2, 0.2;
    // Nq = 2: rows [0,1) and [1,3); Nk = 2: keys [0,2) and [2,5).
    const MatrixD max = poolWeights(w, 2, PoolMode::Max);
    QCOMPARE(max(0, 0), 0.2);
    QCOMPARE(max(0, 1), 0.4);
    QCOMPARE(max(1, 0), 0.5);
    QCOMPARE(max(1, 1), 0.5);
    const MatrixD mean = poolWeights(w, 2, PoolMode::Mean);
    QVERIFY(std::abs(mean(0, 0) - 0.15) < 1e-15);
    QVERIFY(std::abs(mean(0, 1) - 0.7 / 3) < 1e-15);
    QVERIFY(std::abs(mean(1, 0) - 0.9 / 4) < 1e-15);
    QVERIFY(std::abs(mean(1, 1) - 1.1 / 6) < 1e-15);
    QCOMPARE(poolWeights(w, 10, PoolMode::Max), w); // more bins than rows: the matrix itself
}

void TestPooled::binsBelowOneAreRefused()
{
    const AttentionProblem p = makeProblem(Case{});
    PoolOptions options;
    options.bins = 0;
    auto got = computePooledCpu(p, options);
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::InvalidInput);
    QVERIFY2(got.message().find("pool") != std::string::npos, got.message().c_str());
}

// Under a memory limit, a pooled request is refused before allocating, naming what it needs.
void TestPooled::tooLargeIsRefusedWithTheSize()
{
    Case c;
    c.tq = 2000;
    c.dq = 64;
    c.heads = 4;
    c.dk = 16;
    c.dv = 16;
    const AttentionProblem p = makeProblem(c);
    PoolOptions options;
    options.bins = 2000; // 4 x 2000 x 2000 floats = 61 MiB of pooled maps
    qputenv("ATTNSCOPE_MEMORY_LIMIT", "16M");
    auto got = computePooledCpu(p, options);
    qunsetenv("ATTNSCOPE_MEMORY_LIMIT");
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::TooLarge);
    QVERIFY2(got.message().find("MiB") != std::string::npos, got.message().c_str());
    QVERIFY(pooledBytes(p, options) > 4 * 2000 * 2000 * 4);
}

void TestPooled::backendDefaultRunsTheCpuEngine()
{
    Case c;
    c.tq = 9;
    const AttentionProblem p = makeProblem(c);
    PoolOptions options;
    options.bins = 3;
    CpuBackend cpu;
    AttentionBackend &backend = cpu;
    auto got = backend.computePooled(p, options);
    auto direct = computePooledCpu(p, options);
    QVERIFY(got.ok() && direct.ok());
    QCOMPARE(got->pooled[0], direct->pooled[0]);
    QCOMPARE(got->output, direct->output);
}

QTEST_GUILESS_MAIN(TestPooled)
#include "tst_pooled.moc"
