// Q/K dumps written by scripts/attnscope_qk.py from a model run in PyTorch
// (tests/fixtures/qk-torch, made by make_qk_torch_fixture.py: a tiny Llama-like model with
// RoPE, GQA 4/2 and a sliding window of 5 in layer 1, q and k captured after RoPE and before
// repeat_kv) against the attention probabilities PyTorch's eager attention computed from the
// same q and k: the reader, the double reference and the pooled engine all give them back.

#include "../common/TestUtil.h"

#include "core/attention/QkAttention.h"
#include "core/formats/Npy.h"
#include "core/formats/QkDump.h"

#include <QObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <string>

using namespace attnscope;

namespace {

constexpr double kTolerance = 1e-5; // design.md's definition against PyTorch's float32 eager softmax

QString fixture(const char *name)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/qk-torch/%1").arg(QLatin1String(name)));
}

// eager_attentions.npy [L, H, Tq, Tk] at (l, h, i, j).
double eagerAt(const NpyArray &eager, int l, int h, Eigen::Index i, Eigen::Index j)
{
    const auto &s = eager.shape;
    return eager.data[size_t(((l * s[1] + h) * s[2] + i) * s[3] + j)];
}

// Empty when every cell of `got` (Tq x Tk) is within kTolerance of the eager map of (l, h);
// else the first cell that is not. `largest` keeps the largest difference seen.
template <typename Matrix>
std::string compareWithEager(const Matrix &got, const NpyArray &eager, int l, int h, double &largest)
{
    if (got.rows() != eager.shape[2] || got.cols() != eager.shape[3])
        return "layer " + std::to_string(l) + " head " + std::to_string(h) + ": " + std::to_string(got.rows()) + " x " +
               std::to_string(got.cols()) + " cells, eager has " + std::to_string(eager.shape[2]) + " x " +
               std::to_string(eager.shape[3]);
    for (Eigen::Index i = 0; i < got.rows(); ++i)
        for (Eigen::Index j = 0; j < got.cols(); ++j) {
            const double expected = eagerAt(eager, l, h, i, j);
            const double diff = std::abs(double(got(i, j)) - expected);
            largest = std::max(largest, diff);
            if (!(diff <= kTolerance))
                return "layer " + std::to_string(l) + " head " + std::to_string(h) + " cell (" + std::to_string(i) +
                       ", " + std::to_string(j) + "): " + std::to_string(double(got(i, j))) + ", eager " +
                       std::to_string(expected);
        }
    return {};
}

} // namespace

class TestQkTorch : public QObject
{
    Q_OBJECT

private slots:
    void factsAreTheCapturedModels_data();
    void factsAreTheCapturedModels();
    void referenceMatchesEager_data();
    void referenceMatchesEager();
    void pooledCellsMatchEager_data();
    void pooledCellsMatchEager();
    void slidingWindowShapesTheMap();

private:
    void dumps();
};

void TestQkTorch::dumps()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("firstQuery"); // position of the first query row
    QTest::newRow("f32") << fixture("f32") << "F32" << 0;
    QTest::newRow("bf16") << fixture("bf16") << "BF16" << 0;
    QTest::newRow("chunk, queries 12..19 against keys 0..19") << fixture("chunk") << "F32" << 12;
}

void TestQkTorch::factsAreTheCapturedModels_data()
{
    dumps();
}

// The index carries what the fixture's model is: 2 layers of GQA 4/2 with hd 8, scale
// 1/sqrt(8), causal, no window then a window of 5, and the chunk's positions.
void TestQkTorch::factsAreTheCapturedModels()
{
    QFETCH(QString, folder);
    QFETCH(QString, dtype);
    QFETCH(int, firstQuery);
    auto dump = QkDump::open(folder.toStdString());
    QVERIFY2(dump.ok(), dump.ok() ? "" : dump.message().c_str());
    QCOMPARE(dump->layers(), 2);
    QCOMPARE(dump->keys(), std::int64_t(20));
    QCOMPARE(dump->queries(), std::int64_t(20 - firstQuery));
    QCOMPARE(std::int64_t(dump->tokens().size()), dump->queries());
    QCOMPARE(std::int64_t(dump->keyTokens().size()), dump->keys());
    for (int l = 0; l < dump->layers(); ++l) {
        QCOMPARE(QString::fromStdString(dump->dtype(l)), dtype);
        const QkLayer facts = dump->facts(l);
        QCOMPARE(facts.heads, 4);
        QCOMPARE(facts.kvHeads, 2);
        QCOMPARE(facts.headDim, 8);
        QCOMPARE(facts.scale, 1.0 / std::sqrt(8.0));
        QVERIFY(facts.causal);
        QCOMPARE(facts.window, std::int64_t(l == 1 ? 5 : 0));
        QVERIFY(!facts.softcap && !facts.sinks);
        for (Eigen::Index i = 0; i < dump->queries(); ++i)
            QCOMPARE(facts.queryPosition(i), std::int64_t(firstQuery + i));
        for (Eigen::Index j = 0; j < dump->keys(); ++j)
            QCOMPARE(facts.keyPosition(j), std::int64_t(j));
    }
}

void TestQkTorch::referenceMatchesEager_data()
{
    dumps();
}

