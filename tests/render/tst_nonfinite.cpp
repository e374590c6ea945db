// Finite inputs whose Q·Kᵀ overflows float32: core/attention/TraceCheck finds the non-finite values,
// figures paint them in colours no colour map has (with a legend note) instead of the colour
// of 0 — NaN in one, ±Inf in another, so an overflow is told from a NaN — and `show`'s
// printer writes them so they cannot be read as numbers.

#include "FigureTestUtil.h"
#include "RenderTestProjects.h"

#include "app/cli/TracePrinter.h"
#include "app/render/FigureExporter.h"
#include "core/attention/TraceCheck.h"

#include <QDir>
#include <QGuiApplication>
#include <QTest>

#include <cmath>

using namespace attnscope;

namespace {

const QString kFigureDir = QStringLiteral(ATTNSCOPE_FIGURE_DIR "/nonfinite");

bool inAnyColorMap(QRgb c)
{
    for (ColorMapKind k : ColorMap::all()) {
        const ColorMap map(k);
        for (int i = 0; i < 256; ++i)
            if ((map.sample(i) & 0xffffff) == (c & 0xffffff))
                return true;
    }
    return false;
}

} // namespace

class TestNonFinite : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void traceCheckFindsTheOverflow();
    void traceCheckPassesFiniteResults();
    void viewRangesSkipTheOverflow();
    void figureCellsShowNonFiniteValues_data();
    void figureCellsShowNonFiniteValues();
    void svgNamesNonFiniteValues_data();
    void svgNamesNonFiniteValues();
    void nanAndInfinityColorsAreInNoMapAndDistinct();
    void printerWritesNonFiniteValuesDistinctly();
};

void TestNonFinite::initTestCase()
{
    QVERIFY(QDir().mkpath(kFigureDir));
}

void TestNonFinite::traceCheckFindsTheOverflow()
{
    const auto c = test::computeJson(test::overflowProjectJson());
    const NonFiniteReport r = findNonFinite(c.trace);
    QVERIFY(r.any());
    QCOMPARE(QString::fromStdString(r.tensor), QStringLiteral("scores")); // the first in pipeline order
    QCOMPARE(r.head, 0);
    QCOMPARE(r.row, 0);
    QCOMPARE(r.col, 0);
    const Status s = checkFinite(c.trace);
    QVERIFY(!s);
    QCOMPARE(s.kind(), ErrorKind::NonFinite);
    QVERIFY2(s.message().find("scores (head 0) [0][0]") != std::string::npos, s.message().c_str());
    QVERIFY(s.message().find(std::to_string(r.count) + " values") != std::string::npos);
}

void TestNonFinite::traceCheckPassesFiniteResults()
{
    const auto c = test::computeJson(test::emptyRowProjectJson("-inf", 2));
    QVERIFY(!findNonFinite(c.trace).any());
    QVERIFY(checkFinite(c.trace).ok());
}

// The views' ranges (computed on the GUI's worker) ignore NaN and ±Inf, as the figures' do:
// an overflowed score must not stretch the colour bar to Inf (whose ticks read "inf", "nan").
void TestNonFinite::viewRangesSkipTheOverflow()
{
    const auto c = test::computeJson(test::overflowProjectJson());
    const TraceRanges r = TraceRanges::of(c.trace);
    double finiteScore = 0.0, finiteWeight = 0.0;
    for (Eigen::Index i = 0; i < c.trace.scores[0].size(); ++i) {
        const float s = c.trace.scores[0].data()[i], w = c.trace.weights[0].data()[i];
        if (std::isfinite(s))
            finiteScore = std::max(finiteScore, double(std::abs(s)));
        if (std::isfinite(w))
            finiteWeight = std::max(finiteWeight, double(w));
    }
    QVERIFY(finiteScore > 0.0);
    QCOMPARE(r.maxAbsScore.size(), size_t(1));
    QCOMPARE(r.maxAbsScore[0], finiteScore);
    QCOMPARE(r.maxWeight[0], finiteWeight);
    QVERIFY(std::isfinite(r.meanMaxWeight));
    const HeatmapData d =
        HeatmapData::of(ShownAttention::ofProject(c.project, c.trace), 0, HeatmapQuantity::Scores, ScaleScope::PerHead);
    QCOMPARE(d.rangeMax, finiteScore);
    QCOMPARE(d.rangeMin, -finiteScore);
}

void TestNonFinite::figureCellsShowNonFiniteValues_data()
{
    QTest::addColumn<int>("view");
    QTest::addColumn<int>("dpi");
    QTest::addColumn<bool>("scores"); // scores: +Inf cells; weights: NaN cells
    QTest::newRow("head 150") << int(FigureView::Head) << 150 << false;
    QTest::newRow("heads 300") << int(FigureView::Heads) << 300 << false;
    QTest::newRow("mean 100") << int(FigureView::Mean) << 100 << false;
    QTest::newRow("head scores 150") << int(FigureView::Head) << 150 << true;
    QTest::newRow("heads scores 300") << int(FigureView::Heads) << 300 << true;
}

