// Attention from queries and keys (design.md, "Contract: attention from queries and keys"): the
// float engines of core/attention/QkAttention.h (computePooledQk, qkWeightsBlock, qkLogSumExp)
// against the double references taken straight from the definition, on hand-built random layers
// (MHA, GQA, MQA, causal or not, windows, soft-caps, sinks, offset and gapped positions, Tq != Tk,
// several query blocks and key tiles), and qkLayerOf against the problem engine it stands for.

#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"

#include "core/attention/PooledAttention.h"
#include "core/attention/QkAttention.h"
#include "core/attention/RandomProblem.h"
#include "core/attention/ReferenceAttention.h"

#include <QObject>
#include <QTest>

#include <atomic>
#include <cmath>
#include <limits>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

namespace {

// A layer's shape and facts; q and k drawn from the seed.
struct LayerCase {
    Eigen::Index tq = 12, tk = 12;
    int heads = 2, kvHeads = 2, headDim = 8;
    double scale = 0.0; // 0: 1/sqrt(hd)
    double inputScale = 1.0;
    bool causal = false;
    std::int64_t window = 0;
    double softcap = 0.0;
    bool sinks = false;
    std::int64_t queryOffset = 0; // > 0: query i at position queryOffset + i (keys at 0..Tk-1)
    bool gaps = false;            // positions 3i and 3j + (j % 2): gaps, keys between queries
    bool reversedKeys = false;    // keys at Tk-1, ..., 0: positions out of order
    std::int64_t bins = 5;
    PoolMode mode = PoolMode::Max;
    bool headMean = false;
    std::uint64_t seed = 7;
};

QkLayer makeLayer(const LayerCase &c)
{
    QkLayer l;
    l.heads = c.heads;
    l.kvHeads = c.kvHeads;
    l.headDim = c.headDim;
    l.scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(c.headDim));
    l.causal = c.causal;
    l.window = c.window;
    if (c.softcap > 0)
        l.softcap = c.softcap;
    if (c.sinks)
        l.sinks = VectorF(initMatrix(1, c.heads, InitKind::Gaussian, c.seed + 2, 1.5).row(0));
    if (c.queryOffset > 0)
        for (Eigen::Index i = 0; i < c.tq; ++i)
            l.queryPositions.push_back(c.queryOffset + i);
    if (c.gaps) {
        for (Eigen::Index i = 0; i < c.tq; ++i)
            l.queryPositions.push_back(3 * i);
        for (Eigen::Index j = 0; j < c.tk; ++j)
            l.keyPositions.push_back(3 * j + j % 2);
    }
    if (c.reversedKeys)
        for (Eigen::Index j = 0; j < c.tk; ++j)
            l.keyPositions.push_back(c.tk - 1 - j);
    l.q = initMatrix(c.tq, Eigen::Index(c.heads) * c.headDim, InitKind::Gaussian, c.seed, c.inputScale);
    l.k = initMatrix(c.tk, Eigen::Index(c.kvHeads) * c.headDim, InitKind::Gaussian, c.seed + 1, c.inputScale);
    return l;
}

PoolOptions optionsOf(const LayerCase &c)
{
    PoolOptions options;
    options.bins = c.bins;
    options.mode = c.mode;
    options.headMean = c.headMean;
    return options;
}

// The brief's tolerances: weights (and pooled weights) within 1e-5, entropies within 1e-4.
const test::Tolerance kWeights{1e-5, 1e-4};
const test::Tolerance kEntropy{1e-4, 1e-4};

// Empty when the engine's pooled result matches the reference: every head, the head mean when
// asked, the entropies when the engine gives them (every key pooled) and only then.
template <typename Got, typename Ref>
std::string comparePooled(const Got &got, const Ref &ref, bool headMean, bool allKeys)
{
    if (got.pooled.size() != ref.pooled.size())
        return "pooled: " + std::to_string(got.pooled.size()) + " heads, expected " + std::to_string(ref.pooled.size());
    for (size_t h = 0; h < ref.pooled.size(); ++h)
        if (auto m = test::compareMatrix(("pooled head " + std::to_string(h)).c_str(), got.pooled[h], ref.pooled[h],
                                         kWeights);
            !m.empty())
            return m;
    if (headMean)
        if (auto m = test::compareMatrix("headMean", got.headMean, ref.headMean, kWeights); !m.empty())
            return m;
    if (!headMean && got.headMean.size() != 0)
        return "headMean given though not asked for";
    if (!allKeys)
        return got.entropy.size() == 0 ? std::string() : "entropy given for a partial key range";
    return test::compareMatrix("entropy", got.entropy, ref.entropy, kEntropy);
}

