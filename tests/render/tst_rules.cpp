// The softmax/mask rules written once (core/attention/AttentionRules) and the explanations that use
// them: the step-by-step view (TeachingRenderer) and `attnscope-cli show` (TracePrinter) say
// what the engine really computed, headings name every term computed (biases included),
// sums keep their digits, plurals agree and numbers never break inside a table cell.

#include "../common/TestUtil.h"
#include "RenderTestProjects.h"

#include "app/cli/TracePrinter.h"
#include "app/render/FigureRenderer.h"
#include "app/render/TeachingRenderer.h"
#include "core/attention/AttentionRules.h"
#include "core/attention/RandomProblem.h"

#include <QAbstractTextDocumentLayout>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextLayout>

#include <cmath>

using namespace attnscope;

namespace {

QString show(const test::ComputedProject &c)
{
    QString text;
    QTextStream out(&text);
    printPipeline(out, c.project, c.trace, 4);
    out.flush();
    return text;
}

} // namespace

class TestRules : public QObject
{
    Q_OBJECT

private slots:
    void weightRuleMatchesTheEngine_data();
    void weightRuleMatchesTheEngine();
    void emptyRowExplainedAsComputed_data();
    void emptyRowExplainedAsComputed();
    void headingsNameTheBiases();
    void headingsWithoutBiases();
    void headingsNameTheSeparateValueInput();
    void pluralsAgree();
    void sumsKeepTheirDigits();
    void numbersNeverBreakInsideACell();
};

void TestRules::weightRuleMatchesTheEngine_data()
{
    QTest::addColumn<QString>("fill");
    QTest::newRow("-inf") << QStringLiteral("-inf");
    QTest::newRow("-1e9") << QStringLiteral("-1e9");
}

void TestRules::weightRuleMatchesTheEngine()
{
    QFETCH(QString, fill);
    const auto c = test::computeJson(test::emptyRowProjectJson(qPrintable(fill)));
    const MaskFill f = c.project.problem.spec.maskFill;
    const MatrixF &w = c.trace.weights[0];
    int fixed = 0;
    for (Eigen::Index i = 0; i < w.rows(); ++i)
        for (Eigen::Index j = 0; j < w.cols(); ++j) {
            const bool allowed = c.trace.allowed(i, j) != 0;
            const WeightRule rule = weightRule(f, allowed, c.trace.emptyRows[size_t(i)], w.cols());
            const SoftmaxRowSteps steps =
                softmaxRowSteps(&c.trace.scores[0](i, 0), &c.trace.allowed(i, 0), w.cols(), f, j);
            QCOMPARE(int(steps.rule.kind), int(rule.kind));
            // The double-precision walk-through gives the engine's float32 weight.
            QVERIFY2(std::abs(steps.weight - double(w(i, j))) < 1e-6,
                     qPrintable(QStringLiteral("[%1][%2] %3 vs %4").arg(i).arg(j).arg(steps.weight).arg(w(i, j))));
            if (rule.fixed) {
                QVERIFY2(std::abs(rule.weight - double(w(i, j))) < 1e-7, qPrintable(QString::number(w(i, j))));
                ++fixed;
            }
        }
    // Row 0 has no allowed key (3 cells), row 1 one masked key.
    QCOMPARE(fixed, 4);
    const WeightRule empty = weightRule(f, false, true, 3);
    QCOMPARE(empty.kind, f == MaskFill::NegInf ? WeightCase::EmptyRowZero : WeightCase::EmptyRowUniform);
    QCOMPARE(empty.rowSum, f == MaskFill::NegInf ? 0.0 : 1.0);
}

void TestRules::emptyRowExplainedAsComputed_data()
{
    weightRuleMatchesTheEngine_data();
}