void TestNonFinite::figureCellsShowNonFiniteValues()
{
    QFETCH(int, view);
    QFETCH(int, dpi);
    QFETCH(bool, scores);
    const auto c = test::computeJson(test::overflowProjectJson());
    FigureOptions o;
    o.view = FigureView(view);
    o.quantity = scores ? HeatmapQuantity::Scores : HeatmapQuantity::Weights;
    o.values = false; // the cell's colour alone
    FigureSize size;
    size.dpi = dpi;
    const FigureExporter exporter(c.project, c.trace);
    const QString path = kFigureDir + QStringLiteral("/overflow-%1-%2%3.png")
                                          .arg(FigureOptions::viewKey(o.view))
                                          .arg(dpi)
                                          .arg(scores ? QStringLiteral("-scores") : QString());
    QString error;
    QVERIFY2(exporter.write(path, o, size, &error), qPrintable(error));
    const QImage image(path);
    QVERIFY(!image.isNull());
    const double k = dpi / 72.0;
    const FigureRenderer renderer(ShownAttention::ofProject(c.project, c.trace), o);
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), exporter.pageSize(o, size)));
    QVERIFY(!maps.empty());
    const HeatmapData &d = *maps[0].data;
    const HeatmapLayout l = HeatmapRenderer(d, maps[0].options).layout(maps[0].target);
    int nan = 0, inf = 0, finite = 0;
    for (Eigen::Index r = 0; r < d.rows(); ++r)
        for (Eigen::Index col = 0; col < d.cols(); ++col) {
            const QPointF at(l.grid.left() + (col + 0.3) * l.cellWidth, l.grid.top() + (r + 0.3) * l.cellHeight);
            const QRgb px = image.pixel((at * k).toPoint());
            const float v = (*d.values)(r, col);
            if (std::isfinite(v)) {
                QVERIFY2(inAnyColorMap(px), qPrintable(QColor(px).name()));
                ++finite;
            } else {
                // Not the colour of any value: a NaN cell must not read as a weight of 0. NaN
                // and an overflow to ±Inf each have their colour.
                QVERIFY2(!inAnyColorMap(px), qPrintable(QColor(px).name()));
                const QColor expected = std::isnan(v) ? HeatmapRenderer::nanColor() : HeatmapRenderer::infinityColor();
                QCOMPARE(QColor(px).name(), expected.name());
                ++(std::isnan(v) ? nan : inf);
            }
        }
    // Weights: the softmax of a row holding +Inf is NaN; scores: the product overflowed to +Inf.
    QCOMPARE(nan > 0, !scores);
    QCOMPARE(inf > 0, scores);
    QVERIFY(finite > 0);
}

void TestNonFinite::svgNamesNonFiniteValues_data()
{
    QTest::addColumn<int>("view");
    QTest::addColumn<bool>("scores");
    QTest::newRow("head weights") << int(FigureView::Head) << false;
    QTest::newRow("head scores") << int(FigureView::Head) << true;
    QTest::newRow("heads scores") << int(FigureView::Heads) << true;
}

void TestNonFinite::svgNamesNonFiniteValues()
{
    QFETCH(int, view);
    QFETCH(bool, scores);
    const auto c = test::computeJson(test::overflowProjectJson());
    FigureOptions o;
    o.view = FigureView(view);
    o.quantity = scores ? HeatmapQuantity::Scores : HeatmapQuantity::Weights;
    const QString path = kFigureDir + QStringLiteral("/overflow-%1-%2.svg")
                                          .arg(FigureOptions::viewKey(o.view),
                                               scores ? QStringLiteral("scores") : QStringLiteral("weights"));
    QString error;
    QVERIFY2(FigureExporter(c.project, c.trace).write(path, o, {}, &error), qPrintable(error));
    const auto svg = test::readSvg(path);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    // The legend names the colour of what the figure holds (NaN for the weights, ±Inf for the
    // scores) and not the other; cells say NaN or +Inf rather than a number.
    const QString all = svg.texts.join(QLatin1Char('|'));
    const QString nanEntry = QStringLiteral("NaN: not a number"), infEntry = QStringLiteral("±Inf: overflow");
    QVERIFY2(all.contains(scores ? infEntry : nanEntry), qPrintable(all));
    QVERIFY2(!all.contains(scores ? nanEntry : infEntry), qPrintable(all));
    QVERIFY2(svg.texts.contains(scores ? QStringLiteral("+Inf") : QStringLiteral("NaN")), qPrintable(all));
    QVERIFY(!svg.texts.contains(QStringLiteral("nan")));
    QVERIFY(!svg.texts.contains(QStringLiteral("inf")));
    // The finite scores beside the overflow (7.5e37) in exponent form, not 39 digits: cells and ticks.
    QVERIFY2(!all.contains(QStringLiteral("75000000")), qPrintable(all));
    if (scores)
        QVERIFY2(svg.texts.contains(QStringLiteral("7.5e+37")), qPrintable(all));
    const QColor color = scores ? HeatmapRenderer::infinityColor() : HeatmapRenderer::nanColor();
    bool swatch = false;
    for (const auto &r : svg.rects)
        swatch |= r.fill == color.name();
    QVERIFY(swatch);
}

void TestNonFinite::nanAndInfinityColorsAreInNoMapAndDistinct()
{
    const QColor nan = HeatmapRenderer::nanColor(), inf = HeatmapRenderer::infinityColor();
    QVERIFY(!inAnyColorMap(nan.rgb()));
    QVERIFY(!inAnyColorMap(inf.rgb()));
    QVERIFY(nan != inf);
    for (const QColor &other : {HeatmapRenderer::maskedColor(), HeatmapRenderer::emptyRowColor()}) {
        QVERIFY(nan != other);
        QVERIFY(inf != other);
    }
}

void TestNonFinite::printerWritesNonFiniteValuesDistinctly()
{
    const auto c = test::computeJson(test::overflowProjectJson());
    QString text;
    QTextStream out(&text);
    printPipeline(out, c.project, c.trace, 4);
    out.flush();
    QVERIFY2(text.contains(QStringLiteral("NaN")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("+Inf")), qPrintable(text));
    QVERIFY(!text.contains(QStringLiteral("nan")));
    QVERIFY(!text.contains(QStringLiteral(" inf")));
}

QTEST_MAIN(TestNonFinite)
#include "tst_nonfinite.moc"