void addBothModes(const char *name, LayerCase c)
{
    c.mode = PoolMode::Max;
    QTest::newRow((std::string(name) + ", max").c_str()) << c;
    c.mode = PoolMode::Mean;
    QTest::newRow((std::string(name) + ", mean").c_str()) << c;
}

std::string messageOf(const Status &s)
{
    return s ? std::string() : s.error().message;
}

} // namespace

Q_DECLARE_METATYPE(LayerCase)

class TestQkAttention : public QObject
{
    Q_OBJECT

private slots:
    void pooledMatchesReference_data();
    void pooledMatchesReference();
    void zoomedBlockMatchesReference_data();
    void zoomedBlockMatchesReference();
    void weightsBlockMatchesReference_data();
    void weightsBlockMatchesReference();
    void weightsBlockFarFromTheDiagonalIsZero();
    void logSumExpMatchesReference_data();
    void logSumExpMatchesReference();
    void emptyRowsWeighNothing();
    void cancelReturnsCancelled();
    void tooLargeIsRefused();
    void invalidLayerAndRangesAreRefused();
    void progressCountsEveryTask();
    void layerOfProblemMatchesProblemEngine_data();
    void layerOfProblemMatchesProblemEngine();
    void layerOfProblemRefusesWhatItCannotSay();
    void longLayerMatchesStreamingReference();
};

void TestQkAttention::pooledMatchesReference_data()
{
    QTest::addColumn<LayerCase>("c");
    LayerCase base;
    addBothModes("MHA", base);
    LayerCase c = base;
    c.heads = 6;
    c.kvHeads = 2;
    addBothModes("GQA 6/2", c);
    c.causal = true;
    addBothModes("GQA 6/2, causal", c);
    c = base;
    c.heads = 4;
    c.kvHeads = 1;
    c.causal = true;
    c.window = 4;
    addBothModes("MQA, causal window 4", c);
    c = base;
    c.window = 3; // a window without causality: keys ahead of the query stay allowed
    addBothModes("window 3, not causal", c);
    c = base;
    c.softcap = 1.5;
    c.inputScale = 3.0;
    c.causal = true;
    addBothModes("soft-cap 1.5, large logits", c);
    c = base;
    c.sinks = true;
    c.causal = true;
    addBothModes("sinks (rows sum below 1)", c);
    c = base;
    c.tq = 9;
    c.tk = 23;
    c.queryOffset = 14; // queries at 14..22 against keys 0..22
    c.causal = true;
    addBothModes("Tq != Tk, offset query positions", c);
    c = base;
    c.tq = 10;
    c.tk = 17;
    c.gaps = true;
    c.causal = true;
    c.window = 7;
    c.sinks = true;
    addBothModes("positions with gaps, window 7 by position, sinks", c);
    c = base;
    c.heads = 6;
    c.kvHeads = 2;
    c.causal = true;
    c.softcap = 2.0;
    c.sinks = true;
    c.headMean = true;
    addBothModes("head mean, GQA, soft-cap, sinks", c);
    c.bins = 40; // more bins than tokens: the weights themselves
    addBothModes("head mean, N > T", c);
    // Several query blocks and key tiles (512 keys): tiles before the window skipped.
    LayerCase big;
    big.tq = 700;
    big.tk = 1300;
    big.queryOffset = 600; // queries at 600..1299, the last 700 keys' positions
    big.heads = 4;
    big.kvHeads = 2;
    big.headDim = 16;
    big.causal = true;
    big.window = 300;
    big.sinks = true;
    big.softcap = 5.0;
    big.inputScale = 1.5;
    big.bins = 37;
    big.headMean = true;
    addBothModes("Tq 700 x Tk 1300, offset, window 300, GQA, sinks, soft-cap", big);
    big.window = 0;
    big.softcap = 0.0;
    big.headMean = false;
    big.sinks = false;
    big.queryOffset = 0; // queries at 0..699: later keys masked by causality, whole tiles skipped
    addBothModes("Tq 700 x Tk 1300, causal, queries before most keys", big);
    big.reversedKeys = true; // the same keys stored last to first
    big.window = 200;
    addBothModes("Tq 700 x Tk 1300, causal window 200, keys stored in reverse", big);
}

