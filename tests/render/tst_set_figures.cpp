// Figures of attention sets (issue 9, "Layers x heads") and colour scales: real PNG, SVG and PDF
// files written and read back. Cell colours are compared with colours computed here from the
// maps' values (linear, log10 and rank formulas written out below), the rollout figure with
// core's attentionRollout and NumPy's, and attnscope-cli's figures with the library's.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "FigureTestUtil.h"

#include "app/render/FigureExporter.h"
#include "core/analysis/AttentionStats.h"
#include "core/attention/CpuBackend.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"

#include <QDir>
#include <QGuiApplication>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace attnscope;

namespace {

const QString kFigureDir = QStringLiteral(ATTNSCOPE_FIGURE_DIR "/sets");

QString fixture(const QString &name)
{
    return test::sourcePath("tests/fixtures/attention/" + name);
}

AttentionSet readFixture(const QString &name)
{
    auto set = readAttentionFile(fixture(name).toStdString());
    if (!set)
        qFatal("%s", set.message().c_str());
    return std::move(*set);
}

// A causal 6 x 6 map whose weights span seven decades, with ties at 0.5 and exact zeros.
AttentionSet decadesSet()
{
    const float rows[6][6] = {{1, 0, 0, 0, 0, 0},
                              {0.5f, 0.5f, 0, 0, 0, 0},
                              {0.9f, 0.09f, 0.01f, 0, 0, 0},
                              {0.5f, 0.3f, 0.199f, 0.001f, 0, 0},
                              {0.6f, 0.2f, 0.1f, 0.09f, 0.00999f, 1e-5f},
                              {0.7f, 0.2f, 0.09f, 0.0099f, 1e-4f, 1e-7f}};
    std::vector<float> v;
    for (const auto &r : rows)
        v.insert(v.end(), r, r + 6);
    auto set = AttentionSet::fromFloats(std::move(v), 1, 1, 1, 6, 6);
    if (!set)
        qFatal("%s", set.message().c_str());
    return std::move(*set);
}

// The colour a value gets, from the formulas of the issue, over `values` (the map's allowed
// cells) and the range [0, max].
QColor expectedColor(ColorScaleKind scale, double v, const std::vector<double> &values, double max,
                     ColorMapKind map = ColorMapKind::Viridis)
{
    double t = 0.0;
    if (scale == ColorScaleKind::Linear) {
        t = v / max;
    } else if (scale == ColorScaleKind::Log) {
        double smallest = max;
        for (double x : values)
            if (x > 0)
                smallest = std::min(smallest, x);
        const double lo = std::max(smallest, max * 1e-4);
        t = v <= lo ? 0.0 : (std::log10(v) - std::log10(lo)) / (std::log10(max) - std::log10(lo));
    } else {
        const auto below = std::count_if(values.begin(), values.end(), [&](double x) { return x < v; });
        t = double(below) / double(values.size() - 1);
    }
    return QColor::fromRgb(ColorMap(map).sample(int(std::lround(std::clamp(t, 0.0, 1.0) * 255))));
}

QColor pixelAt(const QImage &image, const QPointF &points, double scale)
{
    return QColor(image.pixel((points * scale).toPoint()));
}

// The values of the allowed cells of one heatmap.
std::vector<double> allowedValues(const HeatmapData &d)
{
    std::vector<double> out;
    for (Eigen::Index r = 0; r < d.rows(); ++r)
        for (Eigen::Index c = 0; c < d.cols(); ++c)
            if (!d.showsAsMasked(r, c))
                out.push_back((*d.values)(r, c));
    return out;
}

// Compares the centre pixel of every cell of every heatmap with `expected(tile, row, col)`;
// masked cells must show the masked grey (or the hatch crossing it). Returns the cells checked.
template <typename F>
int checkCells(const QImage &image, double k, const std::vector<FigureHeatmap> &maps, F &&expected)
{
    int checked = 0;
    for (std::size_t m = 0; m < maps.size(); ++m) {
        const HeatmapLayout l = HeatmapRenderer(*maps[m].data, maps[m].options).layout(maps[m].target);
        if (l.grid.isEmpty())
            return -1;
        for (Eigen::Index r = 0; r < maps[m].data->rows(); ++r)
            for (Eigen::Index c = 0; c < maps[m].data->cols(); ++c) {
                const QPointF at(l.grid.left() + (c + 0.5) * l.cellWidth, l.grid.top() + (r + 0.5) * l.cellHeight);
                const QColor px = pixelAt(image, at, k);
                if (maps[m].data->showsAsMasked(r, c)) {
                    if (px != HeatmapRenderer::maskedColor() && px.red() <= 0x60)
                        return qWarning("tile %zu cell (%lld, %lld): %s, expected masked", m, (long long)r,
                                        (long long)c, qPrintable(px.name())),
                               -1;
                } else if (const QColor e = expected(m, r, c); px != e) {
                    return qWarning("tile %zu cell (%lld, %lld): %s, expected %s", m, (long long)r, (long long)c,
                                    qPrintable(px.name()), qPrintable(e.name())),
                           -1;
                }
                ++checked;
            }
    }
    return checked;
}

// The figure of a set alone (an attention file's), as FigureExporter makes it.
FigureRenderer setFigure(const AttentionSet &set, const QString &name, const FigureOptions &o)
{
    ShownAttention shown;
    shown.set = set;
    shown.title = name;
    return FigureRenderer(shown, o);
}

} // namespace

