// Colour maps, the heatmap renderer (pixels of a rendered known trace against the colour map)
// and the heatmap widgets: NaN told apart from an overflow to ±Inf, and the window's shared
// scale read from the worker's ranges.

#include "app/gui/document/Document.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/HeatmapView.h"
#include "app/gui/views/MainWindow.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/RandomProblem.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QWheelEvent>

#include <cmath>

using namespace attnscope;

namespace {

std::shared_ptr<ComputedTrace> computed(Project project)
{
    auto r = std::make_shared<ComputedTrace>();
    auto trace = CpuBackend().compute(project.problem);
    if (!trace)
        qFatal("%s", trace.message().c_str());
    r->trace = std::move(*trace);
    r->project = std::move(project);
    return r;
}

Project example(const QString &name)
{
    return *Document::readProject(test::sourcePath(QStringLiteral("resources/examples/") + name));
}

QImage render(const HeatmapData &data, const HeatmapOptions &o, QSize size = {640, 480})
{
    QImage image(size, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    HeatmapRenderer(data, o).paint(p, QRectF(QPointF(0, 0), QSizeF(size)));
    return image;
}

// Finite inputs whose Q·Kᵀ overflows float32: the scores of row 0 are +Inf, so its softmax is NaN.
Project overflowProject()
{
    auto p = parseProject(R"({"format": "attnscope", "version": 1, "title": "Overflow", "mode": "self",
  "heads": 1, "headDimQK": 2, "headDimV": 2, "scale": "none",
  "query": {"tokens": ["a", "b", "c"], "x": [[3e38, 3e38], [0.5, -0.25], [1, 2]]},
  "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]}})");
    if (!p)
        qFatal("%s", p.message().c_str());
    return *p;
}

} // namespace

class TestHeatmap : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void colorMapSamples_data();
    void colorMapSamples();
    void cellPixelsMatchColorMap_data();
    void cellPixelsMatchColorMap();
    void largeMatrixPixels();
    void pooledPixelsShowTheBlockMaximum();
    void maskedAndEmptyRows();
    void scoresUseSignedRange();
    void widgetShowsTraceAndHover();
    void headsGridActivatesHead();
    void hoverTextFollowsTheRules_data();
    void hoverTextFollowsTheRules();
    void nonFiniteResultsWarnAndShowDistinctly();
    void manyHeadsScrollInsteadOfShrinking_data();
    void manyHeadsScrollInsteadOfShrinking();
    void hiddenValuesAreAnnounced();
    void nanAndInfinityShownDistinctly();
    void sharedScaleReadsTheWorkersRanges();
    void zoomedHeadHasLabelsAndKeysMoveTheCell();
};

void TestHeatmap::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_heatmap"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestHeatmap::colorMapSamples_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<double>("t");
    QTest::addColumn<QString>("color");
    // matplotlib's own values at 0, 128/255 and 1.
    QTest::newRow("viridis 0") << int(ColorMapKind::Viridis) << 0.0 << "#440154";
    QTest::newRow("viridis mid") << int(ColorMapKind::Viridis) << 128 / 255.0 << "#21918c";
    QTest::newRow("viridis 1") << int(ColorMapKind::Viridis) << 1.0 << "#fde725";
    QTest::newRow("magma 0") << int(ColorMapKind::Magma) << 0.0 << "#000004";
    QTest::newRow("magma mid") << int(ColorMapKind::Magma) << 128 / 255.0 << "#b73779";
    QTest::newRow("cividis 1") << int(ColorMapKind::Cividis) << 1.0 << "#fee838";
    QTest::newRow("cividis mid") << int(ColorMapKind::Cividis) << 128 / 255.0 << "#7d7c78";
    QTest::newRow("diverging 0") << int(ColorMapKind::Diverging) << 0.0 << "#053061";
    QTest::newRow("diverging mid") << int(ColorMapKind::Diverging) << 128 / 255.0 << "#f7f6f6";
    QTest::newRow("grey mid") << int(ColorMapKind::Grey) << 128 / 255.0 << "#808080";
    QTest::newRow("clamped below") << int(ColorMapKind::Viridis) << -3.0 << "#440154";
    QTest::newRow("clamped above") << int(ColorMapKind::Viridis) << 7.0 << "#fde725";
}

