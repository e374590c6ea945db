// The pooled path restricted to a block of the full problem (the GUI's zoom: query rows
// [q0, q1) against keys [k0, k1), weights normalised over all keys) against pooling the same
// block of the double reference weights, and the pooled head mean against averaging the
// reference's heads, then pooling; cancellation and progress of a long pooled compute.

#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"

#include "core/attention/PooledAttention.h"
#include "core/attention/ReferenceAttention.h"

#include <QObject>
#include <QTest>

#include <thread>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

struct BlockCase {
    Case c;
    std::int64_t bins = 7;
    PoolMode mode = PoolMode::Max;
    std::int64_t q0 = 0, q1 = -1, k0 = 0, k1 = -1;
};
Q_DECLARE_METATYPE(BlockCase)

class TestPooledBlock : public QObject
{
    Q_OBJECT

private slots:
    void blockMatchesReference_data();
    void blockMatchesReference();
    void blockOutsideTheProblemIsRefused();
    void progressReachesTheTotal();
    void cancelReturnsCancelled();
};

void TestPooledBlock::blockMatchesReference_data()
{
    QTest::addColumn<BlockCase>("bc");
    BlockCase base;
    base.c.tq = 700; // spans several query blocks and key tiles; 700 is not divisible by the bins
    base.c.dq = 8;
    base.c.heads = 3; // three heads: the max of their mean differs from the mean of their maxima
    base.c.dk = 4;
    base.c.dv = 4;
    base.c.causal = true;
    for (PoolMode mode : {PoolMode::Max, PoolMode::Mean}) {
        const char *m = mode == PoolMode::Max ? "max" : "mean";
        BlockCase b = base;
        b.mode = mode;
        b.q0 = 123, b.q1 = 611, b.k0 = 50, b.k1 = 650;
        b.bins = 13;
        QTest::newRow(qPrintable(QStringLiteral("causal, inner block, %1").arg(QLatin1String(m)))) << b;
        b.bins = 4096; // more bins than the block: its exact weights
        QTest::newRow(qPrintable(QStringLiteral("causal, exact block, %1").arg(QLatin1String(m)))) << b;
        b.k0 = 0, b.k1 = -1, b.bins = 9;
        QTest::newRow(qPrintable(QStringLiteral("causal, rows only, %1").arg(QLatin1String(m)))) << b;
        BlockCase whole = b;
        whole.q0 = 0, whole.q1 = -1, whole.bins = 233; // a few rows a bin, as in the GUI's first picture
        QTest::newRow(qPrintable(QStringLiteral("causal, whole problem, %1").arg(QLatin1String(m)))) << whole;
        b.q0 = 0, b.q1 = 5, b.k0 = 600, b.k1 = 700, b.bins = 3; // the causal mask hides it all
        QTest::newRow(qPrintable(QStringLiteral("causal, all masked, %1").arg(QLatin1String(m)))) << b;
        BlockCase x = base;
        x.mode = mode;
        x.c.mode = AttentionMode::Cross;
        x.c.causal = false;
        x.c.padding = true;
        x.c.tq = 333;
        x.c.tk = 1100;
        x.c.fill = MaskFill::NegLarge;
        x.q0 = 1, x.q1 = 332, x.k0 = 513, x.k1 = 1099, x.bins = 17;
        QTest::newRow(qPrintable(QStringLiteral("cross, padding, -1e9, %1").arg(QLatin1String(m)))) << x;
    }
}