void TestQkTorch::referenceMatchesEager()
{
    QFETCH(QString, folder);
    auto dump = QkDump::open(folder.toStdString());
    QVERIFY2(dump.ok(), dump.ok() ? "" : dump.message().c_str());
    auto eager = readNpyFile((folder + "/eager_attentions.npy").toStdString());
    QVERIFY2(eager.ok(), eager.ok() ? "" : eager.message().c_str());
    QCOMPARE(eager->shape, (std::vector<std::int64_t>{dump->layers(), 4, dump->queries(), dump->keys()}));

    double largest = 0;
    for (int l = 0; l < dump->layers(); ++l) {
        auto layer = dump->layer(l);
        QVERIFY2(layer.ok(), layer.ok() ? "" : layer.message().c_str());
        const std::vector<MatrixD> weights = referenceQkWeights(**layer);
        QCOMPARE(int(weights.size()), (*layer)->heads);
        for (int h = 0; h < int(weights.size()); ++h) {
            const std::string diff = compareWithEager(weights[size_t(h)], *eager, l, h, largest);
            QVERIFY2(diff.empty(), diff.c_str());
        }
    }
    qInfo("largest |referenceQkWeights - eager| = %.3g", largest);
}

void TestQkTorch::pooledCellsMatchEager_data()
{
    dumps();
}

// With at least as many bins as rows and keys, every cell of the pooled path is one weight,
// and the row entropies follow from the eager map.
void TestQkTorch::pooledCellsMatchEager()
{
    QFETCH(QString, folder);
    auto dump = QkDump::open(folder.toStdString());
    QVERIFY2(dump.ok(), dump.ok() ? "" : dump.message().c_str());
    auto eager = readNpyFile((folder + "/eager_attentions.npy").toStdString());
    QVERIFY2(eager.ok(), eager.ok() ? "" : eager.message().c_str());

    double largest = 0;
    for (int l = 0; l < dump->layers(); ++l) {
        auto layer = dump->layer(l);
        QVERIFY2(layer.ok(), layer.ok() ? "" : layer.message().c_str());
        for (const PoolMode mode : {PoolMode::Max, PoolMode::Mean}) {
            PoolOptions options;
            options.bins = std::max(dump->queries(), dump->keys()) + 3;
            options.mode = mode;
            auto pooled = computePooledQk(**layer, options);
            QVERIFY2(pooled.ok(), pooled.ok() ? "" : pooled.message().c_str());
            QCOMPARE(int(pooled->pooled.size()), (*layer)->heads);
            QCOMPARE(pooled->entropy.rows(), Eigen::Index((*layer)->heads));
            QCOMPARE(pooled->entropy.cols(), Eigen::Index(dump->queries()));
            for (int h = 0; h < (*layer)->heads; ++h) {
                const std::string diff = compareWithEager(pooled->pooled[size_t(h)], *eager, l, h, largest);
                QVERIFY2(diff.empty(), diff.c_str());
                for (Eigen::Index i = 0; i < dump->queries(); ++i) {
                    double entropy = 0;
                    for (Eigen::Index j = 0; j < dump->keys(); ++j) {
                        const double w = eagerAt(*eager, l, h, i, j);
                        if (w > 0)
                            entropy -= w * std::log(w);
                    }
                    QVERIFY2(std::abs(pooled->entropy(h, i) - entropy) <= 1e-4,
                             qPrintable(QStringLiteral("layer %1 head %2 row %3: entropy %4, eager %5")
                                            .arg(l)
                                            .arg(h)
                                            .arg(i)
                                            .arg(pooled->entropy(h, i))
                                            .arg(entropy)));
                }
            }
        }
    }
    qInfo("largest |computePooledQk cell - eager| = %.3g", largest);
}

// The fixture tells a window apart: layer 1's weights without its window of 5 are not the
// eager map (so the comparisons above see the window, not only the causal mask).
void TestQkTorch::slidingWindowShapesTheMap()
{
    const QString folder = fixture("f32");
    auto dump = QkDump::open(folder.toStdString());
    QVERIFY2(dump.ok(), dump.ok() ? "" : dump.message().c_str());
    auto eager = readNpyFile((folder + "/eager_attentions.npy").toStdString());
    QVERIFY2(eager.ok(), eager.ok() ? "" : eager.message().c_str());
    auto layer = dump->layer(1);
    QVERIFY2(layer.ok(), layer.ok() ? "" : layer.message().c_str());
    QkLayer unwindowed = **layer;
    QCOMPARE(unwindowed.window, std::int64_t(5));
    unwindowed.window = 0;
    const std::vector<MatrixD> weights = referenceQkWeights(unwindowed);
    // Rows past the window lose keys: eager gives them weight 0 where the unwindowed map does not.
    for (int h = 0; h < unwindowed.heads; ++h) {
        double largest = 0;
        for (Eigen::Index i = 0; i < weights[size_t(h)].rows(); ++i)
            for (Eigen::Index j = 0; j < weights[size_t(h)].cols(); ++j)
                largest = std::max(largest, std::abs(weights[size_t(h)](i, j) - eagerAt(*eager, 1, h, i, j)));
        QVERIFY2(largest > 1e-3, qPrintable(QStringLiteral("head %1: only %2 apart").arg(h).arg(largest)));
    }
}

QTEST_GUILESS_MAIN(TestQkTorch)
#include "tst_qktorch.moc"