class TestSetFigures : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(QDir().mkpath(kFigureDir)); }
    void colourScalesPaintKnownCells_data();
    void colourScalesPaintKnownCells();
    void colourBarTicksFollowTheScale_data();
    void colourBarTicksFollowTheScale();
    void modelGridTilesMatchTheMaps();
    void modelGridMarksGroupsAndWindows();
    void rolloutFigureIsCoreRollout();
    void projectRendersModelAndRollout();
    void mergedWordsFigure();
    void layerAndHeadOutOfRangeAreRefused();
    void longMapsArePooledInGridTiles();
    void cliRendersAttentionFilesAsTheLibrary();
    void cliErrorsWriteNothing_data();
    void cliErrorsWriteNothing();
};

void TestSetFigures::colourScalesPaintKnownCells_data()
{
    QTest::addColumn<QString>("source"); // "decades" or an example project
    QTest::addColumn<int>("scale");
    QTest::addColumn<int>("view");
    for (ColorScaleKind s : ColorScale::all()) {
        const QByteArray key = ColorScale::key(s).toLatin1();
        QTest::addRow("decades head %s", key.constData()) << "decades" << int(s) << int(FigureView::Head);
        // A project's causal mask: masked cells stay the masked grey under every scale.
        QTest::addRow("causal project head %s", key.constData())
            << "multihead-causal" << int(s) << int(FigureView::Head);
        QTest::addRow("causal project heads %s", key.constData())
            << "multihead-causal" << int(s) << int(FigureView::Heads);
    }
}