void TestRules::emptyRowExplainedAsComputed()
{
    QFETCH(QString, fill);
    const auto c = test::computeJson(test::emptyRowProjectJson(qPrintable(fill)));
    const bool uniform = fill == QLatin1String("-1e9");
    const QString third = QString::number(1.0 / 3.0, 'g', 4);
    QCOMPARE(double(c.trace.weights[0](0, 1)), uniform ? double(1.0f / 3.0f) : 0.0);

    // The step view, the cell (0, 1) of the empty row selected.
    const QString html = TeachingRenderer(c.project, c.trace, 0, 0, 1).html();
    if (uniform) {
        QVERIFY2(html.contains(QStringLiteral("uniform")), qPrintable(html.right(1500)));
        QVERIFY(html.contains(third));
        QVERIFY(!html.contains(QRegularExpression(QStringLiteral("weight 0(?![.0-9])"))));
    } else {
        QVERIFY2(html.contains(QRegularExpression(QStringLiteral("weight 0(?![.0-9])"))), qPrintable(html.right(1500)));
        QVERIFY(html.contains(QStringLiteral("NaN")));
    }
    // `show` says the same.
    const QString text = show(c);
    const QString note = text.section(QStringLiteral("has no allowed key"), 1, 1).section(QLatin1Char('\n'), 0, 0);
    QVERIFY2(!note.isEmpty(), qPrintable(text));
    if (uniform)
        QVERIFY2(note.contains(QStringLiteral("uniform")) && note.contains(third), qPrintable(note));
    else
        QVERIFY2(note.contains(QStringLiteral("0")) && !note.contains(QStringLiteral("uniform")), qPrintable(note));
}

void TestRules::headingsNameTheBiases()
{
    const auto c = test::computeJson(test::emptyRowProjectJson("-inf", 2));
    const QString html = TeachingRenderer(c.project, c.trace, 1, 2, 0).html();
    const QString text = show(c);
    for (const char *formula :
         {"Q = X\u00b7W_Q + b_Q", "K = X\u00b7W_K + b_K", "V = X\u00b7W_V + b_V", "output = context\u00b7W_O + b_O"}) {
        QVERIFY2(html.contains(QString::fromUtf8(formula)), formula);
        QVERIFY2(text.contains(QString::fromUtf8(formula)), formula);
    }
}

void TestRules::headingsWithoutBiases()
{
    auto c = test::computeJson(test::emptyRowProjectJson("-inf", 1));
    c.project.problem.weights.qBias.reset();
    c.project.problem.weights.kBias.reset();
    c.project.problem.weights.vBias.reset();
    c.project.problem.weights.oBias.reset();
    c.trace = *CpuBackend().compute(c.project.problem);
    const QString html = TeachingRenderer(c.project, c.trace, 0, 2, 0).html();
    QVERIFY(html.contains(QString::fromUtf8("Q = X\u00b7W_Q")));
    QVERIFY(!html.contains(QStringLiteral("b_Q")));
    QVERIFY(!html.contains(QStringLiteral("b_O")));
}

// Seed 004's tutorial example: query, key and value are three different inputs, so V is
// projected from X_v (not from the key input) and the step view shows X_v among the inputs.
void TestRules::headingsNameTheSeparateValueInput()
{
    auto project = readProjectFile(
        test::sourcePathStd(QStringLiteral("resources/examples/tutorial5-shapes/mha-three-inputs.attnscope.json")));
    QVERIFY2(project, project ? "" : project.message().c_str());
    QVERIFY(project->problem.hasSeparateValue());
    const test::ComputedProject c{*project, *CpuBackend().compute(project->problem)};
    const QString html = TeachingRenderer(c.project, c.trace, 0, 0, 0).html();
    const QString text = show(c);
    for (const char *formula : {"Q = X_q\u00b7W_Q + b_Q", "K = X_kv\u00b7W_K + b_K", "V = X_v\u00b7W_V + b_V",
                                "output = context\u00b7W_O + b_O"}) {
        QVERIFY2(html.contains(QString::fromUtf8(formula)), formula);
        QVERIFY2(text.contains(QString::fromUtf8(formula)), formula);
    }
    QVERIFY(!html.contains(QString::fromUtf8("V = X_kv")));
    QVERIFY2(html.contains(QStringLiteral("X_v (value input)")), qPrintable(html.left(2000)));
    // The key input feeds the keys alone then: it is not called "key/value" beside X_v.
    QVERIFY2(html.contains(QStringLiteral("X_kv (key input)")), qPrintable(html.left(2000)));
    QVERIFY2(!html.contains(QStringLiteral("key/value input")), qPrintable(html.left(2000)));
    // Without a separate value input V comes from the key input.
    auto same = c.project;
    same.problem.xv.reset();
    const QString plain = TeachingRenderer(same, *CpuBackend().compute(same.problem), 0, 0, 0).html();
    QVERIFY(plain.contains(QString::fromUtf8("V = X_kv\u00b7W_V + b_V")));
    QVERIFY(!plain.contains(QStringLiteral("X_v (value input)")));
    QVERIFY(plain.contains(QStringLiteral("X (key/value input)")));
}