void TestQkAttention::pooledMatchesReference()
{
    QFETCH(LayerCase, c);
    const QkLayer l = makeLayer(c);
    QVERIFY2(validateQkLayer(l), messageOf(validateQkLayer(l)).c_str());
    PoolOptions options = optionsOf(c);
    const PooledReference ref = referencePooledQk(l, options);
    for (int threads : {1, 2}) {
        options.threads = threads;
        auto got = computePooledQk(l, options);
        QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
        QCOMPARE(got->pooled[0].rows(), std::min<Eigen::Index>(c.bins, c.tq));
        QCOMPARE(got->pooled[0].cols(), std::min<Eigen::Index>(c.bins, c.tk));
        QCOMPARE(got->output.size(), Eigen::Index(0));
        const std::string diff = comparePooled(*got, ref, c.headMean, true);
        QVERIFY2(diff.empty(), ("threads " + std::to_string(threads) + ": " + diff).c_str());
    }
}

void TestQkAttention::zoomedBlockMatchesReference_data()
{
    QTest::addColumn<LayerCase>("c");
    QTest::addColumn<std::int64_t>("q0");
    QTest::addColumn<std::int64_t>("q1");
    QTest::addColumn<std::int64_t>("k0");
    QTest::addColumn<std::int64_t>("k1");
    LayerCase c;
    c.tq = 600;
    c.tk = 1100;
    c.queryOffset = 500;
    c.heads = 3;
    c.kvHeads = 1;
    c.headDim = 8;
    c.causal = true;
    c.sinks = true;
    c.bins = 16;
    c.headMean = true;
    QTest::newRow("rows [100, 350), every key")
        << c << std::int64_t(100) << std::int64_t(350) << std::int64_t(0) << std::int64_t(-1);
    QTest::newRow("rows [0, 600), keys [300, 1000)")
        << c << std::int64_t(0) << std::int64_t(-1) << std::int64_t(300) << std::int64_t(1000);
    c.mode = PoolMode::Mean;
    c.window = 200;
    QTest::newRow("window 200, mean, rows [250, 260), keys [700, 1100)")
        << c << std::int64_t(250) << std::int64_t(260) << std::int64_t(700) << std::int64_t(1100);
    QTest::newRow("window 200, mean, one row, keys [0, 513)")
        << c << std::int64_t(599) << std::int64_t(600) << std::int64_t(0) << std::int64_t(513);
}