void TestSetFigures::colourScalesPaintKnownCells()
{
    QFETCH(QString, source);
    QFETCH(int, scale);
    QFETCH(int, view);
    FigureOptions o;
    o.view = FigureView(view);
    o.head = 1;
    o.colorScale = ColorScaleKind(scale);
    o.values = false; // cell centres show the colour alone
    FigureSize size;
    size.dpi = 144;
    const QString path =
        kFigureDir +
        QStringLiteral("/scale-%1.png").arg(QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-'));
    Project project;
    AttentionTrace trace;
    std::unique_ptr<FigureExporter> exporter;
    if (source == QLatin1String("decades")) {
        o.head = 0;
        exporter = std::make_unique<FigureExporter>(decadesSet(), QStringLiteral("decades"));
    } else {
        project = *readProjectFile(test::sourcePathStd("resources/examples/" + source + ".attnscope.json"));
        trace = *CpuBackend().compute(project.problem);
        exporter = std::make_unique<FigureExporter>(project, trace);
    }
    QString error;
    QVERIFY2(exporter->write(path, o, size, &error), qPrintable(error));
    const QImage image(path);
    QVERIFY(!image.isNull());
    const QSizeF page = exporter->pageSize(o, size);
    const auto figure = exporter->figure(o);
    const std::vector<FigureHeatmap> maps = figure->heatmaps(QRectF(QPointF(0, 0), page));
    QVERIFY(!maps.empty());
    // One colour bar for a grid: the scale runs over every tile's allowed values.
    std::vector<double> all;
    for (const FigureHeatmap &m : maps) {
        const auto v = allowedValues(*m.data);
        all.insert(all.end(), v.begin(), v.end());
    }
    const int checked = checkCells(image, size.dpi / 72.0, maps, [&](std::size_t m, Eigen::Index r, Eigen::Index c) {
        return expectedColor(ColorScaleKind(scale), (*maps[m].data->values)(r, c), all, 1.0);
    });
    QVERIFY(checked > 0);
    int cells = 0;
    for (const FigureHeatmap &m : maps)
        cells += int(m.data->rows() * m.data->cols());
    QCOMPARE(checked, cells);
}

void TestSetFigures::colourBarTicksFollowTheScale_data()
{
    QTest::addColumn<int>("scale");
    QTest::addColumn<QStringList>("ticks");
    QTest::newRow("linear") << int(ColorScaleKind::Linear) << QStringList{"1.00", "0.50", "0.00"};
    // Floor: max(smallest positive 1e-7, 1e-4 * max 1) = 1e-4.
    QTest::newRow("log") << int(ColorScaleKind::Log)
                         << QStringList{"10\u2070", "10\u207b\u00b9", "10\u207b\u00b2", "10\u207b\u00b3",
                                        "10\u207b\u2074"};
    // The 36 values sorted (14 zeros, then 1e-7 ... 1): those at ranks round(q * 35) for q = 1,
    // 0.75, 0.5, 0.25, 0 are 1, 0.2, 0.0099, 0, 0.
    QTest::newRow("percentile") << int(ColorScaleKind::Percentile) << QStringList{"1.00", "0.20", "0.0099", "0"};
}

void TestSetFigures::colourBarTicksFollowTheScale()
{
    QFETCH(int, scale);
    QFETCH(QStringList, ticks);
    FigureOptions o;
    o.view = FigureView::Head;
    o.colorScale = ColorScaleKind(scale);
    o.values = false; // the only numbers are the colour bar's
    const QString path = kFigureDir + QStringLiteral("/ticks-%1.svg").arg(QTest::currentDataTag());
    QString error;
    QVERIFY2(FigureExporter(decadesSet(), "decades").write(path, o, {}, &error), qPrintable(error));
    const auto svg = test::readSvg(path);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    for (const QString &t : ticks)
        QVERIFY2(svg.texts.contains(t), qPrintable(t + " not in " + svg.texts.join('|')));
    if (scale != int(ColorScaleKind::Linear)) // no linear tick is left behind
        QVERIFY2(!svg.texts.contains(QStringLiteral("0.50")), qPrintable(svg.texts.join('|')));
}

void TestSetFigures::modelGridTilesMatchTheMaps()
{
    const AttentionSet set = readFixture("lhtt_f32.npy");
    FigureOptions o;
    o.view = FigureView::Model;
    FigureSize size;
    size.dpi = 300;
    const FigureExporter exporter(set, "lhtt_f32.npy");
    const QString png = kFigureDir + "/model-lhtt_f32.png";
    QString error;
    QVERIFY2(exporter.write(png, o, size, &error), qPrintable(error));
    const QImage image(png);
    const QSizeF page = exporter.pageSize(o, size);
    QVERIFY2(std::abs(page.width() - FigureRenderer::kSingleColumn) < 1, qPrintable(QString::number(page.width())));
    const FigureRenderer renderer = setFigure(set, "lhtt_f32.npy", o);
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), page));
    QCOMPARE(int(maps.size()), set.layers() * set.heads());
    QCOMPARE(int(renderer.tiles().size()), 12);
    // Tiles row by row: layer l, head h at index l * H + h; each cell the colour of its weight.
    for (int i = 0; i < 12; ++i)
        QCOMPARE(renderer.tiles()[std::size_t(i)], std::make_pair(i / 4, i % 4));
    const int checked = checkCells(image, 300 / 72.0, maps, [&](std::size_t m, Eigen::Index r, Eigen::Index c) {
        return expectedColor(ColorScaleKind::Linear, set.at(0, int(m) / 4, int(m) % 4, r, c), {}, 1.0);
    });
    QCOMPARE(checked, 12 * 11 * 11);
    // Tiles do not overlap and keep their order on the page.
    for (std::size_t i = 1; i < maps.size(); ++i)
        QVERIFY(!maps[i].target.intersects(maps[i - 1].target.adjusted(0.1, 0.1, -0.1, -0.1)));

    // SVG: row and column titles, the grid's axis titles once.
    const QString svgPath = kFigureDir + "/model-lhtt_f32.svg";
    QVERIFY2(exporter.write(svgPath, o, {}, &error), qPrintable(error));
    const auto svg = test::readSvg(svgPath);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    for (const char *t : {"Layer 0", "Layer 1", "Layer 2", "Head 0", "Head 1", "Head 2", "Head 3"})
        QVERIFY2(svg.texts.contains(QLatin1String(t)), qPrintable(svg.texts.join('|')));
    QCOMPARE(svg.texts.count(HeatmapRenderer::rowAxisName()), 1);
    QCOMPARE(svg.texts.count(HeatmapRenderer::columnAxisName()), 1);
    // PDF: the same words as text.
    const QString pdf = kFigureDir + "/model-lhtt_f32.pdf";
    QVERIFY2(exporter.write(pdf, o, {}, &error), qPrintable(error));
    const QString pdftotext = QStandardPaths::findExecutable("pdftotext");
    if (!pdftotext.isEmpty()) {
        QProcess p;
        p.start(pdftotext, {pdf, "-"});
        QVERIFY(p.waitForFinished(60000));
        const QString text = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(text.contains("Layer 2") && text.contains("Head 3"), qPrintable(text));
    }
}

