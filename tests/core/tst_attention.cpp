// The CPU engine against the double-precision reference, for every semantic family of
// design.md, plus the tutorial's worked example and the validation messages.

#include "../common/TestUtil.h"

#include "core/CpuBackend.h"
#include "core/Mask.h"
#include "core/ProjectFile.h"
#include "core/RandomProblem.h"
#include "core/ReferenceAttention.h"
#include "core/Validation.h"

#include <QObject>
#include <QTest>

using namespace attnscope;

namespace {

struct Case {
    AttentionMode mode = AttentionMode::Self;
    int tq = 4, tk = 4, dq = 6, dkv = 6;
    int heads = 2, dk = 3, dv = 3;
    bool biases = false, outputProjection = true;
    ScaleMode scaleMode = ScaleMode::InvSqrtDk;
    double scaleValue = 1.0;
    MaskFill fill = MaskFill::NegInf;
    bool causal = false, padding = false, custom = false;
    double inputScale = 1.0; // large values drive the logits to ~1e4
    int dOut = 5;
};

AttentionProblem makeProblem(const Case &c, std::uint64_t seed = 42)
{
    AttentionProblem p;
    p.spec.mode = c.mode;
    p.spec.heads = c.heads;
    p.spec.headDimQK = c.dk;
    p.spec.headDimV = c.dv;
    p.spec.scaleMode = c.scaleMode;
    p.spec.scaleValue = c.scaleValue;
    p.spec.maskFill = c.fill;
    const bool cross = c.mode == AttentionMode::Cross;
    const int tk = cross ? c.tk : c.tq, dkv = cross ? c.dkv : c.dq;
    p.xq = initMatrix(c.tq, c.dq, InitKind::Gaussian, seed, c.inputScale);
    if (cross)
        p.xkv = initMatrix(tk, dkv, InitKind::Gaussian, seed + 1, c.inputScale);
    p.weights.q = initMatrix(c.dq, c.heads * c.dk, InitKind::Gaussian, seed + 2, 0.7);
    p.weights.k = initMatrix(dkv, c.heads * c.dk, InitKind::Gaussian, seed + 3, 0.7);
    p.weights.v = initMatrix(dkv, c.heads * c.dv, InitKind::Gaussian, seed + 4, 0.7);
    if (c.outputProjection)
        p.weights.o = initMatrix(c.heads * c.dv, c.dOut, InitKind::Gaussian, seed + 5, 0.7);
    if (c.biases) {
        p.weights.qBias = initMatrix(1, c.heads * c.dk, InitKind::Gaussian, seed + 6, 0.3);
        p.weights.kBias = initMatrix(1, c.heads * c.dk, InitKind::Gaussian, seed + 7, 0.3);
        p.weights.vBias = initMatrix(1, c.heads * c.dv, InitKind::Gaussian, seed + 8, 0.3);
        if (c.outputProjection)
            p.weights.oBias = initMatrix(1, c.dOut, InitKind::Gaussian, seed + 9, 0.3);
    }
    p.mask.causal = c.causal;
    if (c.padding) {
        p.mask.keyPadding.assign(size_t(tk), true);
        p.mask.keyPadding.back() = false;
        if (tk > 2)
            p.mask.keyPadding[size_t(tk) - 2] = false;
    }
    if (c.custom) {
        // A checkerboard-like pattern with one fully blocked query row (row 1).
        MaskMatrix allowed(c.tq, tk);
        for (int i = 0; i < c.tq; ++i)
            for (int j = 0; j < tk; ++j)
                allowed(i, j) = (i + 2 * j) % 3 != 0 ? 1 : 0;
        if (c.tq > 1)
            allowed.row(1).setZero();
        p.mask.allowed = allowed;
    }
    return p;
}

} // namespace

Q_DECLARE_METATYPE(Case)

