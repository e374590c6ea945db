// Comparison of two attention sets (issue 26, core/analysis/Comparison.h): the difference is B − A
// cell by cell, labelled by where the tokens agree, refused with one line where the sets cannot be
// aligned; the statistics of the difference against sums written out by hand. Sets are made here
// from formulas in double, never by the code under test.

#include "core/analysis/AttentionSet.h"
#include "core/analysis/AttentionStats.h"
#include "core/analysis/Comparison.h"

#include <QTest>

#include <cmath>

using namespace attnscope;

namespace {

// Rows that sum to 1: a softmax of a formula in (sample, layer, head, i, j) with a per-set seed, so
// that A and B differ everywhere.
AttentionSet makeSet(int samples, int layers, int heads, std::int64_t tq, std::int64_t tk, double seed)
{
    std::vector<float> values;
    for (int s = 0; s < samples; ++s)
        for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h)
                for (std::int64_t i = 0; i < tq; ++i) {
                    std::vector<double> row(static_cast<std::size_t>(tk));
                    double sum = 0;
                    for (std::int64_t j = 0; j < tk; ++j) {
                        row[std::size_t(j)] = std::exp(std::sin(seed * (1 + s) + 0.7 * l + 1.3 * h + 0.37 * i * j + j));
                        sum += row[std::size_t(j)];
                    }
                    for (double v : row)
                        values.push_back(float(v / sum));
                }
    auto set = AttentionSet::fromFloats(std::move(values), samples, layers, heads, tq, tk);
    if (!set)
        qFatal("%s", set.message().c_str());
    return std::move(set).value();
}

AttentionSet withTokens(AttentionSet set, std::vector<std::string> queries, std::vector<std::string> keys = {})
{
    if (keys.empty() && set.queries() == set.keys())
        keys = queries;
    if (Status s = set.setTokens(std::move(queries), std::move(keys)); !s)
        qFatal("%s", s.message().c_str());
    return set;
}

AttentionSet fromRows(std::vector<float> values, std::int64_t tq, std::int64_t tk)
{
    auto set = AttentionSet::fromFloats(std::move(values), 1, 1, 1, tq, tk);
    if (!set)
        qFatal("%s", set.message().c_str());
    return std::move(set).value();
}

std::vector<std::string> words(std::initializer_list<const char *> list)
{
    return {list.begin(), list.end()};
}

} // namespace

Q_DECLARE_METATYPE(attnscope::AttentionSet)

class TestComparison : public QObject
{
    Q_OBJECT

private slots:
    void differenceIsBMinusA_data();
    void differenceIsBMinusA();
    void labelsShowWhereTokensDiffer();
    void refusalsNameTheReason_data();
    void refusalsNameTheReason();
    void tooLargeIsRefusedBeforeComputing();
    void statisticsMatchHandComputations();
    void statisticsOfBothSidesAreTheirHeadStatistics();
    void onlyTheDifferenceIsSigned();
};

void TestComparison::differenceIsBMinusA_data()
{
    QTest::addColumn<int>("samples");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("heads");
    QTest::addColumn<qint64>("tq");
    QTest::addColumn<qint64>("tk");
    QTest::newRow("3 layers x 4 heads, 6 tokens") << 1 << 3 << 4 << qint64(6) << qint64(6);
    QTest::newRow("2 samples, 2 layers x 3 heads") << 2 << 2 << 3 << qint64(5) << qint64(5);
    QTest::newRow("cross-attention 4 x 7") << 1 << 2 << 2 << qint64(4) << qint64(7);
}

void TestComparison::differenceIsBMinusA()
{
    QFETCH(int, samples);
    QFETCH(int, layers);
    QFETCH(int, heads);
    QFETCH(qint64, tq);
    QFETCH(qint64, tk);
    const AttentionSet a = makeSet(samples, layers, heads, tq, tk, 0.3);
    const AttentionSet b = makeSet(samples, layers, heads, tq, tk, 1.9);
    auto c = compareSets(a, b);
    QVERIFY2(c.ok(), c.ok() ? "" : c.message().c_str());
    const AttentionSet &d = c->difference;
    QCOMPARE(d.samples(), samples);
    QCOMPARE(d.layers(), layers);
    QCOMPARE(d.heads(), heads);
    QCOMPARE(d.queries(), tq);
    QCOMPARE(d.keys(), tk);
    QVERIFY(c->differenceValues);
    QCOMPARE(qint64(c->differenceValues->size()), qint64(samples) * layers * heads * tq * tk);
    std::size_t n = 0;
    int nonZero = 0;
    for (int s = 0; s < samples; ++s)
        for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h)
                for (std::int64_t i = 0; i < tq; ++i)
                    for (std::int64_t j = 0; j < tk; ++j, ++n) {
                        // The two sets subtracted, in double, then rounded as the difference stores it.
                        const float expected = float(double(b.at(s, l, h, i, j)) - double(a.at(s, l, h, i, j)));
                        const float got = d.at(s, l, h, i, j);
                        if (got != expected || (*c->differenceValues)[n] != expected)
                            QFAIL(qPrintable(QStringLiteral("[%1, %2, %3, %4, %5]: difference %6, expected B - A = %7")
                                                 .arg(s)
                                                 .arg(l)
                                                 .arg(h)
                                                 .arg(i)
                                                 .arg(j)
                                                 .arg(double(got), 0, 'g', 9)
                                                 .arg(double(expected), 0, 'g', 9)));
                        nonZero += expected != 0.0f;
                    }
    QVERIFY(nonZero > int(n) / 2); // the sets really differ
    // A set compared with itself differs nowhere.
    auto same = compareSets(a, a);
    QVERIFY(same.ok());
    for (float v : *same->differenceValues)
        QCOMPARE(v, 0.0f);
}