// A model's layer facts, as the model view draws them: each key/value head's query heads framed
// (no tag over the cells: the row title counts the key/value heads), a sliding-window layer's
// note beside its title and its edge over its tiles.
void TestSetFigures::modelGridMarksGroupsAndWindows()
{
    AttentionSet set = readFixture("lhtt_f32.npy");                    // 3 layers, 4 heads, 11 tokens
    set.layerFacts = {{4, 2, 0, 0.5}, {4, 4, 5, 0.5}, {4, 1, 0, 0.5}}; // groups of 2; a window; one group
    FigureOptions o;
    o.view = FigureView::Model;
    const FigureExporter exporter(set, "lhtt_f32.npy");
    QString error;
    const QString svgPath = kFigureDir + "/model-groups-window.svg";
    QVERIFY2(exporter.write(svgPath, o, {}, &error), qPrintable(error));
    const auto svg = test::readSvg(svgPath);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    const QString texts = svg.texts.join('|');
    for (const char *note : {"K/V heads: 2", "window 5", "K/V heads: 1"})
        QVERIFY2(texts.contains(QLatin1String(note)), qPrintable(texts));
    QCOMPARE(texts.count(QStringLiteral("K/V heads")), 2); // layer 1: every head its own

    // The frames in the group colours, around the tiles of layer 0 (heads 0-1, then 2-3).
    FigureSize size;
    size.dpi = 300;
    const QString png = kFigureDir + "/model-groups-window.png";
    QVERIFY2(exporter.write(png, o, size, &error), qPrintable(error));
    const QImage image(png);
    const QSizeF page = exporter.pageSize(o, size);
    const FigureRenderer renderer = setFigure(set, "lhtt_f32.npy", o); // the maps point into it
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), page));
    const double k = 300 / 72.0;
    auto framed = [&](int tile, QColor color) { // any pixel of that colour along the tile's left edge
        const QRectF t = maps[std::size_t(tile)].target;
        for (double y = t.top(); y < t.bottom(); y += 0.5)
            for (double dx = -1.5; dx <= 1.5; dx += 0.5) {
                const QColor c = image.pixelColor(QPoint(int((t.left() + dx) * k), int(y * k)));
                if (std::abs(c.red() - color.red()) < 40 && std::abs(c.green() - color.green()) < 40 &&
                    std::abs(c.blue() - color.blue()) < 40)
                    return true;
            }
        return false;
    };
    const QColor blue(0x2b, 0x6c, 0xb0), orange(0xc0, 0x5a, 0x1e);
    QVERIFY(framed(0, blue));
    QVERIFY(framed(2, orange));
    QVERIFY(!framed(4, blue) && !framed(4, orange)); // layer 1: every head its own key/value head
    QVERIFY(framed(8, blue));
    // Nothing covers the cells: head 1's top right cell keeps its weight's colour.
    const FigureHeatmap &head1 = maps[1];
    const QRectF grid1 = HeatmapRenderer(*head1.data, head1.options).layout(head1.target).grid;
    const double cell = grid1.width() / double(set.keys());
    const QColor corner =
        image.pixelColor(QPoint(int((grid1.right() - cell / 2) * k), int((grid1.top() + cell / 2) * k)));
    QCOMPARE(corner, expectedColor(ColorScaleKind::Linear, set.at(0, 0, 1, 0, set.keys() - 1), {}, 1.0));
    // The window's edge: white dashes inside layer 1's tiles, none in layer 0's (viridis has no
    // near-white colour).
    auto whitePixels = [&](int tile) {
        const QRectF cells = HeatmapRenderer(*maps[std::size_t(tile)].data, maps[std::size_t(tile)].options)
                                 .layout(maps[std::size_t(tile)].target)
                                 .grid;
        int n = 0;
        for (int y = int(cells.top() * k) + 2; y < int(cells.bottom() * k) - 2; ++y)
            for (int x = int(cells.left() * k) + 2; x < int(cells.right() * k) - 2; ++x)
                n += std::min({image.pixelColor(x, y).red(), image.pixelColor(x, y).green(),
                               image.pixelColor(x, y).blue()}) > 180
                         ? 1
                         : 0;
        return n;
    };
    QVERIFY2(whitePixels(5) > 20, qPrintable(QString::number(whitePixels(5))));
    QCOMPARE(whitePixels(1), 0);
}