void TestQkAttention::zoomedBlockMatchesReference()
{
    QFETCH(LayerCase, c);
    QFETCH(std::int64_t, q0);
    QFETCH(std::int64_t, q1);
    QFETCH(std::int64_t, k0);
    QFETCH(std::int64_t, k1);
    const QkLayer l = makeLayer(c);
    PoolOptions options = optionsOf(c);
    options.queryBegin = q0;
    options.queryEnd = q1;
    options.keyBegin = k0;
    options.keyEnd = k1;
    const PooledReference ref = referencePooledQk(l, options);
    auto got = computePooledQk(l, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const Eigen::Index rows = (q1 < 0 ? c.tq : q1) - q0, keys = (k1 < 0 ? c.tk : k1) - k0;
    QCOMPARE(got->pooled[0].rows(), std::min<Eigen::Index>(c.bins, rows));
    QCOMPARE(got->pooled[0].cols(), std::min<Eigen::Index>(c.bins, keys));
    const bool allKeys = keys == c.tk;
    if (allKeys)
        QCOMPARE(got->entropy.cols(), rows);
    const std::string diff = comparePooled(*got, ref, c.headMean, allKeys);
    QVERIFY2(diff.empty(), diff.c_str());

    // The reference's block is the full reference's: pooling the whole map's weights over the
    // block directly gives the same cells (one head, max).
    const MatrixD w = referenceQkWeights(makeLayer(c))[1].block(q0, k0, rows, keys);
    const MatrixD direct = poolWeights(w, c.bins, c.mode);
    QVERIFY2(test::compareMatrix("direct", direct, ref.pooled[1], test::Tolerance{1e-12, 1e-9}).empty(),
             "the streaming reference's block differs from the full reference's");
}

void TestQkAttention::weightsBlockMatchesReference_data()
{
    QTest::addColumn<LayerCase>("c");
    QTest::addColumn<int>("head");
    QTest::addColumn<std::int64_t>("q0");
    QTest::addColumn<std::int64_t>("q1");
    QTest::addColumn<std::int64_t>("k0");
    QTest::addColumn<std::int64_t>("k1");
    LayerCase c;
    c.tq = 40;
    c.tk = 40;
    c.heads = 6;
    c.kvHeads = 2;
    c.causal = true;
    QTest::newRow("whole map, GQA causal")
        << c << 5 << std::int64_t(0) << std::int64_t(40) << std::int64_t(0) << std::int64_t(40);
    QTest::newRow("a sub-block across the diagonal")
        << c << 2 << std::int64_t(10) << std::int64_t(25) << std::int64_t(5) << std::int64_t(30);
    c.sinks = true;
    c.softcap = 2.0;
    c.window = 9;
    QTest::newRow("window 9, sinks, soft-cap")
        << c << 3 << std::int64_t(20) << std::int64_t(40) << std::int64_t(10) << std::int64_t(40);
    LayerCase big;
    big.tq = 300;
    big.tk = 1200;
    big.queryOffset = 900;
    big.heads = 4;
    big.kvHeads = 1;
    big.headDim = 16;
    big.causal = true;
    big.sinks = true;
    big.inputScale = 1.5;
    QTest::newRow("MQA, offset queries, block across key tiles")
        << big << 3 << std::int64_t(100) << std::int64_t(260) << std::int64_t(400) << std::int64_t(1150);
    QTest::newRow("a block far from the diagonal (first keys, last rows)")
        << big << 0 << std::int64_t(280) << std::int64_t(300) << std::int64_t(0) << std::int64_t(64);
    big.causal = false;
    big.gaps = true;
    big.queryOffset = 0;
    big.tq = 200;
    QTest::newRow("positions with gaps, not causal, one row")
        << big << 1 << std::int64_t(199) << std::int64_t(200) << std::int64_t(0) << std::int64_t(1200);
}

void TestQkAttention::weightsBlockMatchesReference()
{
    QFETCH(LayerCase, c);
    QFETCH(int, head);
    QFETCH(std::int64_t, q0);
    QFETCH(std::int64_t, q1);
    QFETCH(std::int64_t, k0);
    QFETCH(std::int64_t, k1);
    const QkLayer l = makeLayer(c);
    const MatrixD ref = referenceQkWeights(l)[size_t(head)].block(q0, k0, q1 - q0, k1 - k0);
    auto got = qkWeightsBlock(l, head, q0, q1, k0, k1);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const std::string diff = test::compareMatrix("weights", *got, ref, kWeights);
    QVERIFY2(diff.empty(), diff.c_str());
    // Masked weights are exactly 0.
    for (Eigen::Index r = 0; r < ref.rows(); ++r)
        for (Eigen::Index j = 0; j < ref.cols(); ++j)
            if (!l.allowed(q0 + r, k0 + j))
                QCOMPARE((*got)(r, j), 0.0f);
    QVERIFY(ref.maxCoeff() > 0.0 || c.window > 0);
}

// Keys a window has left behind: the block is all zeros, exactly, and the rows still normalise
// over their own keys (their other block is the reference's).
void TestQkAttention::weightsBlockFarFromTheDiagonalIsZero()
{
    LayerCase c;
    c.tq = 1000;
    c.tk = 1000;
    c.heads = 2;
    c.causal = true;
    c.window = 100;
    c.sinks = true;
    const QkLayer l = makeLayer(c);
    auto masked = qkWeightsBlock(l, 1, 900, 1000, 0, 600);
    QVERIFY2(masked.ok(), masked.ok() ? "" : masked.message().c_str());
    QCOMPARE(masked->rows(), Eigen::Index(100));
    QCOMPARE(masked->cols(), Eigen::Index(600));
    QVERIFY(masked->isZero(0.0f));
    auto near = qkWeightsBlock(l, 1, 900, 1000, 800, 1000);
    QVERIFY(near.ok());
    const std::vector<MatrixD> ref = referenceQkWeights(l);
    const std::string diff = test::compareMatrix("near", *near, ref[1].block(900, 800, 100, 200), kWeights);
    QVERIFY2(diff.empty(), diff.c_str());
    // With a sink every row sums below 1.
    for (Eigen::Index r = 0; r < near->rows(); ++r)
        QVERIFY(near->row(r).sum() < 1.0f);
}

void TestQkAttention::logSumExpMatchesReference_data()
{
    QTest::addColumn<LayerCase>("c");
    LayerCase c;
    c.tq = 30;
    c.tk = 30;
    c.heads = 4;
    c.kvHeads = 2;
    c.causal = true;
    QTest::newRow("GQA causal") << c;
    c.sinks = true;
    c.softcap = 3.0;
    c.window = 5;
    c.inputScale = 2.0;
    QTest::newRow("sinks, soft-cap, window") << c;
    LayerCase big;
    big.tq = 300;
    big.tk = 1100;
    big.queryOffset = 800;
    big.heads = 2;
    big.kvHeads = 1;
    big.causal = true;
    big.window = 600;
    QTest::newRow("offset queries over several key tiles, window 600") << big;
}

void TestQkAttention::logSumExpMatchesReference()
{
    QFETCH(LayerCase, c);
    const QkLayer l = makeLayer(c);
    auto got = qkLogSumExp(l);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const MatrixD ref = referenceQkLogSumExp(l);
    const std::string diff = test::compareMatrix("lse", *got, ref, test::Tolerance{1e-5, 1e-5});
    QVERIFY2(diff.empty(), diff.c_str());
}

// Rows with no allowed key: lse -inf and a zero row without a sink; the sink alone with one.
void TestQkAttention::emptyRowsWeighNothing()
{
    LayerCase c;
    c.tq = 8;
    c.tk = 8;
    c.bins = 8;
    c.causal = true;
    QkLayer l = makeLayer(c);
    l.keyPositions = {3, 4, 5, 6, 7, 8, 9, 10}; // queries 0..2 come before every key
    auto lse = qkLogSumExp(l);
    QVERIFY(lse.ok());
    for (int h = 0; h < l.heads; ++h) {
        for (Eigen::Index i = 0; i < 3; ++i)
            QCOMPARE((*lse)(h, i), -std::numeric_limits<float>::infinity());
        QVERIFY(std::isfinite((*lse)(h, 3)));
    }
    auto pooled = computePooledQk(l, optionsOf(c));
    QVERIFY(pooled.ok());
    QVERIFY(pooled->pooled[0].topRows(3).isZero(0.0f));
    QVERIFY(pooled->entropy.leftCols(3).isZero(0.0f));
    const std::string diff = comparePooled(*pooled, referencePooledQk(l, optionsOf(c)), false, true);
    QVERIFY2(diff.empty(), diff.c_str());
    auto block = qkWeightsBlock(l, 0, 0, 4, 0, 8);
    QVERIFY(block.ok());
    QVERIFY(block->topRows(3).isZero(0.0f));
    QCOMPARE(block->row(3).sum(), 1.0f); // one allowed key, no sink

    l.sinks = VectorF::Constant(l.heads, 0.25f);
    lse = qkLogSumExp(l);
    QVERIFY(lse.ok());
    QCOMPARE((*lse)(1, 0), 0.25f); // the sink alone
    const std::string lseDiff = test::compareMatrix("lse", *lse, referenceQkLogSumExp(l), test::Tolerance{1e-5, 1e-5});
    QVERIFY2(lseDiff.empty(), lseDiff.c_str());
}

void TestQkAttention::cancelReturnsCancelled()
{
    LayerCase c;
    c.tq = 600;
    c.tk = 600;
    const QkLayer l = makeLayer(c);
    const std::atomic<bool> cancel{true};
    PoolOptions options = optionsOf(c);
    options.cancel = &cancel;
    auto pooled = computePooledQk(l, options);
    QVERIFY(!pooled.ok());
    QCOMPARE(pooled.kind(), ErrorKind::Cancelled);
    auto block = qkWeightsBlock(l, 0, 0, 600, 0, 600, &cancel);
    QVERIFY(!block.ok());
    QCOMPARE(block.kind(), ErrorKind::Cancelled);
    auto lse = qkLogSumExp(l, &cancel);
    QVERIFY(!lse.ok());
    QCOMPARE(lse.kind(), ErrorKind::Cancelled);
    const std::atomic<bool> go{false};
    QVERIFY(qkLogSumExp(l, &go).ok());
}

void TestQkAttention::tooLargeIsRefused()
{
    LayerCase c;
    c.tq = 2000;
    c.tk = 2000;
    c.heads = 4;
    c.kvHeads = 2;
    c.headDim = 16;
    const QkLayer l = makeLayer(c);
    PoolOptions options;
    options.bins = 2000; // 4 x 2000 x 2000 floats = 61 MiB of pooled cells
    QVERIFY(pooledQkBytes(l, options) > 4 * 2000 * 2000 * 4);
    // q and k counted once each: K is KV·hd wide.
    PoolOptions small;
    small.bins = 1;
    small.threads = 1;
    LayerCase mha = c;
    mha.kvHeads = 4;
    QCOMPARE(pooledQkBytes(makeLayer(mha), small) - pooledQkBytes(l, small), std::int64_t(2000 * 2 * 16 * 4));
    qputenv("ATTNSCOPE_MEMORY_LIMIT", "16M");
    auto got = computePooledQk(l, options);
    qunsetenv("ATTNSCOPE_MEMORY_LIMIT");
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::TooLarge);
    QVERIFY2(got.message().find("MiB") != std::string::npos, got.message().c_str());
}