void TestRules::pluralsAgree()
{
    for (int heads : {1, 2}) {
        const auto c = test::computeJson(test::emptyRowProjectJson("-inf", heads));
        const QString html = TeachingRenderer(c.project, c.trace, 0, 2, 0).html();
        QVERIFY2(!html.contains(QStringLiteral("1 heads")), qPrintable(html));
        QVERIFY(!html.contains(QStringLiteral("(s)")));
        for (FigureView v : FigureOptions::allViews()) {
            FigureOptions o;
            o.view = v;
            const QString title = FigureRenderer(ShownAttention::ofProject(c.project, c.trace), o).title();
            QVERIFY2(!title.contains(QStringLiteral("1 heads")) && !title.contains(QStringLiteral("(s)")),
                     qPrintable(title));
        }
        const HeatmapData mean =
            HeatmapData::of(ShownAttention::ofProject(c.project, c.trace), -1, HeatmapQuantity::Weights, {});
        QVERIFY2(!mean.title.contains(QStringLiteral("(s)")) && !mean.title.contains(QStringLiteral("1 heads")),
                 qPrintable(mean.title));
        if (heads == 2)
            QVERIFY2(mean.title.contains(QStringLiteral("2 heads")), qPrintable(mean.title));
    }
}

void TestRules::sumsKeepTheirDigits()
{
    const auto c = test::computeJson(test::emptyRowProjectJson("-inf", 1));
    const int row = 2;
    const auto &s = c.trace.scores[0];
    double max = -INFINITY, sum = 0;
    for (Eigen::Index j = 0; j < s.cols(); ++j)
        max = std::max(max, double(s(row, j)));
    for (Eigen::Index j = 0; j < s.cols(); ++j)
        sum += std::exp(double(s(row, j)) - max);
    const QString html = TeachingRenderer(c.project, c.trace, 0, row, 1).html();
    const auto m = QRegularExpression(QStringLiteral("their sum ([-+0-9.e]+)")).match(html);
    QVERIFY2(m.hasMatch(), qPrintable(html.right(1500)));
    const double printed = m.captured(1).toDouble();
    qInfo("sum %.9g printed as %s", sum, qPrintable(m.captured(1)));
    QVERIFY2(std::abs(printed - sum) <= 1e-6 * sum, qPrintable(m.captured(1)));
}

void TestRules::numbersNeverBreakInsideACell()
{
    RandomProblemOptions ro;
    ro.tokens = 64;
    ro.modelDim = 64;
    ro.heads = 4;
    ro.causal = true;
    const Project project = randomProject(ro);
    const AttentionTrace trace = *CpuBackend().compute(project.problem);
    QTextDocument doc;
    doc.setHtml(TeachingRenderer(project, trace, 1, 40, 3).html());
    doc.setTextWidth(360); // a narrow side panel
    doc.documentLayout()->documentSize();
    const QRegularExpression number(QStringLiteral("^[-\u2212]?[0-9][0-9.e+-]*$"));
    int numbers = 0;
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
        const QString t = b.text().trimmed();
        if (!number.match(t).hasMatch())
            continue;
        ++numbers;
        QVERIFY2(b.layout() && b.layout()->lineCount() == 1,
                 qPrintable(QStringLiteral("\"%1\" is laid out on %2 lines").arg(t).arg(b.layout()->lineCount())));
    }
    QVERIFY(numbers > 100);
}

QTEST_MAIN(TestRules)
#include "tst_rules.moc"