void TestSetFigures::rolloutFigureIsCoreRollout()
{
    const AttentionSet set = readFixture("lhtt_f32.npy");
    FigureOptions o;
    o.view = FigureView::Rollout;
    o.values = false;
    const FigureExporter exporter(set, "lhtt_f32.npy");
    const QString png = kFigureDir + "/rollout-lhtt_f32.png";
    QString error;
    QVERIFY2(exporter.write(png, o, {}, &error), qPrintable(error));
    const FigureRenderer renderer = setFigure(set, "lhtt_f32.npy", o);
    const QSizeF page = exporter.pageSize(o, {});
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), page));
    QCOMPARE(int(maps.size()), 1);
    const MatrixF &shown = *maps[0].data->values;
    const MatrixD core = *attentionRollout(set);
    const auto numpy = readNpyFile(fixture("expected_lhtt_f32_rollout.npy").toStdString());
    QVERIFY(numpy.ok());
    QCOMPARE(shown.rows(), core.rows());
    for (Eigen::Index i = 0; i < shown.rows(); ++i)
        for (Eigen::Index j = 0; j < shown.cols(); ++j) {
            QCOMPARE(shown(i, j), float(core(i, j)));
            QVERIFY(std::abs(shown(i, j) - numpy->data[std::size_t(i * shown.cols() + j)]) < 1e-5);
        }
    const int checked = checkCells(QImage(png), 150 / 72.0, maps, [&](std::size_t, Eigen::Index r, Eigen::Index c) {
        return expectedColor(ColorScaleKind::Linear, numpy->data[std::size_t(r * 11 + c)], {}, 1.0);
    });
    QCOMPARE(checked, 121);
    QCOMPARE(maps[0].data->rowLabels.value(2), QStringLiteral("transform"));
}