void TestHeatmap::colorMapSamples()
{
    QFETCH(int, kind);
    QFETCH(double, t);
    QFETCH(QString, color);
    QCOMPARE(QColor::fromRgb(ColorMap(ColorMapKind(kind)).at(t)).name(), color);
}

void TestHeatmap::cellPixelsMatchColorMap_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("head");
    QTest::addColumn<int>("scope");
    QTest::addColumn<int>("map");
    QTest::newRow("tutorial viridis") << "self-attention-tutorial.attnscope.json" << 0 << int(ScaleScope::Absolute)
                                      << int(ColorMapKind::Viridis);
    QTest::newRow("multihead h2 per-head magma")
        << "multihead-causal.attnscope.json" << 1 << int(ScaleScope::PerHead) << int(ColorMapKind::Magma);
    QTest::newRow("cross h1 shared cividis")
        << "cross-attention-translation.attnscope.json" << 0 << int(ScaleScope::Shared) << int(ColorMapKind::Cividis);
    QTest::newRow("padding mean grey") << "padding-mask.attnscope.json" << -1 << int(ScaleScope::Absolute)
                                       << int(ColorMapKind::Grey);
}

void TestHeatmap::cellPixelsMatchColorMap()
{
    QFETCH(QString, file);
    QFETCH(int, head);
    QFETCH(int, scope);
    QFETCH(int, map);
    auto c = computed(example(file));
    const HeatmapData data =
        HeatmapData::of(ShownAttention::ofTensors(c), head, HeatmapQuantity::Weights, ScaleScope(scope));
    HeatmapOptions o;
    o.colorMap = ColorMapKind(map);
    const QImage image = render(data, o);
    const HeatmapLayout l = HeatmapRenderer(data, o).layout(QRectF(image.rect()));
    QVERIFY(l.cellWidth >= 8);
    const ColorMap cm{ColorMapKind(map)};
    int checked = 0;
    for (int r = 0; r < data.rows(); ++r)
        for (int k = 0; k < data.cols(); ++k) {
            if (!data.isAllowed(r, k))
                continue;
            const double w = (*data.values)(r, k);
            const double t = (w - data.rangeMin) / (data.rangeMax - data.rangeMin);
            // A corner of the cell, clear of the printed value.
            const QPoint px(int(l.grid.left() + k * l.cellWidth + 3), int(l.grid.top() + r * l.cellHeight + 3));
            QCOMPARE(QColor(image.pixel(px)).name(), QColor::fromRgb(cm.at(t)).name());
            ++checked;
        }
    QVERIFY(checked > 0);
}

void TestHeatmap::largeMatrixPixels()
{
    RandomProblemOptions ro;
    ro.tokens = 300;
    ro.modelDim = 32;
    ro.heads = 2;
    ro.causal = true;
    const Project p = randomProject(ro);
    auto c = computed(p);
    const HeatmapData data =
        HeatmapData::of(ShownAttention::ofTensors(c), 1, HeatmapQuantity::Weights, ScaleScope::PerHead);
    HeatmapOptions o;
    const QImage image = render(data, o, {1200, 1000});
    const HeatmapLayout l = HeatmapRenderer(data, o).layout(QRectF(image.rect()));
    QVERIFY(l.cellWidth >= 2.0);
    const int cells[][2] = {{10, 3}, {150, 150}, {299, 0}, {200, 120}};
    for (const auto &rc : cells) {
        const int r = rc[0], k = rc[1];
        const QPoint px(int(l.grid.left() + (k + 0.5) * l.cellWidth), int(l.grid.top() + (r + 0.5) * l.cellHeight));
        QCOMPARE(QColor(image.pixel(px)).name(),
                 QColor::fromRgb(HeatmapRenderer(data, o).colorFor((*data.values)(r, k))).name());
    }
    // Causal: above the diagonal is masked.
    const QPoint masked(int(l.grid.left() + 200.5 * l.cellWidth), int(l.grid.top() + 10.5 * l.cellHeight));
    QCOMPARE(QColor(image.pixel(masked)), HeatmapRenderer::maskedColor());
}