void TestComparison::labelsShowWhereTokensDiffer()
{
    const AttentionSet a = withTokens(makeSet(1, 1, 2, 3, 3, 0.1), words({"the", "cat", "sat"}));
    const AttentionSet b = withTokens(makeSet(1, 1, 2, 3, 3, 0.2), words({"the", "dog", "sat"}));
    auto c = compareSets(a, b);
    QVERIFY(c.ok());
    QCOMPARE(c->queryLabels, words({"the",
                                    "cat\xE2\x86\x92"
                                    "dog",
                                    "sat"}));
    QCOMPARE(c->keyLabels, c->queryLabels);
    QCOMPARE(c->difference.queryTokens, c->queryLabels);
    QCOMPARE(c->difference.keyTokens, c->keyLabels);
    QCOMPARE(c->difference.queryWordOf.size(), std::size_t(3));
    // A and B keep their own labels.
    QCOMPARE(c->a.queryTokens, words({"the", "cat", "sat"}));
    QCOMPARE(c->b.queryTokens, words({"the", "dog", "sat"}));

    // One side unlabelled: its positions read t0, t1, ...
    auto half = compareSets(a, makeSet(1, 1, 2, 3, 3, 0.2));
    QVERIFY(half.ok());
    QCOMPARE(half->queryLabels, words({"the\xE2\x86\x92t0", "cat\xE2\x86\x92t1", "sat\xE2\x86\x92t2"}));

    // Neither labelled: no labels.
    auto none = compareSets(makeSet(1, 1, 2, 3, 3, 0.1), makeSet(1, 1, 2, 3, 3, 0.2));
    QVERIFY(none.ok());
    QVERIFY(none->queryLabels.empty());
    QVERIFY(none->difference.queryTokens.empty());

    // Cross-attention: queries and keys labelled apart.
    const AttentionSet ca = withTokens(makeSet(1, 1, 1, 2, 3, 0.1), words({"I", "am"}), words({"ich", "bin", "."}));
    const AttentionSet cb = withTokens(makeSet(1, 1, 1, 2, 3, 0.2), words({"I", "was"}), words({"ich", "war", "."}));
    auto cross = compareSets(ca, cb);
    QVERIFY(cross.ok());
    QCOMPARE(cross->queryLabels, words({"I", "am\xE2\x86\x92was"}));
    QCOMPARE(cross->keyLabels, words({"ich", "bin\xE2\x86\x92war", "."}));
}