void TestQkAttention::invalidLayerAndRangesAreRefused()
{
    LayerCase c;
    QkLayer l = makeLayer(c);
    l.kvHeads = 3; // does not divide 2
    auto got = computePooledQk(l, PoolOptions{});
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::InvalidInput);
    QVERIFY2(got.message().find("kvHeads") != std::string::npos, got.message().c_str());
    QVERIFY(!qkLogSumExp(l).ok());
    QVERIFY(!qkWeightsBlock(l, 0, 0, 1, 0, 1).ok());

    l = makeLayer(c);
    PoolOptions options;
    options.queryBegin = 5;
    options.queryEnd = 13; // Tq is 12
    got = computePooledQk(l, options);
    QVERIFY(!got.ok());
    QVERIFY2(got.message().find("12 x 12") != std::string::npos, got.message().c_str());
    options = PoolOptions{};
    options.bins = 0;
    QVERIFY(!computePooledQk(l, options).ok());
    for (auto block :
         {qkWeightsBlock(l, 2, 0, 1, 0, 1), qkWeightsBlock(l, 0, 3, 3, 0, 1), qkWeightsBlock(l, 0, 0, 1, 0, 13)}) {
        QVERIFY(!block.ok());
        QCOMPARE(block.kind(), ErrorKind::InvalidInput);
        QVERIFY(block.message().find('\n') == std::string::npos);
    }
}

