// Statistics, rollout and word merging of attention sets against float64 expectations that
// NumPy computed independently (tests/fixtures/attention/make_attention_fixtures.py).

#include "../common/TestUtil.h"

#include "core/analysis/AttentionSet.h"
#include "core/analysis/AttentionStats.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTest>

#include <Eigen/Core>

using namespace attnscope;

namespace {

QString fixture(const QString &name)
{
    return test::sourcePath("tests/fixtures/attention/" + name);
}

// A fixture read by the importer, so every container, dtype and layout goes through the
// same path a user's file takes.
AttentionSet loadSet(const QString &file)
{
    auto set = readAttentionFile(fixture(file).toStdString());
    if (!set)
        qFatal("%s", set.message().c_str());
    return std::move(set).value();
}

// Every fixture file and the stem of its expectations.
const std::pair<const char *, const char *> kFiles[] = {
    {"lhtt_f16.npy", "lhtt_f16"},
    {"lhtt_f32.npy", "lhtt_f32"},
    {"lhtt_f64.npy", "lhtt_f64"},
    {"lhtt_f16_st.safetensors", "lhtt_f16_st"},
    {"lhtt_bf16_st.safetensors", "lhtt_bf16_st"},
    {"lhtt_f32_st.safetensors", "lhtt_f32_st"},
    {"lhtt_f64_st.safetensors", "lhtt_f64_st"},
    {"lhtt_stored.npz", "lhtt_stored"},
    {"lhtt_deflated.npz", "lhtt_deflated"},
    {"htt_f32.npy", "htt_f32"},
    {"tt_f64.npy", "tt_f64"},
    {"cross_htt_f32.npy", "cross_htt_f32"},
};

std::vector<std::string> tokensOf(const QString &name)
{
    QFile file(fixture(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
    std::vector<std::string> out;
    for (const auto &t : o.value("tokens").toArray())
        out.push_back(t.toString().toStdString());
    return out;
}

std::vector<std::string> keyTokensOf(const QString &name)
{
    QFile file(fixture(name));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
    std::vector<std::string> out;
    for (const auto &t : o.value("keyTokens").toArray())
        out.push_back(t.toString().toStdString());
    return out;
}

QJsonObject expectation(const QString &stem)
{
    QFile file(fixture("expected_" + stem + ".json"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("missing expected_%s.json", qPrintable(stem));
    return QJsonDocument::fromJson(file.readAll()).object();
}

MatrixD loadMatrix(const QString &name)
{
    auto array = readNpyFile(fixture(name).toStdString());
    if (!array || array->shape.size() != 2)
        qFatal("bad matrix fixture %s", qPrintable(name));
    return Eigen::Map<const MatrixD>(array->data.data(), array->shape[0], array->shape[1]);
}

bool close(double got, double expected, double tol = 1e-6)
{
    return std::abs(got - expected) <= tol * (1.0 + std::abs(expected));
}

} // namespace

class TestAttentionStats : public QObject
{
    Q_OBJECT

private slots:
    void statisticsMatchNumPy_data();
    void statisticsMatchNumPy();
    void rolloutMatchesNumPy_data();
    void rolloutMatchesNumPy();
    void wordMergingMatchesNumPy_data();
    void wordMergingMatchesNumPy();
    void wordsFromTokenConventions_data();
    void wordsFromTokenConventions();
    void halfStorageReadsBack();
    void tokenCountsAreChecked();
    void rolloutNeedsSquareMaps();
    void rolloutBeyondItsCostRefusedNamingItsNeed();
    void rolloutStopsWhenCancelled();
    void rolloutOfOneLayerNeedsNoProduct();
    void spreadOfHandMadeMap();
    void inductionScoreOfHandMadeMaps_data();
    void inductionScoreOfHandMadeMaps();
    void inductionAbsentWithoutRepeatsOrLabels();
    void headDistancesRankTheLikeHeadFirst();
};

void TestAttentionStats::statisticsMatchNumPy_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("stem");
    for (const auto &[file, stem] : kFiles)
        QTest::newRow(file) << QString(file) << QString(stem);
}

void TestAttentionStats::statisticsMatchNumPy()
{
    QFETCH(QString, file);
    QFETCH(QString, stem);
    const AttentionSet set = loadSet(file);
    const QJsonObject expected = expectation(stem);
    QCOMPARE(set.layers(), expected.value("layers").toInt());
    QCOMPARE(set.heads(), expected.value("heads").toInt());
    const auto stats = headStatistics(set);
    const QJsonArray rows = expected.value("stats").toArray();
    QCOMPARE(qsizetype(stats.size()), rows.size());
    for (qsizetype n = 0; n < rows.size(); ++n) {
        const QJsonObject e = rows[n].toObject();
        const HeadStats &s = stats[size_t(n)];
        QCOMPARE(s.layer, e.value("layer").toInt());
        QCOMPARE(s.head, e.value("head").toInt());
        const auto check = [&](const char *key, std::optional<double> got) {
            const QString where = QString("%1 layer %2 head %3: %4").arg(stem).arg(s.layer).arg(s.head).arg(key);
            QVERIFY2(got.has_value() == e.contains(key), qPrintable(where + " presence"));
            if (got)
                QVERIFY2(
                    close(*got, e.value(key).toDouble()),
                    qPrintable(
                        where +
                        QString(" = %1, expected %2").arg(*got, 0, 'g', 12).arg(e.value(key).toDouble(), 0, 'g', 12)));
        };
        check("entropy", s.entropy);
        check("distance", s.distance);
        check("confidence", s.confidence);
        check("first", s.first);
        check("self", s.self);
        check("previous", s.previous);
    }
}

void TestAttentionStats::rolloutMatchesNumPy_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("stem");
    for (const auto &[file, stem] : kFiles)
        if (QString(stem) != "cross_htt_f32")
            QTest::newRow(file) << QString(file) << QString(stem);
}

void TestAttentionStats::rolloutMatchesNumPy()
{
    QFETCH(QString, file);
    QFETCH(QString, stem);
    const AttentionSet set = loadSet(file);
    auto rollout = attentionRollout(set);
    QVERIFY2(rollout.ok(), rollout.ok() ? "" : rollout.message().c_str());
    const MatrixD expected = loadMatrix("expected_" + stem + "_rollout.npy");
    const std::string diff = test::compareMatrix("rollout", *rollout, expected, {1e-6, 1e-6});
    QVERIFY2(diff.empty(), diff.c_str());
    // Every row of a rollout of row-stochastic maps is a distribution.
    for (Eigen::Index i = 0; i < rollout->rows(); ++i)
        QVERIFY(close(rollout->row(i).sum(), 1.0, 1e-9));
}

void TestAttentionStats::wordMergingMatchesNumPy_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("stem");
    for (const auto &[file, stem] : kFiles)
        if (QFile::exists(fixture(QString(stem) + ".tokens.json")) || QString(file).endsWith(".safetensors"))
            QTest::newRow(file) << QString(file) << QString(stem);
}

void TestAttentionStats::wordMergingMatchesNumPy()
{
    QFETCH(QString, file);
    QFETCH(QString, stem);
    const AttentionSet set = loadSet(file);
    // Labels from the sidecar or the safetensors metadata, as the fixture script wrote them.
    const std::vector<std::string> sidecar = tokensOf("lhtt_f32.tokens.json");
    QCOMPARE(set.queryTokens, stem == "cross_htt_f32" ? tokensOf(stem + ".tokens.json") : sidecar);
    if (stem == "cross_htt_f32")
        QCOMPARE(set.keyTokens, keyTokensOf(stem + ".tokens.json"));
    const QJsonObject expected = expectation(stem);
    std::vector<int> qw, kw;
    for (const auto &v : expected.value("queryWords").toArray())
        qw.push_back(v.toInt());
    for (const auto &v : expected.value("keyWords").toArray())
        kw.push_back(v.toInt());
    QCOMPARE(set.queryWordOf, qw);
    QCOMPARE(set.keyWordOf, kw);
    const MatrixD merged = mergeWords(set.map(0, 0, 0).cast<double>(), set.queryWordOf, set.keyWordOf);
    const MatrixD reference = loadMatrix("expected_" + stem + "_merged_l0h0.npy");
    const std::string diff = test::compareMatrix("merged", merged, reference, {1e-6, 1e-6});
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestAttentionStats::wordsFromTokenConventions_data()
{
    QTest::addColumn<QStringList>("tokens");
    QTest::addColumn<QList<int>>("words");
    QTest::newRow("WordPiece") << QStringList{"[CLS]", "play", "##ing", "is", "fun", "##ny", "!", "[SEP]"}
                               << QList<int>{0, 1, 1, 2, 3, 3, 4, 5};
    QTest::newRow("GPT-2 byte-level") << QStringList{"Hello", "\u0120wor", "ld", ",", "\u0120it", "'s", "\u0120me"}
                                      << QList<int>{0, 1, 1, 2, 3, 3, 4};
    QTest::newRow("plain words") << QStringList{"I", "am", "a", "student"} << QList<int>{0, 1, 2, 3};
    QTest::newRow("special tokens stand alone")
        << QStringList{"<|endoftext|>", "The", "\u0120cat"} << QList<int>{0, 1, 2};
}

void TestAttentionStats::wordsFromTokenConventions()
{
    QFETCH(QStringList, tokens);
    QFETCH(QList<int>, words);
    std::vector<std::string> labels;
    for (const QString &t : tokens)
        labels.push_back(t.toStdString());
    const std::vector<int> got = wordsFromTokens(labels);
    QCOMPARE(QList<int>(got.begin(), got.end()), words);
}

void TestAttentionStats::halfStorageReadsBack()
{
    // 1.0, 0.5, 0.25, -2, 65504 (float16's largest), 2^-24 (its smallest subnormal).
    auto halves = std::make_shared<std::vector<std::uint16_t>>(
        std::vector<std::uint16_t>{0x3c00, 0x3800, 0x3400, 0xc000, 0x7bff, 0x0001});
    auto set = AttentionSet::fromContiguous(halves, halves->data(), AttentionStorage::Float16, 1, 1, 1, 2, 3);
    QVERIFY(set.ok());
    QCOMPARE(set->at(0, 0, 0, 0, 0), 1.0f);
    QCOMPARE(set->at(0, 0, 0, 0, 2), 0.25f);
    QCOMPARE(set->at(0, 0, 0, 1, 0), -2.0f);
    QCOMPARE(set->at(0, 0, 0, 1, 1), 65504.0f);
    QCOMPARE(set->at(0, 0, 0, 1, 2), std::ldexp(1.0f, -24));
    const MatrixF m = set->map(0, 0, 0);
    QCOMPARE(m(0, 1), 0.5f);
    QCOMPARE(set->valueBytes(), 12);
}

void TestAttentionStats::tokenCountsAreChecked()
{
    auto set = AttentionSet::fromFloats(std::vector<float>(6, 0.5f), 1, 1, 1, 2, 3);
    QVERIFY(set.ok());
    const Status s = set->setTokens({"a", "b", "c"}, {});
    QVERIFY(!s.ok());
    QCOMPARE(QString::fromStdString(s.message()), QString("tokens: expected 2 labels (one per query), found 3"));
    QVERIFY(set->setTokens({"a", "b"}, {"x", "y", "z"}).ok());
    auto wrong = AttentionSet::fromFloats(std::vector<float>(5, 0.5f), 1, 1, 1, 2, 3);
    QVERIFY(!wrong.ok());
}

void TestAttentionStats::rolloutNeedsSquareMaps()
{
    const AttentionSet set = loadSet("cross_htt_f32.npy");
    auto rollout = attentionRollout(set);
    QVERIFY(!rollout.ok());
    QVERIFY(rollout.message().find("square") != std::string::npos);
}

void TestAttentionStats::rolloutBeyondItsCostRefusedNamingItsNeed()
{
    // The one check the GUI and `export --tensor rollout` share (the CLI had none): memory
    // (four T x T doubles) and operations (2·T³ per layer after the first), each naming what it
    // would need.
    const Status memory = checkRolloutCost(20000, 1, std::int64_t(4) << 30);
    QVERIFY(!memory.ok());
    QCOMPARE(memory.kind(), ErrorKind::TooLarge);
    QCOMPARE(QString::fromStdString(memory.message()),
             QString("rollout: needs 11.9 GiB of memory (four 20000 x 20000 matrices of doubles); this machine "
                     "allows 4.0 GiB"));
    QCOMPARE(QString::fromStdString(memory.error().code), QString("rollout.memory"));
    const Status operations = checkRolloutCost(8192, 24, std::int64_t(1) << 40);
    QVERIFY(!operations.ok());
    QCOMPARE(operations.kind(), ErrorKind::TooLarge);
    QCOMPARE(QString::fromStdString(operations.message()),
             QString("rollout: multiplying the 8192 x 8192 matrices of 24 layers needs about 2.5e+13 operations, "
                     "more than the 4.0e+12 allowed (minutes of work)"));
    QVERIFY(checkRolloutCost(2048, 24, std::int64_t(1) << 40).ok());
    // attentionRollout itself refuses before allocating, against the budget it is given.
    const AttentionSet set = loadSet("htt_f32.npy");
    auto refused = attentionRollout(set, 0, RolloutLimits{1024, nullptr});
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error().kind, ErrorKind::TooLarge);
}

void TestAttentionStats::rolloutOfOneLayerNeedsNoProduct()
{
    // One layer's rollout is its own A' = (A + I) / 2, rows renormalised: no product, so no
    // refusal about products (a 16k-token one-layer file was refused for "1 products").
    QVERIFY(checkRolloutCost(16384, 1, std::int64_t(1) << 40).ok());
    QCOMPARE(rolloutOperations(16384, 1), 0.0);
    QVERIFY(!checkRolloutCost(16384, 2, std::int64_t(1) << 40).ok());
    const AttentionSet set = loadSet("htt_f32.npy"); // one layer
    QCOMPARE(set.layers(), 1);
    auto rollout = attentionRollout(set);
    QVERIFY2(rollout.ok(), rollout.ok() ? "" : rollout.message().c_str());
    const MatrixD mean = meanOverHeads(set, 0, 0);
    for (Eigen::Index i = 0; i < mean.rows(); ++i) {
        const double sum = 0.5 * mean.row(i).sum() + 0.5;
        for (Eigen::Index j = 0; j < mean.cols(); ++j)
            QCOMPARE((*rollout)(i, j), (0.5 * mean(i, j) + (i == j ? 0.5 : 0.0)) / sum);
    }
}

void TestAttentionStats::rolloutStopsWhenCancelled()
{
    const AttentionSet set = loadSet("htt_f32.npy");
    const std::atomic<bool> cancel{true};
    auto cancelled = attentionRollout(set, 0, RolloutLimits{0, &cancel});
    QVERIFY(!cancelled.ok());
    QCOMPARE(cancelled.error().kind, ErrorKind::Cancelled);
}

namespace {

// One layer of square maps given row by row, with optional token labels.
AttentionSet handMade(const std::vector<std::vector<std::vector<double>>> &heads,
                      const std::vector<std::string> &tokens = {})
{
    const auto t = std::int64_t(heads.front().size());
    std::vector<float> values;
    for (const auto &map : heads)
        for (const auto &row : map)
            for (double w : row)
                values.push_back(float(w));
    auto set = AttentionSet::fromFloats(std::move(values), 1, 1, int(heads.size()), t, t);
    if (!set)
        qFatal("%s", set.message().c_str());
    if (!tokens.empty())
        if (Status s = set->setTokens(tokens, tokens); !s)
            qFatal("%s", s.message().c_str());
    return std::move(set).value();
}

} // namespace

void TestAttentionStats::spreadOfHandMadeMap()
{
    // Row 0 looks at distance 0 only (sd 0); row 1 half at 1, half at 0 (mean 0.5, sd 0.5); row 2
    // half at 2, half at 0 (mean 1, sd 1): spread = (0 + 0.5 + 1) / 3.
    const AttentionSet set = handMade({{{1, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}}});
    const HeadStats s = headStatistics(set, 0, 0, 0);
    QVERIFY(close(s.spread, 0.5));
    // A previous-token head always looks one token back: no spread at all.
    const AttentionSet previous = handMade({{{1, 0, 0}, {1, 0, 0}, {0, 1, 0}}});
    QVERIFY(close(headStatistics(previous, 0, 0, 0).spread, 0.0));
    // A row of zeros (a masked query) is left out, as entropy leaves it out.
    const AttentionSet masked = handMade({{{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}}});
    QVERIFY(close(headStatistics(masked, 0, 0, 0).spread, 0.75));
}

void TestAttentionStats::inductionScoreOfHandMadeMaps_data()
{
    QTest::addColumn<QVector<QVector<double>>>("map");
    QTest::addColumn<QStringList>("tokens");
    QTest::addColumn<double>("expected");
    const QStringList abcabc{"A", "B", "C", "A", "B", "C"};
    // Queries 3, 4, 5 repeat tokens 0, 1, 2: their targets are keys 1, 2, 3.
    QTest::newRow("perfect induction head")
        << QVector<QVector<double>>{{1, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0},
                                    {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}}
        << abcabc << 1.0;
    // Looking at the earlier copy itself (keys 0, 1, 2) is duplicate-token attention, not induction.
    QTest::newRow("duplicate-token head")
        << QVector<QVector<double>>{{1, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0},
                                    {1, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0}}
        << abcabc << 0.0;
    // Row 3: 0.5 on key 1; row 4: 0.25 on key 2; row 5: 0 on key 3: (0.5 + 0.25 + 0) / 3.
    QTest::newRow("partial") << QVector<QVector<double>>{{1, 0, 0, 0, 0, 0},       {1, 0, 0, 0, 0, 0},
                                                         {1, 0, 0, 0, 0, 0},       {0, 0.5, 0, 0.5, 0, 0},
                                                         {0, 0, 0.25, 0, 0.75, 0}, {0, 0, 0, 0, 0, 1}}
                             << abcabc << 0.25;
    // "A A A" uniform causal: query 1 follows key 0 (target 1: 0.5); query 2 follows keys 0 and 1
    // (targets 1 and 2: 1/3 + 1/3): (0.5 + 2/3) / 2 = 7/12. Query 0 has nothing earlier.
    QTest::newRow("a token repeated thrice")
        << QVector<QVector<double>>{{1, 0, 0}, {0.5, 0.5, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}} << QStringList{"A", "A", "A"}
        << 7.0 / 12.0;
}

void TestAttentionStats::inductionScoreOfHandMadeMaps()
{
    QFETCH(QVector<QVector<double>>, map);
    QFETCH(QStringList, tokens);
    QFETCH(double, expected);
    std::vector<std::vector<double>> rows;
    for (const auto &r : map)
        rows.emplace_back(r.begin(), r.end());
    std::vector<std::string> labels;
    for (const QString &t : tokens)
        labels.push_back(t.toStdString());
    const AttentionSet set = handMade({rows}, labels);
    const HeadStats s = headStatistics(set, 0, 0, 0);
    QVERIFY(s.induction.has_value());
    QVERIFY2(close(*s.induction, expected),
             qPrintable(QString("induction %1, expected %2").arg(*s.induction).arg(expected)));
    // The whole-set form gives the same number.
    QVERIFY(close(*headStatistics(set).front().induction, expected));
}

void TestAttentionStats::inductionAbsentWithoutRepeatsOrLabels()
{
    const std::vector<std::vector<double>> map{{1, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}};
    QVERIFY(!headStatistics(handMade({map}, {"a", "b", "c"}), 0, 0, 0).induction);
    QVERIFY(!headStatistics(handMade({map}), 0, 0, 0).induction);
    QVERIFY(headStatistics(handMade({map}, {"a", "b", "a"}), 0, 0, 0).induction);
}

void TestAttentionStats::headDistancesRankTheLikeHeadFirst()
{
    // Head 0 and head 2 are the same previous-token head; head 1 attends to itself.
    const std::vector<std::vector<double>> previous{{1, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    const std::vector<std::vector<double>> self{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const std::vector<std::vector<double>> uniform{{1, 0, 0}, {0.5, 0.5, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}};
    const AttentionSet set = handMade({previous, self, previous, uniform});
    const auto stats = headStatistics(set);
    const std::vector<double> d = headDistances(stats, 0);
    QCOMPARE(d.size(), std::size_t(4));
    QCOMPARE(d[0], 0.0);
    QCOMPARE(d[2], 0.0);
    QVERIFY(d[1] > 0.0);
    QVERIFY(d[3] > 0.0);
    // By hand for one metric: `previous` is 1, 0, 1, 0.5 (mean 0.625, population sd sqrt(0.171875));
    // with only that metric differing the distance would be 1 / sd. All metrics: at least that much.
    QVERIFY(d[1] >= 1.0 / std::sqrt(0.171875) - 1e-9);
    // Two previous-token heads and two self heads: of the metrics, distance (2/3 vs 0), first (2/3
    // vs 1/3), self (1/3 vs 1) and previous (1 vs 0) differ, the rest agree. Two equal groups put
    // each differing metric 2 standard deviations apart, so the distance is sqrt(4 * 2²) = 4.
    const auto pairs = headStatistics(handMade({previous, self, previous, self}));
    const std::vector<double> fromPrevious = headDistances(pairs, 0);
    QVERIFY(close(fromPrevious[1], 4.0));
    QVERIFY(close(fromPrevious[2], 0.0));
    QVERIFY(close(fromPrevious[3], 4.0));
    QVERIFY(headDistances(stats, 99) == std::vector<double>(4, 0.0));
}

QTEST_GUILESS_MAIN(TestAttentionStats)
#include "tst_attentionstats.moc"