void TestHeatmap::pooledPixelsShowTheBlockMaximum()
{
    RandomProblemOptions ro;
    ro.tokens = 1024;
    ro.modelDim = 16;
    ro.heads = 1;
    ro.causal = true;
    const Project p = randomProject(ro);
    auto c = computed(p);
    const HeatmapData data =
        HeatmapData::of(ShownAttention::ofTensors(c), 0, HeatmapQuantity::Weights, ScaleScope::PerHead);
    HeatmapOptions o;
    o.showLabels = false;
    o.showTitle = false;
    o.showColorBar = false;
    const QSize size(260, 260);
    const QImage image = render(data, o, size);
    const HeatmapLayout l = HeatmapRenderer(data, o).layout(QRectF(image.rect()));
    QVERIFY(l.cellWidth < 1.0);
    const int w = int(std::ceil(l.grid.width())), h = int(std::ceil(l.grid.height()));
    // Output pixel (x, y) covers the cells of its block; it shows the largest allowed weight.
    for (const auto &xy : {std::pair{10, 200}, std::pair{100, 150}, std::pair{3, 3}, std::pair{120, 240}}) {
        const int x = xy.first, y = xy.second;
        const Eigen::Index r0 = Eigen::Index(y) * 1024 / h, r1 = Eigen::Index(y + 1) * 1024 / h;
        float best = -1.0f;
        for (Eigen::Index r = r0; r < r1; ++r)
            for (Eigen::Index k = 0; k < 1024; ++k)
                if (k * w / 1024 == x && data.isAllowed(r, k))
                    best = std::max(best, (*data.values)(r, k));
        const QPoint px(int(l.grid.left()) + x, int(l.grid.top()) + y);
        const QColor expected =
            best < 0 ? HeatmapRenderer::maskedColor() : QColor::fromRgb(HeatmapRenderer(data, o).colorFor(best));
        QCOMPARE(QColor(image.pixel(px)).name(), expected.name());
    }
}

void TestHeatmap::maskedAndEmptyRows()
{
    Project p = example(QStringLiteral("self-attention-tutorial.attnscope.json"));
    p.problem.mask.allowed = MaskMatrix::Ones(3, 3);
    (*p.problem.mask.allowed)(0, 2) = 0;
    p.problem.mask.allowed->row(1).setZero(); // row 1 attends to nothing
    auto c = computed(p);
    QVERIFY(c->trace.emptyRows[1]);
    const HeatmapData data =
        HeatmapData::of(ShownAttention::ofTensors(c), 0, HeatmapQuantity::Weights, ScaleScope::Absolute);
    HeatmapOptions o;
    const QImage image = render(data, o);
    const HeatmapLayout l = HeatmapRenderer(data, o).layout(QRectF(image.rect()));
    // A masked cell is grey or hatched, never a colour-map colour.
    const QRectF cell(l.grid.left() + 2 * l.cellWidth, l.grid.top(), l.cellWidth, l.cellHeight);
    int grey = 0;
    for (int y = int(cell.top()) + 3; y < int(cell.bottom()) - 3; ++y)
        for (int x = int(cell.left()) + 3; x < int(cell.right()) - 3; ++x) {
            const QColor px(image.pixel(x, y));
            QVERIFY2(px == HeatmapRenderer::maskedColor() || px == QColor(0x80, 0x80, 0x80), qPrintable(px.name()));
            grey += px == HeatmapRenderer::maskedColor();
        }
    QVERIFY(grey > 0);
    // The empty row is framed in red.
    bool red = false;
    const int y0 = int(l.grid.top() + l.cellHeight);
    for (int y = y0 - 2; y <= y0 + 2; ++y)
        red = red || QColor(image.pixel(int(l.grid.center().x()), y)) == HeatmapRenderer::emptyRowColor();
    QVERIFY(red);
}

void TestHeatmap::scoresUseSignedRange()
{
    auto c = computed(example(QStringLiteral("multihead-causal.attnscope.json")));
    const HeatmapData data =
        HeatmapData::of(ShownAttention::ofTensors(c), 0, HeatmapQuantity::Scores, ScaleScope::Shared);
    QVERIFY(data.signedValues);
    QCOMPARE(data.rangeMin, -data.rangeMax);
    HeatmapOptions o; // viridis is replaced by the diverging map for signed values
    QCOMPARE(QColor::fromRgb(HeatmapRenderer(data, o).colorFor(0.0)).name(), QStringLiteral("#f7f6f6"));
}