void TestComparison::refusalsNameTheReason_data()
{
    QTest::addColumn<AttentionSet>("a");
    QTest::addColumn<AttentionSet>("b");
    QTest::addColumn<QString>("message");
    const QString tokensReason =
        QStringLiteral("the two texts must tokenise to the same number of tokens to be aligned position by position");
    QTest::newRow("layers and heads") << makeSet(1, 12, 12, 3, 3, 0.1) << makeSet(1, 2, 4, 3, 3, 0.2)
                                      << "cannot compare: A has 12 layers of 12 heads, B has 2 layers of 4 heads";
    QTest::newRow("heads only") << makeSet(1, 2, 3, 3, 3, 0.1) << makeSet(1, 2, 4, 3, 3, 0.2)
                                << "cannot compare: A has 2 layers of 3 heads, B has 2 layers of 4 heads";
    QTest::newRow("tokens") << makeSet(1, 1, 2, 7, 7, 0.1) << makeSet(1, 1, 2, 9, 9, 0.2)
                            << "cannot compare: A has 7 tokens and B has 9; " + tokensReason;
    QTest::newRow("tokens, labels that differ") << withTokens(makeSet(1, 1, 1, 2, 2, 0.1), words({"a", "b"}))
                                                << withTokens(makeSet(1, 1, 1, 3, 3, 0.2), words({"x", "b", "c"}))
                                                << "cannot compare: A has 2 tokens and B has 3; " + tokensReason;
    QTest::newRow("B continues A") << withTokens(makeSet(1, 1, 1, 2, 2, 0.1), words({"the", "cat"}))
                                   << withTokens(makeSet(1, 1, 1, 4, 4, 0.2), words({"the", "cat", "sat", "."}))
                                   << "cannot compare: A has 2 tokens and B has 4; " + tokensReason +
                                          "; B is A followed by 2 more tokens";
    QTest::newRow("A continues B") << withTokens(makeSet(1, 1, 1, 3, 3, 0.1), words({"the", "cat", "sat"}))
                                   << withTokens(makeSet(1, 1, 1, 2, 2, 0.2), words({"the", "cat"}))
                                   << "cannot compare: A has 3 tokens and B has 2; " + tokensReason +
                                          "; A is B followed by 1 more token";
    QTest::newRow("samples") << makeSet(2, 1, 2, 3, 3, 0.1) << makeSet(1, 1, 2, 3, 3, 0.2)
                             << "cannot compare: A has 2 samples and B has 1; the two inputs must hold as many "
                                "sequences to be aligned";
    QTest::newRow("queries") << makeSet(1, 1, 2, 2, 5, 0.1) << makeSet(1, 1, 2, 3, 5, 0.2)
                             << "cannot compare: A has 2 queries and B has 3; the two inputs must have as many "
                                "queries to be aligned position by position";
    QTest::newRow("keys") << makeSet(1, 1, 2, 4, 4, 0.1) << makeSet(1, 1, 2, 4, 6, 0.2)
                          << "cannot compare: A has 4 keys and B has 6; the two inputs must have as many keys to be "
                             "aligned position by position";
    QTest::newRow("A empty") << AttentionSet() << makeSet(1, 1, 2, 3, 3, 0.2)
                             << "cannot compare: A has no attention maps";
    QTest::newRow("B empty") << makeSet(1, 1, 2, 3, 3, 0.2) << AttentionSet()
                             << "cannot compare: B has no attention maps";
}

void TestComparison::refusalsNameTheReason()
{
    QFETCH(AttentionSet, a);
    QFETCH(AttentionSet, b);
    QFETCH(QString, message);
    auto c = compareSets(a, b);
    QVERIFY(!c.ok());
    QCOMPARE(QString::fromStdString(c.message()), message);
    QCOMPARE(c.kind(), ErrorKind::InvalidInput);
    QVERIFY(c.message().find('\n') == std::string::npos);
    QVERIFY(!c.error().code.empty()); // translatable (core/ErrorCode.h)
}

void TestComparison::tooLargeIsRefusedBeforeComputing()
{
    const AttentionSet a = makeSet(1, 2, 3, 8, 8, 0.1), b = makeSet(1, 2, 3, 8, 8, 0.2);
    // 6 maps of 8 x 8 float32: 1536 bytes a set, 4608 for A, B and the difference.
    auto refused = compareSets(a, b, 4607);
    QVERIFY(!refused.ok());
    QCOMPARE(refused.kind(), ErrorKind::TooLarge);
    QCOMPARE(QString::fromStdString(refused.message()),
             QStringLiteral("cannot compare: A, B and their difference need 4.5 KiB (three times 6 maps of 8 x 8 "
                            "float32 values); this machine allows 4.5 KiB"));
    QVERIFY(refused.message().find('\n') == std::string::npos);
    QVERIFY(compareSets(a, b, 4608).ok());
}

