// Pooling, written once in core/analysis/Pooling.h: the block partition of design.md's
// `compute --pool N`, the row pooler every pooled picture uses, and the pooling of a set's block
// (the long view's tiles, the thumbnails). Expected values are written out by hand or come from
// plain loops over the partition's formula, never from the code under test.

#include "core/analysis/AttentionSet.h"
#include "core/analysis/Pooling.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace attnscope;

namespace {

// Max or mean over the block (a, b) of the contract: rows [floor(a*R/n), floor((a+1)*R/n)).
double blockValue(const MatrixD &m, std::int64_t a, std::int64_t b, std::int64_t nq, std::int64_t nk, PoolMode mode)
{
    const std::int64_t r0 = a * m.rows() / nq, r1 = (a + 1) * m.rows() / nq;
    const std::int64_t c0 = b * m.cols() / nk, c1 = (b + 1) * m.cols() / nk;
    double v = 0.0;
    for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c)
            v = mode == PoolMode::Max ? std::max(v, m(r, c)) : v + m(r, c);
    return mode == PoolMode::Max ? v : v / double((r1 - r0) * (c1 - c0));
}

} // namespace

class TestPooling : public QObject
{
    Q_OBJECT

private slots:
    void binOfInvertsBinStart();
    void binCoverHoldsOneItemWhenBinsOutnumberItems();
    void poolMatrixFollowsTheContract_data();
    void poolMatrixFollowsTheContract();
    void nanInABlockShows();
    void setBlockMatchesWholeMapPooling();
    void headMeanIsTheMaxOfTheMean();
    void outsideBlockIsRefused();
    void cancelledStopsBeforeTheEnd();
};

void TestPooling::binOfInvertsBinStart()
{
    for (std::int64_t count = 1; count <= 70; ++count)
        for (std::int64_t bins = 1; bins <= count; ++bins)
            for (std::int64_t b = 0; b < bins; ++b)
                for (std::int64_t i = binStart(b, count, bins); i < binStart(b + 1, count, bins); ++i)
                    if (binOf(i, count, bins) != b)
                        QFAIL(qPrintable(QStringLiteral("count %1, bins %2: item %3 is in bin %4, binOf says %5")
                                             .arg(count)
                                             .arg(bins)
                                             .arg(i)
                                             .arg(b)
                                             .arg(binOf(i, count, bins))));
    // The example of the partitions that differed: T = 5 in 3 bins is {0}, {1, 2}, {3, 4}.
    QCOMPARE(binOf(0, 5, 3), 0);
    QCOMPARE(binOf(1, 5, 3), 1);
    QCOMPARE(binOf(2, 5, 3), 1);
    QCOMPARE(binOf(3, 5, 3), 2);
    QCOMPARE(binOf(4, 5, 3), 2);
}

void TestPooling::binCoverHoldsOneItemWhenBinsOutnumberItems()
{
    // 3 cells drawn over 10 pixels: every pixel shows one cell, each cell at least one pixel.
    std::vector<int> seen(3, 0);
    for (std::int64_t x = 0; x < 10; ++x) {
        const auto [first, last] = binCover(x, 3, 10);
        QCOMPARE(last - first, std::int64_t(1));
        QVERIFY(first >= 0 && first < 3);
        ++seen[std::size_t(first)];
    }
    for (int n : seen)
        QVERIFY(n >= 3);
    // Fewer bins than items: the bin's own items.
    QCOMPARE(binCover(1, 5, 3), std::make_pair(std::int64_t(1), std::int64_t(3)));
}

void TestPooling::poolMatrixFollowsTheContract_data()
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("bins");
    QTest::addColumn<bool>("mean");
    QTest::newRow("5x7 in 3, max") << 5 << 7 << 3 << false;
    QTest::newRow("5x7 in 3, mean") << 5 << 7 << 3 << true;
    QTest::newRow("130x9 in 128, max") << 130 << 9 << 128 << false;
    QTest::newRow("4x4 in 8 (no pooling)") << 4 << 4 << 8 << false;
    QTest::newRow("33x65 in 16, mean") << 33 << 65 << 16 << true;
}