void TestHeatmap::widgetShowsTraceAndHover()
{
    auto c = computed(example(QStringLiteral("self-attention-tutorial.attnscope.json")));
    HeatmapView view;
    view.resize(500, 400);
    view.setAttention(ShownAttention::ofTensors(c));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage shot = view.grab().toImage();
    const QRectF cell = view.cellRect(0, 1);
    const QPoint px = (cell.topLeft() + QPointF(3, 3)).toPoint();
    QCOMPARE(QColor(shot.pixel(px)).name(), QColor::fromRgb(ColorMap().at(c->trace.weights[0](0, 1))).name());
    // Hover text: q·k = score / scale (scale 1 here), the weight.
    const QString text = view.cellDescription(0, 1);
    QVERIFY2(text.contains(QStringLiteral("Thinking")) && text.contains(QStringLiteral("Machines")), qPrintable(text));
    QVERIFY2(text.contains(QString::number(double(c->trace.scores[0](0, 1)), 'g', 5)), qPrintable(text));
    QVERIFY2(text.contains(QString::number(double(c->trace.weights[0](0, 1)), 'g', 5)), qPrintable(text));
    QSignalSpy selected(&view, &HeatmapView::cellSelected);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(2, 0).center().toPoint());
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(1).toInt(), 2);
    QCOMPARE(selected.at(0).at(2).toInt(), 0);
    QCOMPARE(*view.selectedCell(), QPoint(0, 2));
}

void TestHeatmap::headsGridActivatesHead()
{
    auto c = computed(example(QStringLiteral("multihead-causal.attnscope.json")));
    HeadsGridView grid;
    grid.resize(600, 400);
    grid.setAttention(ShownAttention::ofTensors(c));
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    QCOMPARE(grid.heads(), c->trace.heads());
    QSignalSpy activated(&grid, &HeadsGridView::headActivated);
    const int last = grid.heads() - 1;
    QTest::mouseClick(&grid, Qt::LeftButton, {}, grid.tileRect(last).center().toPoint());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.at(0).at(0).toInt(), last);
    QCOMPARE(grid.currentHead(), last);
}

void TestHeatmap::hoverTextFollowsTheRules_data()
{
    QTest::addColumn<QString>("fill");
    QTest::newRow("-inf") << QStringLiteral("-inf");
    QTest::newRow("-1e9") << QStringLiteral("-1e9");
}

void TestHeatmap::hoverTextFollowsTheRules()
{
    // Row 1 of the tutorial attends to nothing. Under -1e9 its weights are uniform (1/3),
    // which the hover must say instead of "masked: weight = 0"; under -inf they are 0.
    QFETCH(QString, fill);
    Project p = example(QStringLiteral("self-attention-tutorial.attnscope.json"));
    p.problem.mask.allowed = MaskMatrix::Ones(3, 3);
    p.problem.mask.allowed->row(1).setZero();
    (*p.problem.mask.allowed)(0, 2) = 0;
    p.problem.spec.maskFill = fill == QLatin1String("-1e9") ? MaskFill::NegLarge : MaskFill::NegInf;
    auto c = computed(p);
    HeatmapView view;
    view.resize(500, 400);
    view.setAttention(ShownAttention::ofTensors(c));
    const float w = c->trace.weights[0](1, 2);
    const QString text = view.cellDescription(1, 2);
    if (p.problem.spec.maskFill == MaskFill::NegLarge) {
        QCOMPARE(w, 1.0f / 3.0f);
        QVERIFY2(!text.contains(QStringLiteral("weight = 0")), qPrintable(text));
        QVERIFY2(text.contains(QString::number(double(w), 'g', 5)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("uniform")), qPrintable(text));
    } else {
        QCOMPARE(w, 0.0f);
        QVERIFY2(text.contains(QStringLiteral("weight = 0")), qPrintable(text));
    }
    // A masked cell of a row that has allowed keys: 0 under either fill.
    QCOMPARE(c->trace.weights[0](0, 2), 0.0f);
    QVERIFY2(view.cellDescription(0, 2).contains(QStringLiteral("weight = 0")), qPrintable(view.cellDescription(0, 2)));
}