void TestComparison::statisticsMatchHandComputations()
{
    // A = [[1, 0], [0.5, 0.5]], B = [[0.25, 0.75], [0.5, 0.5]]: B − A = [[-0.75, 0.75], [0, 0]].
    const AttentionSet a = fromRows({1.0f, 0.0f, 0.5f, 0.5f}, 2, 2);
    const AttentionSet b = fromRows({0.25f, 0.75f, 0.5f, 0.5f}, 2, 2);
    auto c = compareSets(a, b);
    QVERIFY(c.ok());
    QCOMPARE(*c->differenceValues, (std::vector<float>{-0.75f, 0.75f, 0.0f, 0.0f}));
    const auto stats = comparisonStatistics(*c);
    QCOMPARE(stats.size(), std::size_t(1));
    QCOMPARE(stats[0].meanAbs, 1.5 / 4);                 // (0.75 + 0.75 + 0 + 0) / 4
    QCOMPARE(stats[0].maxAbs, 0.75);                     // |±0.75|
    QCOMPARE(stats[0].totalVariation, (0.75 + 0.0) / 2); // rows: 0.5·1.5 and 0, their mean

    // Disjoint rows: total variation 1; the same rows: 0.
    auto disjoint = compareSets(fromRows({1, 0, 0, 1}, 2, 2), fromRows({0, 1, 1, 0}, 2, 2));
    QVERIFY(disjoint.ok());
    QCOMPARE(comparisonStatistics(*disjoint)[0].totalVariation, 1.0);
    QCOMPARE(comparisonStatistics(*disjoint)[0].maxAbs, 1.0);
    auto same = compareSets(a, a);
    QVERIFY(same.ok());
    QCOMPARE(comparisonStatistics(*same)[0].totalVariation, 0.0);
    QCOMPARE(comparisonStatistics(*same)[0].meanAbs, 0.0);

    // A 2 x 3 cross map: rows differ by [0.1, -0.3, 0.2] and [0, 0.5, -0.5].
    const AttentionSet ca = fromRows({0.5f, 0.3f, 0.2f, 0.25f, 0.25f, 0.5f}, 2, 3);
    const AttentionSet cb = fromRows({0.6f, 0.0f, 0.4f, 0.25f, 0.75f, 0.0f}, 2, 3);
    auto cross = compareSets(ca, cb);
    QVERIFY(cross.ok());
    const HeadDifference d = comparisonStatistics(*cross)[0];
    // |b − a| in double from the float values each set holds.
    double sum = 0, max = 0, tv = 0;
    for (int i = 0; i < 2; ++i) {
        double row = 0;
        for (int j = 0; j < 3; ++j) {
            const double v = std::abs(double(cb.at(0, 0, 0, i, j)) - double(ca.at(0, 0, 0, i, j)));
            sum += v, row += v, max = std::max(max, v);
        }
        tv += 0.5 * row / 2;
    }
    QCOMPARE(d.meanAbs, sum / 6);
    QCOMPARE(d.maxAbs, max);
    QCOMPARE(d.totalVariation, tv);
    QVERIFY(std::abs(d.meanAbs - 1.6 / 6) < 1e-7);
    QVERIFY(std::abs(d.maxAbs - 0.5) < 1e-7);
    QVERIFY(std::abs(d.totalVariation - (0.3 + 0.5) / 2) < 1e-7);
}

void TestComparison::statisticsOfBothSidesAreTheirHeadStatistics()
{
    const AttentionSet a = withTokens(makeSet(1, 2, 3, 5, 5, 0.4), words({"a", "b", "a", "b", "c"}));
    const AttentionSet b = withTokens(makeSet(1, 2, 3, 5, 5, 2.1), words({"a", "b", "a", "b", "d"}));
    auto c = compareSets(a, b);
    QVERIFY(c.ok());
    const auto stats = comparisonStatistics(*c);
    const auto sa = headStatistics(a), sb = headStatistics(b);
    QCOMPARE(stats.size(), sa.size());
    for (std::size_t n = 0; n < stats.size(); ++n) {
        const HeadDifference &d = stats[n];
        QCOMPARE(d.sample, sa[n].sample);
        QCOMPARE(d.layer, sa[n].layer);
        QCOMPARE(d.head, sa[n].head);
        for (const auto &[got, want] : {std::pair{&d.a, &sa[n]}, std::pair{&d.b, &sb[n]}}) {
            QCOMPARE(got->layer, want->layer);
            QCOMPARE(got->head, want->head);
            QCOMPARE(got->entropy, want->entropy);
            QCOMPARE(got->distance, want->distance);
            QCOMPARE(got->confidence, want->confidence);
            QCOMPARE(got->first, want->first);
            QCOMPARE(got->self, want->self);
            QCOMPARE(got->previous, want->previous);
            QCOMPARE(got->spread, want->spread);
            QCOMPARE(got->induction, want->induction);
        }
        QVERIFY(d.totalVariation > 0 && d.totalVariation <= 1);
        QVERIFY(d.meanAbs > 0 && d.meanAbs <= d.maxAbs);
    }
    // A and B differ, and the statistics say which side is which.
    QVERIFY(stats[0].a.entropy != stats[0].b.entropy);
}

void TestComparison::onlyTheDifferenceIsSigned()
{
    const AttentionSet a = makeSet(1, 1, 2, 3, 3, 0.1);
    QVERIFY(!a.isSigned());
    QVERIFY(!AttentionSet().isSigned());
    auto c = compareSets(a, makeSet(1, 1, 2, 3, 3, 0.2));
    QVERIFY(c.ok());
    QVERIFY(c->difference.isSigned());
    QVERIFY(!c->a.isSigned());
    QVERIFY(!c->b.isSigned());
    // Copies keep the flag: views and exports take the set by value.
    const AttentionSet copy = c->difference;
    QVERIFY(copy.isSigned());
    bool negative = false;
    for (float v : *c->differenceValues)
        negative = negative || v < 0;
    QVERIFY(negative);
}

QTEST_GUILESS_MAIN(TestComparison)
#include "tst_comparison.moc"