void TestQkAttention::progressCountsEveryTask()
{
    LayerCase c;
    c.tq = 500;
    c.tk = 500;
    c.heads = 3;
    c.kvHeads = 1;
    const QkLayer l = makeLayer(c);
    PoolProgress progress;
    PoolOptions options = optionsOf(c);
    options.progress = &progress;
    QVERIFY(computePooledQk(l, options).ok());
    QVERIFY(progress.total > 0);
    QCOMPARE(progress.done.load(), progress.total.load());
}

void TestQkAttention::layerOfProblemMatchesProblemEngine_data()
{
    QTest::addColumn<Case>("pc");
    QTest::addColumn<bool>("headMean");
    QTest::addColumn<std::int64_t>("queryBegin");
    Case c;
    c.tq = 300;
    c.dq = 24;
    c.heads = 6;
    c.kvHeads = 2;
    c.dk = 8;
    c.dv = 4;
    c.biases = true;
    c.rope = true;
    c.qkNorm = true;
    c.softcap = 3.0;
    c.sinks = true;
    c.causal = true;
    c.window = 70;
    c.inputScale = 1.5;
    QTest::newRow("RoPE, q/k norms, GQA, soft-cap, sinks, window") << c << false << std::int64_t(0);
    QTest::newRow("... head mean, rows from 130") << c << true << std::int64_t(130);
    c.queryPositions.resize(300);
    for (size_t i = 0; i < 300; ++i) // RoPE positions from 1000, with a gap
        c.queryPositions[i] = std::int64_t(1000 + i + (i >= 150 ? 40 : 0));
    QTest::newRow("... RoPE positions from 1000 with a gap") << c << false << std::int64_t(0);
    Case cross;
    cross.mode = AttentionMode::Cross;
    cross.tq = 50;
    cross.tk = 700;
    cross.dq = 12;
    cross.dkv = 10;
    cross.heads = 4;
    cross.kvHeads = 1;
    cross.dk = 6;
    cross.dv = 3;
    cross.scaleMode = ScaleMode::Custom;
    cross.scaleValue = 0.3;
    QTest::newRow("cross, MQA, Tq 50 x Tk 700, scale 0.3") << cross << true << std::int64_t(0);
}