void TestHeatmap::nonFiniteResultsWarnAndShowDistinctly()
{
    Project p = example(QStringLiteral("self-attention-tutorial.attnscope.json"));
    p.problem.xq.row(0).setConstant(3e38f); // finite, but Q·Kᵀ overflows
    auto c = computed(p);
    HeatmapView view;
    view.resize(600, 500);
    view.setAttention(ShownAttention::ofTensors(c));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto *warning = view.findChild<QLabel *>(QStringLiteral("nonFiniteWarning"));
    QVERIFY(warning);
    QTRY_VERIFY(warning->isVisible());
    QVERIFY2(warning->text().contains(QStringLiteral("not finite")), qPrintable(warning->text()));
    const QImage shot = view.grab().toImage();
    int nonFinite = 0;
    for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 3; ++k) {
            if (std::isfinite(c->trace.weights[0](r, k)))
                continue;
            const QPoint px = (view.cellRect(r, k).topLeft() + QPointF(3, 3)).toPoint();
            QCOMPARE(QColor(shot.pixel(px)).name(), HeatmapRenderer::nonFiniteColor().name());
            ++nonFinite;
        }
    QVERIFY(nonFinite > 0);
    QVERIFY(view.cellDescription(0, 0).contains(QStringLiteral("not finite")));
    // A finite result hides the warning again.
    view.setAttention(
        ShownAttention::ofTensors(computed(example(QStringLiteral("self-attention-tutorial.attnscope.json")))));
    QTRY_VERIFY(!warning->isVisible());
}

void TestHeatmap::manyHeadsScrollInsteadOfShrinking_data()
{
    QTest::addColumn<int>("heads");
    QTest::newRow("48") << 48;
    QTest::newRow("256") << 256;
}

void TestHeatmap::manyHeadsScrollInsteadOfShrinking()
{
    QFETCH(int, heads);
    RandomProblemOptions ro;
    ro.tokens = 6;
    ro.modelDim = heads;
    ro.heads = heads;
    auto c = computed(randomProject(ro));
    HeadsGridView grid;
    grid.resize(600, 400);
    grid.setAttention(ShownAttention::ofTensors(c));
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    QCOMPARE(grid.heads(), heads);
    // Tiles keep a readable size; the grid scrolls to the rest.
    for (int h : {0, heads / 2, heads - 1}) {
        QVERIFY2(grid.tileRect(h).width() >= HeadsGridView::kMinTileSize,
                 qPrintable(QString::number(grid.tileRect(h).width())));
        QVERIFY(grid.tileRect(h).height() >= HeadsGridView::kMinTileSize);
    }
    QScrollBar *bar = grid.verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    // The last head: scroll to it, click it.
    grid.ensureHeadVisible(heads - 1);
    const QRectF last = grid.tileRect(heads - 1);
    QVERIFY2(QRectF(grid.viewport()->rect()).intersects(last), "the last tile is not in view after scrolling");
    QSignalSpy activated(&grid, &HeadsGridView::headActivated);
    QTest::mouseClick(grid.viewport(), Qt::LeftButton, {}, last.center().toPoint());
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.at(0).at(0).toInt(), heads - 1);
}

void TestHeatmap::hiddenValuesAreAnnounced()
{
    RandomProblemOptions ro;
    ro.tokens = 24;
    ro.modelDim = 8;
    ro.heads = 1;
    auto c = computed(randomProject(ro));
    HeatmapView view;
    view.resize(360, 320); // cells of about 10 px: no room for "0.04"
    view.setAttention(ShownAttention::ofTensors(c));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto *note = view.findChild<QLabel *>(QStringLiteral("valuesHiddenNote"));
    QVERIFY(note);
    QTRY_VERIFY(note->isVisible());
    QVERIFY2(note->text().contains(QStringLiteral("hidden")), qPrintable(note->text()));
    // Large enough cells: the values are shown and the note goes away.
    view.setAttention(
        ShownAttention::ofTensors(computed(example(QStringLiteral("self-attention-tutorial.attnscope.json")))));
    QTRY_VERIFY(!note->isVisible());
    // Values turned off by the user: nothing to announce.
    view.setAttention(ShownAttention::ofTensors(c));
    HeatmapViewSettings s = view.settings();
    s.showValues = false;
    view.setSettings(s);
    QTRY_VERIFY(!note->isVisible());
}