class TestAttention : public QObject
{
    Q_OBJECT

private slots:
    void tutorialWorkedExample();
    void matchesReference_data();
    void matchesReference();
    void fullyMaskedRows_data();
    void fullyMaskedRows();
    void largeLogitsDoNotOverflow();
    void maskPartsCombineByAnd();
    void singleThreadMatchesMultiThread();
    void validationErrors_data();
    void validationErrors();
    void hugeProblemIsRefusedBeforeAllocating();
};

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
    QTest::addColumn<Case>("c");
    Case base;
    QTest::newRow("self, 2 heads") << base;
    Case c = base;
    c.heads = 1;
    QTest::newRow("one head") << c;
    c = base;
    c.heads = 8;
    c.dk = 2;
    c.dv = 2;
    QTest::newRow("eight heads") << c;
    c = base;
    c.dk = 5;
    c.dv = 2;
    QTest::newRow("dK != dV") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 3;
    c.tk = 7;
    c.dq = 4;
    c.dkv = 9;
    QTest::newRow("cross, Tq != Tk, d_q != d_kv") << c;
    c.dk = 4;
    c.dv = 1;
    c.padding = true;
    QTest::newRow("cross, dK != dV, padded source") << c;
    c = base;
    c.biases = true;
    QTest::newRow("biases") << c;
    c = base;
    c.outputProjection = false;
    QTest::newRow("no Wo") << c;
    c.biases = true;
    QTest::newRow("no Wo, biases") << c;
    c = base;
    c.scaleMode = ScaleMode::None;
    QTest::newRow("scale none") << c;
    c.scaleMode = ScaleMode::Custom;
    c.scaleValue = 0.37;
    QTest::newRow("scale 0.37") << c;
    c = base;
    c.causal = true;
    c.tq = 6;
    QTest::newRow("causal") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("causal, -1e9") << c;
    c = base;
    c.padding = true;
    QTest::newRow("key padding") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("key padding, -1e9") << c;
    c = base;
    c.custom = true;
    c.tq = 5;
    QTest::newRow("custom mask") << c;
    c.causal = true;
    c.padding = true;
    QTest::newRow("causal + padding + custom") << c;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("causal + padding + custom, -1e9") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 6;
    c.tk = 4;
    c.dkv = 3;
    c.causal = true;
    c.custom = true;
    c.biases = true;
    QTest::newRow("cross, causal + custom, Tq > Tk") << c;
    c = base;
    c.tq = 1;
    QTest::newRow("one token") << c;
    c = base;
    c.tq = 150;
    c.causal = true;
    c.heads = 3;
    c.dk = 7;
    c.dv = 5;
    c.biases = true;
    QTest::newRow("150 tokens, causal (several row blocks)") << c;
    c.causal = false;
    c.padding = true;
    c.custom = true;
    QTest::newRow("150 tokens, padding + custom") << c;
    c = base;
    c.mode = AttentionMode::Cross;
    c.tq = 129;
    c.tk = 65;
    c.causal = true;
    c.fill = MaskFill::NegLarge;
    QTest::newRow("cross 129 x 65, causal, -1e9 (empty rows are none)") << c;
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
    QTest::addColumn<int>("fill");
    QTest::newRow("-inf: weights and context row exactly 0") << int(MaskFill::NegInf);
    QTest::newRow("-1e9: uniform weights") << int(MaskFill::NegLarge);
}

void TestAttention::fullyMaskedRows()
{
    QFETCH(int, fill);
    Case c;
    c.tq = 4;
    c.custom = true; // row 1 has no allowed key
    c.biases = true;
    c.fill = MaskFill(fill);
    const AttentionProblem p = makeProblem(c);
    CpuBackend cpu;
    auto t = cpu.compute(p);
    QVERIFY(t.ok());
    QCOMPARE(t->emptyRows, (std::vector<bool>{false, true, false, false}));
    for (int h = 0; h < c.heads; ++h) {
        const auto row = t->weights[size_t(h)].row(1);
        if (c.fill == MaskFill::NegInf) {
            QVERIFY((row.array() == 0.0f).all());
            QVERIFY((t->headOutputs[size_t(h)].row(1).array() == 0.0f).all());
        } else {
            for (Eigen::Index j = 0; j < row.size(); ++j)
                QVERIFY(std::abs(row[j] - 1.0f / float(row.size())) < 1e-7f);
        }
    }
    if (c.fill == MaskFill::NegInf) {
        QVERIFY((t->context.row(1).array() == 0.0f).all());
        // output = 0·Wo + bo
        const std::string diff = test::compareMatrix("output row", t->output.row(1), *p.weights.oBias,
                                                     test::Tolerance::values());
        QVERIFY2(diff.empty(), diff.c_str());
    }
    QVERIFY(t->weights[0].allFinite() && t->output.allFinite());
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
    QVERIFY(one->output == many->output);
    QVERIFY(one->weights[3] == many->weights[3]);
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
}

void TestAttention::validationErrors()
{
    QFETCH(int, which);
    QFETCH(QString, message);
    Case c;
    c.biases = true;
    AttentionProblem p = makeProblem(c);
    switch (which) {
    case 0: p.spec.heads = 0; break;
    case 1: p.weights.k.conservativeResize(6, 5); break;
    case 2: p.weights.q.conservativeResize(7, 6); break;
    case 3: p.weights.o->conservativeResize(4, 5); break;
    case 4: p.weights.vBias->conservativeResize(2); break;
    case 5: p.xq(1, 2) = std::nanf(""); break;
    case 6: p.mask.keyPadding = {true, true, false}; break;
    case 7: p.mask.allowed = MaskMatrix::Ones(4, 2); break;
    case 8: p.xq.resize(0, 0); break;
    case 9: p.weights.o.reset(); break;
    case 10: p.weights.v(0, 0) = -INFINITY; break;
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

QTEST_GUILESS_MAIN(TestAttention)
#include "tst_attention.moc"