void TestSetFigures::projectRendersModelAndRollout()
{
    const Project project = *readProjectFile(test::sourcePathStd("resources/examples/multihead-causal.attnscope.json"));
    const AttentionTrace trace = *CpuBackend().compute(project.problem);
    const FigureExporter exporter(project, trace);
    FigureOptions o;
    o.view = FigureView::Model;
    QString error;
    QVERIFY2(exporter.write(kFigureDir + "/project-model.png", o, {}, &error), qPrintable(error));
    const FigureRenderer model(ShownAttention::ofProject(project, trace), o);
    const auto tiles = model.heatmaps(QRectF(QPointF(0, 0), model.naturalSize()));
    QCOMPARE(int(tiles.size()), trace.heads()); // one layer
    for (int h = 0; h < trace.heads(); ++h) {
        QCOMPARE(*tiles[std::size_t(h)].data->values, trace.weights[std::size_t(h)]);
        QVERIFY(tiles[std::size_t(h)].data->allowed); // the causal mask is shown
    }
    o.view = FigureView::Rollout;
    QVERIFY2(exporter.write(kFigureDir + "/project-rollout.svg", o, {}, &error), qPrintable(error));
    const FigureRenderer rollout(ShownAttention::ofProject(project, trace), o);
    const auto maps = rollout.heatmaps(QRectF(QPointF(0, 0), rollout.naturalSize()));
    QCOMPARE(int(maps.size()), 1);
    const MatrixD expected = *attentionRollout(AttentionSet::fromTrace(trace, nullptr));
    QCOMPARE(*maps[0].data->values, MatrixF(expected.cast<float>()));
}

void TestSetFigures::mergedWordsFigure()
{
    const AttentionSet set = readFixture("lhtt_f32.npy");
    FigureOptions o;
    o.view = FigureView::Head;
    o.mergeWords = true;
    QString error;
    QVERIFY2(FigureExporter(set, "lhtt_f32.npy").write(kFigureDir + "/merged-words.png", o, {}, &error),
             qPrintable(error));
    const FigureRenderer renderer = setFigure(set, "lhtt_f32.npy", o);
    const auto maps = renderer.heatmaps(QRectF(0, 0, 400, 400));
    const auto numpy = readNpyFile(fixture("expected_lhtt_f32_merged_l0h0.npy").toStdString());
    QVERIFY(numpy.ok());
    const MatrixF &v = *maps[0].data->values;
    QCOMPARE(v.rows(), numpy->shape[0]);
    QCOMPARE(v.cols(), numpy->shape[1]);
    for (Eigen::Index i = 0; i < v.size(); ++i)
        QVERIFY(std::abs(v(i / v.cols(), i % v.cols()) - numpy->data[std::size_t(i)]) < 1e-5);
    QVERIFY2(maps[0].data->columnLabels.contains("transformer"), qPrintable(maps[0].data->columnLabels.join('|')));
    QVERIFY(renderer.title().contains("(words)"));
}

void TestSetFigures::layerAndHeadOutOfRangeAreRefused()
{
    const AttentionSet set = readFixture("lhtt_f32.npy");
    FigureOptions o;
    o.view = FigureView::Head;
    o.layer = 3;
    const QString path = kFigureDir + "/refused.png";
    QFile::remove(path);
    QString error;
    QVERIFY(!FigureExporter(set, "x").write(path, o, {}, &error));
    QVERIFY2(error.contains("layer 3 is out of range: the input has 3 layer(s), numbered 0 to 2"), qPrintable(error));
    o.layer = 0;
    o.head = -1;
    QVERIFY(!FigureExporter(set, "x").write(path, o, {}, &error));
    QVERIFY2(error.contains("numbered 0 to 3"), qPrintable(error));
    QVERIFY(!QFile::exists(path));
}