void TestHeatmap::nanAndInfinityShownDistinctly()
{
    auto c = std::make_shared<ComputedTrace>();
    c->project = overflowProject();
    auto trace = CpuBackend().compute(c->project.problem);
    QVERIFY2(trace, trace ? "" : trace.message().c_str());
    c->trace = std::move(*trace);
    // Counted here over every tensor, as the banner counts them.
    std::int64_t nan = 0, inf = 0;
    auto count = [&](const MatrixF &m) {
        nan += m.array().isNaN().count();
        inf += m.array().isInf().count();
    };
    for (const auto *all :
         {&c->trace.q, &c->trace.k, &c->trace.v, &c->trace.scores, &c->trace.weights, &c->trace.headOutputs})
        for (const MatrixF &m : *all)
            count(m);
    count(c->trace.context);
    count(c->trace.output);
    QVERIFY(nan > 0 && inf > 0);
    QVERIFY(std::isinf(c->trace.scores[0](0, 0)) && c->trace.scores[0](0, 0) > 0);
    QVERIFY(std::isnan(c->trace.weights[0](0, 0)));

    for (const bool scores : {false, true}) {
        HeatmapView view;
        HeatmapViewSettings s;
        s.quantity = scores ? HeatmapQuantity::Scores : HeatmapQuantity::Weights;
        s.showValues = false;
        view.setSettings(s);
        view.setAttention(ShownAttention::ofTensors(c));
        view.resize(700, 520);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto *warning = view.findChild<QLabel *>(QStringLiteral("nonFiniteWarning"));
        QVERIFY(warning);
        QTRY_VERIFY(warning->isVisible());
        // The banner says how many of each there are, and which colour each has.
        const QString text = warning->text();
        QVERIFY2(text.contains(QStringLiteral("%1 NaN").arg(nan)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("%1 infinite").arg(inf)), qPrintable(text));
        const QImage shot = view.grab().toImage();
        QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
        QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/overflow-%1.png")
                              .arg(scores ? QStringLiteral("scores") : QStringLiteral("weights"))));
        const QPoint px = (view.cellRect(0, 0).topLeft() + QPointF(3, 3)).toPoint();
        const QColor expected = scores ? HeatmapRenderer::infinityColor() : HeatmapRenderer::nanColor();
        QCOMPARE(QColor(shot.pixel(px)).name(), expected.name());
        const QString hover = view.cellDescription(0, 0);
        QVERIFY2(hover.contains(QStringLiteral("+Inf")), qPrintable(hover));
        QVERIFY2(hover.contains(QStringLiteral("NaN")), qPrintable(hover));
        QVERIFY2(!hover.contains(QStringLiteral("inf")) && !hover.contains(QStringLiteral("nan")), qPrintable(hover));
    }
    QVERIFY(HeatmapRenderer::infinityColor() != HeatmapRenderer::nanColor());
}

void TestHeatmap::sharedScaleReadsTheWorkersRanges()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    QVERIFY(w.document()->setHeads(3));
    QVERIFY(test::settleWindow(w));
    const ComputedTracePtr r = w.currentResult();
    QCOMPARE(int(r->ranges.maxWeight.size()), 3);
    for (HeatmapQuantity quantity : {HeatmapQuantity::Weights, HeatmapQuantity::Scores}) {
        HeatmapViewSettings s = w.views()->headView()->settings();
        s.quantity = quantity;
        s.scope = ScaleScope::Shared;
        w.views()->headView()->setSettings(s);
        const HeatmapData &shown = w.views()->headView()->data();
        // The same range as a pass over every head here would give.
        const HeatmapData here =
            HeatmapData::of(ShownAttention::ofTensors(r), w.views()->headView()->head(), quantity, ScaleScope::Shared);
        QCOMPARE(shown.rangeMin, here.rangeMin);
        QCOMPARE(shown.rangeMax, here.rangeMax);
    }
    // The mean over heads is the worker's, not recomputed on the GUI thread.
    QCOMPARE(w.views()->meanView()->data().values, r->ranges.meanWeights.get());
}

