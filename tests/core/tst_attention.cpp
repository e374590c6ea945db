// The CPU engine against the double-precision reference, for every semantic family of
// design.md, plus the tutorial's worked example and the validation messages.

#include "../common/BackendChecks.h"
#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/attention/Mask.h"
#include "core/attention/RandomProblem.h"
#include "core/attention/ReferenceAttention.h"
#include "core/attention/Validation.h"
#include "core/formats/ProjectFile.h"

#include <QObject>
#include <QTest>

#include <atomic>
#include <limits>
#include <optional>
#include <thread>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

class TestAttention : public QObject
{
    Q_OBJECT

private slots:
    void tutorialWorkedExample();
    void matchesReference_data();
    void modernAttentionMatchesReference();
    void modernAttentionMatchesReference_data();
    void matchesReference();
    void fullyMaskedRows_data();
    void fullyMaskedRows();
    void largeLogitsDoNotOverflow();
    void maskPartsCombineByAnd();
    void singleThreadMatchesMultiThread();
    void recycledTracesGiveTheSameResults();
    void weightsAloneMatchTheFullTrace_data();
    void siluMatchesItsDefinition();
    void weightsAloneMatchTheFullTrace();
    void concurrentComputesKeepTheirOwnThreadCounts();
    void validationErrors_data();
    void validationErrors();
    void hugeProblemIsRefusedBeforeAllocating();
    void cancelledComputeReturnsCancelled();
};

namespace {

// The largest |a - b| (NaN where either holds one).
float maxAbsDiff(const MatrixF &a, const MatrixF &b)
{
    return (a - b).cwiseAbs().maxCoeff();
}

} // namespace