void TestSetFigures::longMapsArePooledInGridTiles()
{
    // 300 tokens: grid tiles hold 256 x 256 cells, each the largest weight of its block.
    const int t = 300;
    std::vector<float> v(std::size_t(2 * t * t));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = float((i * 7919) % 1000) / 1000.0f;
    const AttentionSet set = *AttentionSet::fromFloats(v, 1, 1, 2, t, t);
    FigureOptions o;
    o.view = FigureView::Model;
    const FigureRenderer renderer = setFigure(set, "long", o);
    QVERIFY(renderer.problem().isEmpty());
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), renderer.naturalSize()));
    QCOMPARE(int(maps.size()), 2);
    for (int h = 0; h < 2; ++h) {
        const MatrixF &tile = *maps[std::size_t(h)].data->values;
        QCOMPARE(tile.rows(), Eigen::Index(FigureRenderer::kMaxTileSide));
        for (int a : {0, 17, 255})
            for (int b : {0, 100, 255}) {
                float best = 0;
                for (int i = a * t / 256; i < (a + 1) * t / 256; ++i)
                    for (int j = b * t / 256; j < (b + 1) * t / 256; ++j)
                        best = std::max(best, set.at(0, 0, h, i, j));
                QCOMPARE(tile(a, b), best);
            }
    }
    QString error;
    QVERIFY2(FigureExporter(set, "long").write(kFigureDir + "/long-model.png", o, {}, &error), qPrintable(error));
}

void TestSetFigures::cliRendersAttentionFilesAsTheLibrary()
{
    const AttentionSet set = readFixture("lhtt_f32.npy");
    for (const char *view : {"model", "rollout", "heads", "mean", "headview"}) {
        const QString out = kFigureDir + QStringLiteral("/cli-%1.png").arg(view);
        QFile::remove(out);
        const auto run = test::runCli({"render", fixture("lhtt_f32.npy"), "--out", out, "--view", view, "--layer", "1",
                                       "--color-scale", "log", "--dpi", "200"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        FigureOptions o;
        o.view = *FigureOptions::viewFromKey(view);
        o.layer = 1;
        o.colorScale = ColorScaleKind::Log;
        FigureSize size;
        size.dpi = 200;
        const QImage library = FigureExporter(set, "lhtt_f32.npy").image(o, size);
        QCOMPARE(test::meanPixelDifference(QImage(out), library), 0.0);
    }
}

void TestSetFigures::cliErrorsWriteNothing_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString f = fixture("lhtt_f32.npy");
    QTest::newRow("layer") << QStringList{"render", f, "--view", "head", "--layer", "3"} << 2
                           << "--layer 3: " + f + " has 3 layer(s), numbered 0 to 2";
    QTest::newRow("head") << QStringList{"render", f, "--view", "head", "--head", "4"} << 2
                          << "--head 4: " + f + " has 4 head(s), numbered 0 to 3";
    QTest::newRow("project layer") << QStringList{"render", test::example("multihead-causal"), "--layer", "1"} << 2
                                   << "has 1 layer(s), numbered 0 to 0";
    QTest::newRow("teaching of a file") << QStringList{"render", f, "--view", "teaching"} << 2
                                        << "its views are model, rollout, head, heads, mean and headview";
    QTest::newRow("words without labels") << QStringList{"render", fixture("htt_f32.npy"), "--merge-words"} << 1
                                          << "words cannot be merged: the input has no token labels";
    QTest::newRow("rollout of cross-attention")
        << QStringList{"render", fixture("cross_htt_f32.npy"), "--view", "rollout"} << 1 << "square";
    QTest::newRow("bad scale") << QStringList{"render", f, "--color-scale", "sqrt"} << 2
                               << "--color-scale: expected linear, log or percentile, found \"sqrt\"";
}

void TestSetFigures::cliErrorsWriteNothing()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    const QString out = kFigureDir + "/cli-refused.png";
    QFile::remove(out);
    const auto run = test::runCli(args + QStringList{"--out", out});
    QCOMPARE(run.code, code);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    int lines = 0; // Qt's start-up chatter ("QStandardPaths: ...") aside
    for (const QString &line : run.err.split('\n', Qt::SkipEmptyParts))
        lines += line.startsWith(QLatin1String("QStandardPaths:")) ? 0 : 1;
    QCOMPARE(lines, 1);
    QVERIFY(!QFile::exists(out));
}

QTEST_MAIN(TestSetFigures)
#include "tst_set_figures.moc"