void TestHeatmap::zoomedHeadHasLabelsAndKeysMoveTheCell()
{
    // A 512-token head could not be zoomed (only the pooled view could): its labels never showed.
    const int t = 512;
    std::vector<float> values(std::size_t(t) * t);
    for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j)
            values[std::size_t(i) * t + j] = j <= i ? 1.0f / float(i + 1) : 0.0f;
    auto set = AttentionSet::fromFloats(values, 1, 1, 1, t, t);
    QVERIFY(set.ok());
    std::vector<std::string> labels;
    for (int i = 0; i < t; ++i)
        labels.push_back(QStringLiteral("t%1").arg(i).toStdString());
    QVERIFY(set->setTokens(labels, labels).ok());
    ShownAttention shown;
    shown.set = *set;
    shown.maps = readLayer(shown, 0, nullptr);
    QVERIFY(shown.weights());
    HeatmapView view;
    view.resize(900, 760);
    view.setAttention(shown);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const auto layoutOf = [&] { return HeatmapRenderer(view.data(), view.options()).layout(view.heatmapRect()); };
    QVERIFY(layoutOf().rowLabels.isEmpty() || layoutOf().rowLabelStep > 1); // 512 rows: too small for each
    QCOMPARE(view.visibleCells(), QRect(0, 0, t, t));

    // The wheel zooms around the cell under the cursor; the block in view then has its labels.
    const QPointF at = view.cellRect(300, 200).center();
    for (int notch = 0; notch < 14; ++notch) {
        QWheelEvent wheel(at, view.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(&view, &wheel);
    }
    QVERIFY(view.isZoomed());
    const QRect visible = view.visibleCells();
    QVERIFY2(visible.width() <= 40 && visible.contains(200, 300), qPrintable(QStringLiteral("%1 %2 %3 %4")
                                                                                 .arg(visible.x())
                                                                                 .arg(visible.y())
                                                                                 .arg(visible.width())
                                                                                 .arg(visible.height())));
    QCOMPARE(view.cellAt(view.cellRect(300, 200).center()), std::optional<QPoint>(QPoint(200, 300)));
    // The cell under the cursor stays near it (the label bands that appear move the grid a little).
    const auto under = view.cellAt(at);
    QVERIFY(under && std::abs(under->x() - 200) <= 6 && std::abs(under->y() - 300) <= 6);
    // The labels of the block in view, every one: t200 among them.
    const HeatmapLayout zoomed =
        HeatmapRenderer(view.data().block(visible, ColorScaleKind::Linear), view.options()).layout(view.heatmapRect());
    QVERIFY(!zoomed.rowLabels.isEmpty());
    QCOMPARE(zoomed.rowLabelStep, 1);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(view.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/heatmap-512-zoomed.png")));

    // A click selects; the arrow keys move the selection, panning to keep it in view.
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.cellRect(300, 200).center().toPoint());
    QCOMPARE(view.selectedCell(), std::optional<QPoint>(QPoint(200, 300)));
    QSignalSpy selected(&view, &HeatmapView::cellSelected);
    QTest::keyClick(&view, Qt::Key_Right);
    QCOMPARE(view.selectedCell(), std::optional<QPoint>(QPoint(201, 300)));
    QCOMPARE(selected.count(), 1);
    const int steps = visible.bottom() - 300 + 3;
    for (int k = 0; k < steps; ++k)
        QTest::keyClick(&view, Qt::Key_Down);
    QCOMPARE(view.selectedCell(), std::optional<QPoint>(QPoint(201, 300 + steps)));
    QVERIFY(view.visibleCells().contains(201, 300 + steps)); // panned
    QTest::keyClick(&view, Qt::Key_Up);
    QCOMPARE(view.selectedCell()->y(), 300 + steps - 1);

    // A drag pans; Home shows the whole map again.
    const QRect before = view.visibleCells();
    const QPoint from = view.heatmapRect().center().toPoint();
    QTest::mousePress(&view, Qt::LeftButton, {}, from);
    QTest::mouseMove(&view, from + QPoint(120, 0));
    QTest::mouseRelease(&view, Qt::LeftButton, {}, from + QPoint(120, 0));
    QVERIFY2(view.visibleCells().x() < before.x(), qPrintable(QString::number(view.visibleCells().x())));
    QTest::keyClick(&view, Qt::Key_Home);
    QVERIFY(!view.isZoomed());
    QCOMPARE(view.visibleCells(), QRect(0, 0, t, t));
}

QTEST_MAIN(TestHeatmap)
#include "tst_heatmap.moc"