void TestQkAttention::layerOfProblemMatchesProblemEngine()
{
    QFETCH(Case, pc);
    QFETCH(bool, headMean);
    QFETCH(std::int64_t, queryBegin);
    const AttentionProblem p = makeProblem(pc);
    auto l = qkLayerOf(p);
    QVERIFY2(l.ok(), l.ok() ? "" : l.message().c_str());
    QVERIFY2(validateQkLayer(*l), messageOf(validateQkLayer(*l)).c_str());
    QCOMPARE(l->heads, pc.heads);
    QCOMPARE(l->kvHeads, pc.kvHeads > 0 ? pc.kvHeads : pc.heads);
    QCOMPARE(l->scale, p.spec.scale());
    QCOMPARE(l->queryPositions.empty(), pc.queryPositions.empty());

    PoolOptions options;
    options.bins = 23;
    options.headMean = headMean;
    options.queryBegin = queryBegin;
    auto fromQk = computePooledQk(*l, options);
    QVERIFY2(fromQk.ok(), fromQk.ok() ? "" : fromQk.message().c_str());
    auto fromProblem = computePooledCpu(p, options);
    QVERIFY2(fromProblem.ok(), fromProblem.ok() ? "" : fromProblem.message().c_str());
    const std::string diff = comparePooled(*fromQk, *fromProblem, headMean, true);
    QVERIFY2(diff.empty(), diff.c_str());

    // And the layer's exact weights are the problem's double reference weights.
    auto trace = referenceAttention(p);
    QVERIFY(trace.ok());
    const std::vector<MatrixD> weights = referenceQkWeights(*l);
    for (int h = 0; h < pc.heads; ++h) {
        const std::string w = test::compareMatrix(("weights head " + std::to_string(h)).c_str(), weights[size_t(h)],
                                                  trace->weights[size_t(h)], kWeights);
        QVERIFY2(w.empty(), w.c_str());
    }
}

void TestQkAttention::layerOfProblemRefusesWhatItCannotSay()
{
    Case c;
    c.tq = 5;
    c.custom = true;
    auto got = qkLayerOf(makeProblem(c));
    QVERIFY(!got.ok());
    QCOMPARE(got.kind(), ErrorKind::InvalidInput);
    QVERIFY2(got.message().find("custom mask") != std::string::npos, got.message().c_str());
    c = Case{};
    c.padding = true;
    got = qkLayerOf(makeProblem(c));
    QVERIFY(!got.ok());
    QVERIFY2(got.message().find("padding") != std::string::npos, got.message().c_str());
    c = Case{};
    c.causal = true;
    c.fill = MaskFill::NegLarge;
    got = qkLayerOf(makeProblem(c));
    QVERIFY(!got.ok());
    QVERIFY2(got.message().find("-1e9") != std::string::npos, got.message().c_str());
    // Key padding that pads nothing says nothing: accepted.
    AttentionProblem p = makeProblem(Case{});
    p.mask.keyPadding.assign(size_t(p.tk()), true);
    QVERIFY(qkLayerOf(p).ok());
}

// Large T (64-bit offsets into q, k and the bins; many key tiles and query blocks) against the
// streaming reference, which never holds Tq x Tk.
void TestQkAttention::longLayerMatchesStreamingReference()
{
    LayerCase c;
    c.tq = 4096;
    c.tk = 4096;
    c.heads = 4;
    c.kvHeads = 2;
    c.headDim = 16;
    c.causal = true;
    c.window = 3000;
    c.sinks = true;
    c.bins = 100;
    c.headMean = true;
    const QkLayer l = makeLayer(c);
    const PoolOptions options = optionsOf(c);
    const PooledReference ref = referencePooledQk(l, options);
    auto got = computePooledQk(l, options);
    QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
    const std::string diff = comparePooled(*got, ref, true, true);
    QVERIFY2(diff.empty(), diff.c_str());
}

QTEST_APPLESS_MAIN(TestQkAttention)
#include "tst_qkattention.moc"