void TestAttention::tutorialWorkedExample()
{
    auto project = readProjectFile(test::sourcePathStd("resources/examples/self-attention-tutorial.attnscope.json"));
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    CpuBackend cpu;
    auto trace = cpu.compute(project->problem);
    QVERIFY(trace.ok());
    // The tutorial's printed first output row, to 4 decimals.
    const float expected[3] = {1.9366f, 6.6831f, 1.5951f};
    for (int c = 0; c < 3; ++c)
        QVERIFY2(std::abs(trace->output(0, c) - expected[c]) < 5e-5f,
                 qPrintable(QStringLiteral("output[0][%1] = %2").arg(c).arg(trace->output(0, c))));
    // The tutorial's Q, K, V (integers) and the unscaled score of the first query.
    QCOMPARE(trace->q[0](0, 0), 1.0f);
    QCOMPARE(trace->q[0](2, 2), 3.0f);
    QCOMPARE(trace->k[0](1, 1), 4.0f);
    QCOMPARE(trace->v[0](1, 1), 8.0f);
    QCOMPARE(trace->scores[0](0, 0), 2.0f);
    QCOMPARE(trace->scores[0](0, 1), 4.0f);
    QCOMPARE(trace->scores[0](0, 2), 4.0f);

    auto ref = referenceAttention(project->problem);
    QVERIFY(ref.ok());
    const std::string diff = test::compareTrace(*trace, *ref, true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestAttention::matchesReference_data()
{
    test::addSemanticCases();
}

void TestAttention::modernAttentionMatchesReference_data()
{
    test::addModernCases();
}

// design.md's "Modern attention" on the CPU engine: each field alone and combined, against the
// double reference (itself checked against PyTorch in tst_torchfixtures).
void TestAttention::modernAttentionMatchesReference()
{
    QFETCH(Case, c);
    const AttentionProblem p = makeProblem(c);
    auto ref = referenceAttention(p);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
    CpuBackend cpu;
    auto trace = cpu.compute(p);
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
    const std::string diff = test::compareTrace(*trace, *ref, c.fill == MaskFill::NegInf);
    QVERIFY2(diff.empty(), diff.c_str());
    QCOMPARE(int(trace->k.size()), c.kvHeads > 0 ? c.kvHeads : c.heads);
    QCOMPARE(int(trace->qBeforeRope.size()), c.rope ? c.heads : 0);
    // A sink takes its share: every row with an allowed key sums to less than 1.
    if (c.sinks)
        for (int h = 0; h < c.heads; ++h)
            for (Eigen::Index i = 0; i < p.tq(); ++i)
                if (!trace->emptyRows[size_t(i)])
                    QVERIFY(trace->weights[size_t(h)].row(i).sum() < 1.0f);
}

void TestAttention::matchesReference()
{
    QFETCH(Case, c);
    const AttentionProblem p = makeProblem(c);
    auto ref = referenceAttention(p);
    QVERIFY2(ref.ok(), ref.ok() ? "" : ref.message().c_str());
    CpuBackend cpu;
    auto trace = cpu.compute(p);
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
    const std::string diff = test::compareTrace(*trace, *ref, c.fill == MaskFill::NegInf);
    QVERIFY2(diff.empty(), diff.c_str());
    // The trace has every tensor with the shapes design.md gives.
    QCOMPARE(trace->heads(), c.heads);
    QCOMPARE(trace->scores[0].rows(), p.tq());
    QCOMPARE(trace->scores[0].cols(), p.tk());
    QCOMPARE(trace->headOutputs[0].cols(), Eigen::Index(c.dv));
    QCOMPARE(trace->context.cols(), Eigen::Index(c.heads * c.dv));
    QCOMPARE(trace->output.cols(), p.dOut());
}

void TestAttention::fullyMaskedRows_data()
{
    test::addMaskFillRows();
}

void TestAttention::fullyMaskedRows()
{
    QFETCH(int, fill);
    CpuBackend cpu;
    const std::string failure = test::checkFullyMaskedRow(cpu, MaskFill(fill));
    QVERIFY2(failure.empty(), failure.c_str());
}

void TestAttention::largeLogitsDoNotOverflow()
{
    Case c;
    c.scaleMode = ScaleMode::None;
    c.inputScale = 40.0; // |q·k| reaches 1e4 and more
    c.causal = true;
    const AttentionProblem p = makeProblem(c);
    CpuBackend cpu;
    auto t = cpu.compute(p);
    auto ref = referenceAttention(p);
    QVERIFY(t.ok() && ref.ok());
    QVERIFY2(ref->scores[0].cwiseAbs().maxCoeff() > 1e4, "the case must really produce logits beyond 1e4");
    for (const auto &w : t->weights)
        QVERIFY(w.allFinite());
    const std::string diff = test::compareTrace(*t, *ref, true);
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestAttention::maskPartsCombineByAnd()
{
    Case c;
    c.tq = 4;
    c.causal = true;
    c.padding = true;
    c.custom = true;
    const AttentionProblem p = makeProblem(c);
    const MaskMatrix m = effectiveMask(p);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            const bool expected = j <= i && p.mask.keyPadding[size_t(j)] && (*p.mask.allowed)(i, j);
            QCOMPARE(bool(m(i, j)), expected);
        }
}

void TestAttention::singleThreadMatchesMultiThread()
{
    RandomProblemOptions o;
    o.tokens = 200;
    o.modelDim = 32;
    o.heads = 4;
    o.causal = true;
    const AttentionProblem p = randomProblem(o);
    auto one = CpuBackend(1).compute(p);
    auto many = CpuBackend(4).compute(p);
    QVERIFY(one.ok() && many.ok());
    // The thread count sets the row blocks, and OpenBLAS's AVX2 and AVX-512 sgemm kernels round
    // a block's scores by its shape (1 ulp seen on an AVX-512 EPYC; bit-equal with Eigen's
    // product or OpenBLAS's Sandy Bridge kernels): equal within float rounding.
    QVERIFY(maxAbsDiff(one->output, many->output) <= 1e-5f);
    QVERIFY(maxAbsDiff(one->weights[3], many->weights[3]) <= 1e-6f);
    QVERIFY(one->weights[3].cwiseEqual(0.0f) == many->weights[3].cwiseEqual(0.0f)); // the same keys seen
}

namespace {

// Every number of two traces: the projections exactly (the same engine, the same thread count);
// what follows the scores' GEMM within float rounding, since OpenBLAS's AVX2 and AVX-512 sgemm
// kernels round a block by its shape, and weights alone compute only the columns a block sees.
void compareTraces(const AttentionTrace &a, const AttentionTrace &b)
{
    auto closeList = [](const std::vector<MatrixF> &x, const std::vector<MatrixF> &y, float tolerance) {
        if (x.size() != y.size())
            return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (x[i].rows() != y[i].rows() || x[i].cols() != y[i].cols() || x[i].allFinite() != y[i].allFinite() ||
                !(maxAbsDiff(x[i], y[i]) <= tolerance) || x[i].cwiseEqual(0.0f) != y[i].cwiseEqual(0.0f))
                return false;
        return true;
    };
    auto sameList = [](const std::vector<MatrixF> &x, const std::vector<MatrixF> &y) {
        if (x.size() != y.size())
            return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (x[i].rows() != y[i].rows() || x[i].cols() != y[i].cols() || x[i] != y[i])
                return false;
        return true;
    };
    QVERIFY(sameList(a.q, b.q));
    QVERIFY(sameList(a.k, b.k));
    QVERIFY(sameList(a.v, b.v));
    QVERIFY(closeList(a.scores, b.scores, 1e-5f));
    QVERIFY(closeList(a.weights, b.weights, 1e-6f));
    QVERIFY(closeList(a.headOutputs, b.headOutputs, 1e-5f));
    QVERIFY(sameList(a.qBeforeRope, b.qBeforeRope));
    QVERIFY(sameList(a.kBeforeRope, b.kBeforeRope));
    QVERIFY(closeList({a.context, a.output}, {b.context, b.output}, 1e-5f));
    QVERIFY(a.allowed == b.allowed);
    QVERIFY(a.emptyRows == b.emptyRows);
}

void poison(AttentionTrace &t)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (auto *list : {&t.q, &t.k, &t.v, &t.scores, &t.weights, &t.headOutputs, &t.qBeforeRope, &t.kBeforeRope})
        for (MatrixF &m : *list)
            m.setConstant(nan);
    t.context.setConstant(nan);
    t.output.setConstant(nan);
    t.allowed.setConstant(7);
}

} // namespace

void TestAttention::recycledTracesGiveTheSameResults()
{
    // A backend handed each trace back computes the next problem in that trace's memory; every
    // number must be what a backend with nothing recycled gives, whatever shapes came before.
    // The recycled traces are filled with NaN first, so an element left unwritten shows.
    auto problem = [](Eigen::Index tokens, Eigen::Index dim, int heads, bool causal, bool modern) {
        RandomProblemOptions o;
        o.tokens = tokens;
        o.modelDim = dim;
        o.heads = heads;
        o.causal = causal;
        o.seed = std::uint64_t(tokens * 31 + dim);
        AttentionProblem p = randomProblem(o);
        if (modern) { // RoPE (q and k kept before it), sinks, soft-capping, a custom mask part
            p.spec.rope = RopeSpec{};
            p.weights.sinks = VectorF::LinSpaced(heads, -1.0f, 2.0f);
            p.spec.softcap = 5.0;
            p.mask.keyPadding.assign(size_t(tokens), true);
            p.mask.keyPadding[size_t(tokens / 3)] = false;
        }
        return p;
    };
    // Large enough for two threads and for the projections to be split into row bands.
    const std::vector<AttentionProblem> problems = {
        problem(300, 128, 4, true, false), problem(300, 128, 4, false, true), problem(120, 64, 8, false, true),
        problem(40, 32, 2, false, false),  problem(300, 128, 4, true, false),
    };
    CpuBackend recycling(2);
    const float *previousWeights = nullptr;
    Eigen::Index previousSize = 0;
    int reused = 0;
    for (size_t i = 0; i < problems.size(); ++i) {
        auto got = recycling.compute(problems[i]);
        auto expected = CpuBackend(2).compute(problems[i]);
        QVERIFY2(got.ok() && expected.ok(), qPrintable(QString::number(i)));
        compareTraces(*got, *expected);
        if (QTest::currentTestFailed())
            QFAIL(qPrintable(QStringLiteral("problem %1 differs after recycling").arg(i)));
        // Where the shape repeats, the maps were written into the recycled trace's memory.
        if (got->weights[0].size() == previousSize) {
            QCOMPARE(got->weights[0].data(), previousWeights);
            ++reused;
        }
        previousWeights = got->weights[0].data();
        previousSize = got->weights[0].size();
        poison(*got);
        recycling.recycle(std::move(got).value());
    }
    QCOMPARE(reused, 1);
}

void TestAttention::weightsAloneMatchTheFullTrace_data()
{
    test::addModernCases();
}

// keepScores = false (what a model's forward asks): the softmax runs in place over only the
// columns the mask lets each row block see. Weights and outputs must be what the full trace
// has, on a recycled trace filled with NaN (a column left unwritten shows), and scores empty.
void TestAttention::weightsAloneMatchTheFullTrace()
{
    QFETCH(Case, c);
    std::vector<AttentionProblem> problems = {makeProblem(c)};
    for (const bool causal : {true, false}) { // larger: several row blocks over two threads
        RandomProblemOptions o;
        o.tokens = 300;
        o.modelDim = 64;
        o.heads = 4;
        o.causal = causal;
        o.seed = 7;
        AttentionProblem p = randomProblem(o);
        p.mask.window = c.window;
        if (c.softcap > 0)
            p.spec.softcap = c.softcap;
        p.spec.maskFill = c.fill;
        if (c.sinks)
            p.weights.sinks = VectorF::LinSpaced(4, -1.0f, 2.0f);
        p.mask.keyPadding.assign(300, true); // a padded tail: rows with no key under a window
        for (size_t j = 200; j < 300; ++j)
            p.mask.keyPadding[j] = false;
        problems.push_back(std::move(p));
    }
    CpuBackend recycling(2);
    for (size_t i = 0; i < problems.size(); ++i) {
        AttentionProblem weightsOnly = problems[i];
        weightsOnly.keepScores = false;
        auto full = CpuBackend(2).compute(problems[i]);
        QVERIFY2(full.ok(), full.ok() ? "" : full.message().c_str());
        for (int round = 0; round < 2; ++round) { // the second round writes into the first's memory
            auto got = recycling.compute(weightsOnly);
            QVERIFY2(got.ok(), got.ok() ? "" : got.message().c_str());
            QVERIFY(got->scores.empty());
            AttentionTrace expected = *full;
            expected.scores.clear();
            compareTraces(*got, expected);
            if (QTest::currentTestFailed())
                QFAIL(qPrintable(QStringLiteral("problem %1, round %2: the weights differ").arg(i).arg(round)));
            poison(*got);
            recycling.recycle(std::move(got).value());
        }
    }
}

// The model forward's SiLU runs on the softmax's exp: within a few ulp of x·sigmoid(x) in
// double, from where exp(-x) overflows float to where it underflows, and exact at 0.
void TestAttention::siluMatchesItsDefinition()
{
    std::vector<float> x;
    for (float v = -120.0f; v <= 120.0f; v += 0.0371f)
        x.push_back(v);
    x.insert(x.end(), {0.0f, -0.0f, 1e-30f, -1e-30f, 88.5f, -88.5f, 87.3f, -87.3f, 3e38f, -3e38f});
    std::vector<float> y = x;
    siluInPlace(y.data(), Eigen::Index(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
        const double expected = double(x[i]) / (1.0 + std::exp(-double(x[i])));
        const double error = std::abs(double(y[i]) - expected);
        QVERIFY2(std::isfinite(y[i]) && error <= 4e-7 * std::abs(expected) + 1e-35,
                 qPrintable(QStringLiteral("silu(%1) = %2, expected %3").arg(x[i]).arg(y[i]).arg(expected)));
    }
}

void TestAttention::concurrentComputesKeepTheirOwnThreadCounts()
{
    // Workers computing side by side (the window's compute, model and attention workers) each
    // chose their thread count through Eigen::setNbThreads, one process-wide value they raced
    // on (ThreadSanitizer: a data race in Eigen's manage_multi_threading). The count is now each
    // thread's own (ScopedCpuThreads): the `tsan` preset runs this with no report, and each
    // result equals the one computed alone.
    RandomProblemOptions o;
    o.tokens = 160;
    o.modelDim = 128; // large enough for the engine to use several threads
    o.heads = 4;
    const AttentionProblem p = randomProblem(o);
    auto alone = CpuBackend(1).compute(p);
    QVERIFY(alone.ok());
    std::atomic<int> mismatches{0};
    auto worker = [&](int threads) {
        CpuBackend engine(threads);
        for (int i = 0; i < 4; ++i) {
            auto r = engine.compute(p);
            if (!r.ok() || test::compareMatrix("output", r->output, alone->output, test::Tolerance::values()) != "")
                ++mismatches;
        }
    };
    std::thread a(worker, 1), b(worker, 2);
    a.join();
    b.join();
    QCOMPARE(mismatches.load(), 0);
}

void TestAttention::validationErrors_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("message");
    QTest::newRow("heads = 0") << 0 << "heads: expected a whole number of at least 1, found 0";
    QTest::newRow("Wk columns") << 1 << "weights.k: expected 6 x 6 (d_kv x heads*headDimQK), found 6 x 5";
    QTest::newRow("Wq rows") << 2 << "weights.q: expected 6 x 6 (d_q x heads*headDimQK), found 7 x 6";
    QTest::newRow("Wo rows") << 3 << "weights.o: expected 6 x 5 (heads*headDimV x d_out), found 4 x 5";
    QTest::newRow("bias size") << 4 << "weights.vBias: expected 6 values (heads*headDimV), found 2";
    QTest::newRow("NaN input") << 5 << "query.x[1][2]: expected a finite number, found NaN";
    QTest::newRow("padding size") << 6 << "mask.keyPadding: expected 4 values (one per key token), found 3";
    QTest::newRow("mask shape") << 7 << "mask.allowed: expected 4 x 4 (query tokens x key tokens), found 4 x 2";
    QTest::newRow("empty input") << 8 << "query.x: expected at least one token and one dimension, found 0 x 0";
    QTest::newRow("oBias without Wo") << 9
                                      << "weights.oBias: given without weights.o (an output bias needs an output "
                                         "projection)";
    QTest::newRow("infinite weight") << 10 << "weights.v[0][0]: expected a finite number, found -Infinity";
    QTest::newRow("value.x rows") << 11 << "value.x: expected 4 rows (one per key token), found 2";
    QTest::newRow("weights.v for value.x") << 12 << "weights.v: expected 5 x 6 (d_v_in x heads*headDimV), found 6 x 6";
    QTest::newRow("NaN value input") << 13 << "value.x[3][4]: expected a finite number, found NaN";
    // design.md's "Modern attention", each refused by name.
    QTest::newRow("kvHeads not dividing heads") << 14
                                                << "kvHeads: expected a whole number that divides heads (4), "
                                                   "found 3";
    QTest::newRow("RoPE with an odd dK") << 15
                                         << "rope: needs an even headDimQK (dimension i turns with dimension i + "
                                            "dK/2), found 3";
    QTest::newRow("negative window") << 16 << "mask.window: expected a whole number of at least 1, found -2";
    QTest::newRow("sinks of the wrong length") << 17 << "sinks: expected 4 values (one per query head), found 3";
    QTest::newRow("Wk without the groups' columns")
        << 18 << "weights.k: expected 6 x 8 (d_kv x kvHeads*headDimQK), found 6 x 16";
    QTest::newRow("RoPE positions of the wrong length") << 19
                                                        << "rope.queryPositions: expected 4 positions (one per row), "
                                                           "found 2";
    QTest::newRow("negative RoPE position") << 20
                                            << "rope.queryPositions[1]: expected a whole number of 0 or more, "
                                               "found -1";
    QTest::newRow("soft-cap of 0") << 21 << "softcap: expected a number above 0, found 0";
    QTest::newRow("NaN sink") << 22 << "sinks[2]: expected a finite number, found NaN";
    QTest::newRow("RoPE base of 0") << 23 << "rope.base: expected a number above 0, found 0";
}

void TestAttention::validationErrors()
{
    QFETCH(int, which);
    QFETCH(QString, message);
    Case c;
    c.biases = true;
    AttentionProblem p = makeProblem(c);
    switch (which) {
    case 0:
        p.spec.heads = 0;
        break;
    case 1:
        p.weights.k.conservativeResize(6, 5);
        break;
    case 2:
        p.weights.q.conservativeResize(7, 6);
        break;
    case 3:
        p.weights.o->conservativeResize(4, 5);
        break;
    case 4:
        p.weights.vBias->conservativeResize(2);
        break;
    case 5:
        p.xq(1, 2) = std::nanf("");
        break;
    case 6:
        p.mask.keyPadding = {true, true, false};
        break;
    case 7:
        p.mask.allowed = MaskMatrix::Ones(4, 2);
        break;
    case 8:
        p.xq.resize(0, 0);
        break;
    case 9:
        p.weights.o.reset();
        break;
    case 10:
        p.weights.v(0, 0) = -INFINITY;
        break;
    case 11:
    case 12:
    case 13: {
        // A cross-attention problem with a separate value input of width 5.
        Case cross = c;
        cross.mode = AttentionMode::Cross;
        cross.dvIn = 5;
        p = makeProblem(cross);
        if (which == 11)
            p.xv->conservativeResize(2, 5);
        else if (which == 12)
            p.weights.v = MatrixF::Ones(6, 6);
        else
            (*p.xv)(3, 4) = std::nanf("");
        break;
    }
    default: {
        // Four heads of width 4 sharing two key/value heads, with RoPE, sinks and a window.
        Case modern = c;
        modern.heads = 4;
        modern.dk = 4;
        modern.kvHeads = 2;
        modern.rope = true;
        modern.sinks = true;
        modern.window = 2;
        p = makeProblem(modern);
        QVERIFY(validateProblem(p).ok());
        if (which == 14)
            p.spec.kvHeads = 3;
        else if (which == 15) {
            Case odd = modern;
            odd.dk = 3;
            odd.rope = false;
            p = makeProblem(odd);
            p.spec.rope = RopeSpec{};
        } else if (which == 16)
            p.mask.window = -2;
        else if (which == 17)
            p.weights.sinks->conservativeResize(3);
        else if (which == 18)
            p.weights.k = MatrixF::Ones(6, 16);
        else if (which == 19)
            p.spec.rope->queryPositions = {0, 1};
        else if (which == 20)
            p.spec.rope->queryPositions = {0, -1, 2, 3};
        else if (which == 21)
            p.spec.softcap = 0.0;
        else if (which == 22)
            (*p.weights.sinks)[2] = std::nanf("");
        else if (which == 23)
            p.spec.rope->base = 0.0;
        break;
    }
    }
    Status s = validateProblem(p);
    QVERIFY(!s.ok());
    QCOMPARE(QString::fromStdString(s.message()), message);
    // Every backend refuses through the same check.
    auto t = CpuBackend().compute(p);
    QVERIFY(!t.ok());
    QCOMPARE(QString::fromStdString(t.message()), message);
    auto r = referenceAttention(p);
    QVERIFY(!r.ok());
}

void TestAttention::hugeProblemIsRefusedBeforeAllocating()
{
    // 200k tokens with 64 heads would need ~10 TiB of scores; validation must say so without
    // touching that memory (the inputs themselves are tiny: one dimension).
    AttentionProblem p;
    p.spec.heads = 64;
    p.xq = MatrixF::Ones(200000, 1);
    p.weights.q = p.weights.k = p.weights.v = MatrixF::Ones(1, 64);
    Status s = validateProblem(p);
    QVERIFY(!s.ok());
    QVERIFY2(QString::fromStdString(s.message()).startsWith("size: this problem needs"), s.message().c_str());
}

// The full CPU compute checks its cancel flag between (head, row block) tasks: set before, it
// computes nothing; cleared, the same backend computes again; set from another thread while a
// large compute runs, it returns Cancelled instead of the trace.
void TestAttention::cancelledComputeReturnsCancelled()
{
    Case c;
    c.tq = 1024;
    c.dq = 64;
    c.heads = 8;
    c.dk = 16;
    c.dv = 16;
    const AttentionProblem p = makeProblem(c);
    std::atomic<bool> cancel{true};
    CpuBackend cpu;
    cpu.setComputeControl({&cancel, nullptr});
    auto before = cpu.compute(p);
    QVERIFY(!before.ok());
    QCOMPARE(before.kind(), ErrorKind::Cancelled);
    cancel = false;
    Case small;
    QVERIFY(cpu.compute(makeProblem(small)).ok());

    QVERIFY(cpu.compute(p).ok());

    // Set the flag once the compute reports a tenth of its tasks done, so the test does not
    // depend on how fast the machine is.
    std::atomic<double> progress{0.0};
    cpu.setComputeControl({&cancel, &progress});
    std::optional<Result<AttentionTrace>> result;
    std::atomic<bool> returned{false};
    std::thread worker([&] {
        result.emplace(cpu.compute(p));
        returned = true;
    });
    while (progress.load() < 0.1 && !returned.load())
        std::this_thread::yield();
    const bool finishedFirst = returned;
    cancel = true;
    worker.join();
    QVERIFY2(!finishedFirst, "the compute ended before it could be cancelled: make it larger");
    QVERIFY(result && !result->ok());
    QCOMPARE(result->kind(), ErrorKind::Cancelled);
}

QTEST_GUILESS_MAIN(TestAttention)
#include "tst_attention.moc"