void TestPooledBlock::blockMatchesReference()
{
    QFETCH(BlockCase, bc);
    const AttentionProblem p = makeProblem(bc.c);
    auto ref = referenceAttention(p);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
    PoolOptions options;
    options.bins = bc.bins;
    options.mode = bc.mode;
    options.queryBegin = bc.q0;
    options.queryEnd = bc.q1;
    options.keyBegin = bc.k0;
    options.keyEnd = bc.k1;
    const Eigen::Index q1 = bc.q1 < 0 ? p.tq() : bc.q1, k1 = bc.k1 < 0 ? p.tk() : bc.k1;
    // The head mean of the reference: average the heads' weights over the block, then pool.
    MatrixD average = MatrixD::Zero(q1 - bc.q0, k1 - bc.k0);
    for (const MatrixD &w : ref->weights)
        average += w.block(bc.q0, bc.k0, q1 - bc.q0, k1 - bc.k0) / double(p.spec.heads);
    const MatrixD expectedMean = poolWeights(average, bc.bins, bc.mode);
    for (auto [threads, headMean] : {std::pair{1, false}, {2, false}, {1, true}, {2, true}}) {
        options.threads = threads;
        options.headMean = headMean;
        auto got = computePooledCpu(p, options);
        QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
        for (int h = 0; h < p.spec.heads; ++h) {
            const MatrixD block = ref->weights[size_t(h)].block(bc.q0, bc.k0, q1 - bc.q0, k1 - bc.k0);
            const MatrixD expected = poolWeights(block, bc.bins, bc.mode);
            const std::string diff =
                test::compareMatrix("pooled block", got->pooled[size_t(h)], expected, test::Tolerance::weights());
            QVERIFY2(diff.empty(), ("head " + std::to_string(h) + ": " + diff).c_str());
        }
        if (headMean) {
            const std::string diff =
                test::compareMatrix("head mean", got->headMean, expectedMean, test::Tolerance::weights());
            QVERIFY2(diff.empty(), diff.c_str());
        } else {
            QCOMPARE(got->headMean.size(), Eigen::Index(0));
        }
        if (bc.k0 == 0 && bc.k1 < 0) { // every key: the block's rows of the output too
            const MatrixD output = ref->output.middleRows(bc.q0, q1 - bc.q0);
            const std::string diff = test::compareMatrix("output", got->output, output, test::Tolerance::values());
            QVERIFY2(diff.empty(), diff.c_str());
            QCOMPARE(got->entropy.cols(), q1 - bc.q0);
        } else {
            QCOMPARE(got->output.size(), Eigen::Index(0));
            QCOMPARE(got->entropy.size(), Eigen::Index(0));
        }
    }
}

void TestPooledBlock::blockOutsideTheProblemIsRefused()
{
    Case c;
    c.tq = 10;
    const AttentionProblem p = makeProblem(c);
    PoolOptions options;
    options.bins = 4;
    for (auto [q0, q1, k0, k1] :
         {std::array<std::int64_t, 4>{0, 11, 0, -1}, {5, 5, 0, -1}, {0, -1, -1, 4}, {0, -1, 8, 3}}) {
        options.queryBegin = q0, options.queryEnd = q1, options.keyBegin = k0, options.keyEnd = k1;
        auto got = computePooledCpu(p, options);
        QVERIFY(!got.ok());
        QCOMPARE(got.kind(), ErrorKind::InvalidInput);
        QVERIFY2(got.message().find("block") != std::string::npos, got.message().c_str());
    }
}

void TestPooledBlock::progressReachesTheTotal()
{
    Case c;
    c.tq = 600;
    c.heads = 3;
    const AttentionProblem p = makeProblem(c);
    PoolProgress progress;
    PoolOptions options;
    options.bins = 16;
    options.progress = &progress;
    auto got = computePooledCpu(p, options);
    QVERIFY(got.ok());
    QVERIFY(progress.total > 0);
    QCOMPARE(progress.done.load(), progress.total.load());
}

// A long compute on another thread stops once the flag is set, with the Cancelled kind; its
// progress only grew while it ran.
void TestPooledBlock::cancelReturnsCancelled()
{
    Case c;
    c.tq = 16384;
    c.dq = 64;
    c.heads = 4;
    c.dk = 16;
    c.dv = 16;
    const AttentionProblem p = makeProblem(c);
    std::atomic<bool> cancel{false};
    PoolProgress progress;
    PoolOptions options;
    options.bins = 256;
    options.cancel = &cancel;
    options.progress = &progress;
    std::optional<Result<PooledResult>> result;
    std::atomic<bool> returned{false};
    std::thread worker([&] {
        result.emplace(computePooledCpu(p, options));
        returned = true;
    });
    // The flag is set once the progress counter says work has begun (observed, never timed);
    // the counter is sampled all along and must only grow.
    std::vector<std::int64_t> seen;
    auto sample = [&] {
        const std::int64_t done = progress.done;
        if (seen.empty() || seen.back() != done)
            seen.push_back(done);
        std::this_thread::yield();
    };
    while (!returned && progress.done == 0)
        sample();
    const bool finishedFirst = returned;
    cancel = true;
    while (!returned)
        sample();
    worker.join();
    QVERIFY2(!finishedFirst, "the computation finished before it could be cancelled: make it larger");
    QVERIFY(result && !result->ok());
    QCOMPARE(result->kind(), ErrorKind::Cancelled);
    QVERIFY(progress.done < progress.total);
    for (size_t i = 1; i < seen.size(); ++i)
        QVERIFY(seen[i] >= seen[i - 1]);
}

QTEST_GUILESS_MAIN(TestPooledBlock)
#include "tst_pooledblock.moc"