void TestPooling::poolMatrixFollowsTheContract()
{
    QFETCH(int, rows);
    QFETCH(int, cols);
    QFETCH(int, bins);
    QFETCH(bool, mean);
    const PoolMode mode = mean ? PoolMode::Mean : PoolMode::Max;
    MatrixD m(rows, cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            m(r, c) = std::fmod(0.37 * r + 0.61 * c + 0.013 * r * c, 1.0);
    const MatrixD p = poolMatrix(m, bins, mode);
    const std::int64_t nq = std::min(bins, rows), nk = std::min(bins, cols);
    QCOMPARE(p.rows(), Eigen::Index(nq));
    QCOMPARE(p.cols(), Eigen::Index(nk));
    for (std::int64_t a = 0; a < nq; ++a)
        for (std::int64_t b = 0; b < nk; ++b)
            QVERIFY2(std::abs(p(a, b) - blockValue(m, a, b, nq, nk, mode)) < 1e-12,
                     qPrintable(QStringLiteral("cell (%1, %2)").arg(a).arg(b)));
}

void TestPooling::nanInABlockShows()
{
    MatrixF m = MatrixF::Constant(4, 4, 0.25f);
    m(1, 1) = std::numeric_limits<float>::quiet_NaN();
    m(0, 0) = 0.5f; // a larger value before the NaN in the same block
    const MatrixF p = poolMatrix(m, 2, PoolMode::Max);
    QVERIFY(std::isnan(p(0, 0)));
    QCOMPARE(p(1, 1), 0.25f);
}

void TestPooling::setBlockMatchesWholeMapPooling()
{
    constexpr int t = 37, heads = 3;
    std::vector<float> values(std::size_t(heads) * t * t);
    for (std::size_t k = 0; k < values.size(); ++k)
        values[k] = float((k * 7919) % 1000) / 1000.0f;
    auto set = AttentionSet::fromFloats(values, 1, 1, heads, t, t);
    QVERIFY(set);
    SetPoolOptions options;
    options.bins = 8;
    options.head = 2;
    const SetBlock block{5, 30, 3, 37};
    auto pooled = poolSetBlock(*set, 0, 0, block, options);
    QVERIFY(pooled);
    QCOMPARE(int(pooled->heads.size()), 1);
    QVERIFY(pooled->headMean.size() == 0);
    const MatrixD part = set->map(0, 0, 2).cast<double>().block(5, 3, 25, 34);
    const MatrixF &p = pooled->heads.front();
    QCOMPARE(p.rows(), Eigen::Index(8));
    for (Eigen::Index a = 0; a < 8; ++a)
        for (Eigen::Index b = 0; b < 8; ++b)
            QCOMPARE(p(a, b), float(blockValue(part, a, b, 8, 8, PoolMode::Max)));
}

void TestPooling::headMeanIsTheMaxOfTheMean()
{
    constexpr int t = 6, heads = 2;
    std::vector<float> values(std::size_t(heads) * t * t, 0.0f);
    values[0 * t * t + 0 * t + 0] = 1.0f; // head 0 and head 1 peak at different cells
    values[1 * t * t + 1 * t + 2] = 0.8f; // of the same 3 x 3 block
    values[1 * t * t + 4 * t + 4] = 0.3f;
    values[0 * t * t + 4 * t + 4] = 0.1f;
    auto set = AttentionSet::fromFloats(values, 1, 1, heads, t, t);
    QVERIFY(set);
    SetPoolOptions options;
    options.bins = 2;
    options.headMean = true;
    PoolProgress progress;
    options.progress = &progress;
    auto pooled = poolSetBlock(*set, 0, 0, SetBlock{0, t, 0, t}, options);
    QVERIFY(pooled);
    QCOMPARE(int(pooled->heads.size()), heads);
    QCOMPARE(pooled->heads[0](0, 0), 1.0f);
    QCOMPARE(pooled->heads[1](0, 0), 0.8f);
    // The max over the block of the mean over heads: 0.5, not (1.0 + 0.8) / 2.
    QCOMPARE(pooled->headMean(0, 0), 0.5f);
    QCOMPARE(pooled->headMean(1, 1), 0.2f);
    QCOMPARE(pooled->headMean(0, 1), 0.0f);
    QCOMPARE(progress.done.load(), std::int64_t(heads * t));
    QCOMPARE(progress.total.load(), std::int64_t(heads * t));
}

void TestPooling::outsideBlockIsRefused()
{
    auto set = AttentionSet::fromFloats(std::vector<float>(16, 0.25f), 1, 1, 1, 4, 4);
    QVERIFY(set);
    auto r = poolSetBlock(*set, 0, 0, SetBlock{0, 5, 0, 4}, SetPoolOptions{});
    QVERIFY(!r);
    QCOMPARE(r.error().kind, ErrorKind::InvalidInput);
    QVERIFY2(QString::fromStdString(r.error().message).contains(QStringLiteral("outside the 4 x 4 maps")),
             r.error().message.c_str());
    SetPoolOptions oneHead;
    oneHead.head = 1;
    QVERIFY(!poolSetBlock(*set, 0, 0, SetBlock{0, 4, 0, 4}, oneHead));
}

// Cancellation is observed where it happens: the row callback sets the flag after the third row,
// and pooling stops before reading a fourth.
void TestPooling::cancelledStopsBeforeTheEnd()
{
    auto set = AttentionSet::fromFloats(std::vector<float>(64 * 64, 0.0f), 1, 1, 1, 64, 64);
    QVERIFY(set);
    std::atomic<bool> cancel{false};
    int rows = 0;
    SetPoolOptions options;
    options.cancel = &cancel;
    options.rowRead = [&] {
        if (++rows == 3)
            cancel = true;
    };
    auto r = poolSetBlock(*set, 0, 0, SetBlock{0, 64, 0, 64}, options);
    QVERIFY(!r);
    QCOMPARE(r.error().kind, ErrorKind::Cancelled);
    QCOMPARE(rows, 3);
}

QTEST_GUILESS_MAIN(TestPooling)
#include "tst_pooling.moc"
