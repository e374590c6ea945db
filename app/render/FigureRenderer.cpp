#include "app/render/FigureRenderer.h"

#include "app/render/DisplayText.h"
#include "app/render/ErrorText.h"
#include "app/render/HeadViewRenderer.h"
#include "app/render/TeachingRenderer.h"

#include <QFontMetricsF>
#include <QLocale>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// Natural cell sizes in points: small matrices get cells that hold their values, large ones
// a grid of about this many points.
constexpr double kHeadGrid = 320.0, kHeadCell = 34.0;
constexpr double kTileGrid = 200.0, kTileCell = 26.0;
constexpr double kMaskGrid = 320.0, kMaskCell = 28.0;
// A figure for a paper fits the text block of a page (7 x 9 in) by default: large matrices
// and many heads get smaller cells and thinner labels rather than a larger page.
constexpr double kMaxWidth = 504.0, kMaxHeight = 648.0;
constexpr double kTeachingWidth = kMaxWidth;

} // namespace

FigureRenderer::FigureRenderer(ShownAttention shown, const FigureOptions &options,
                               std::shared_ptr<const MaskMatrix> allowed)
    : m_shown(std::move(shown)), m_options(options), m_allowed(std::move(allowed))
{
    m_options.fontSize = std::clamp(m_options.fontSize, 4, 96);
    const AttentionSet &set = m_shown.set;
    if (m_allowed && (m_allowed->rows() != set.queries() || m_allowed->cols() != set.keys()))
        m_allowed = nullptr;
    if (set.isEmpty()) {
        m_problem = m_shown.tensors ? tr("nothing to draw: the trace has no heads")
                                    : tr("nothing to draw: the input has no attention maps");
        return;
    }
    const int layers = set.layers(), heads = set.heads();
    if (m_shown.tensors && layers == 1) {
        // A project's one layer: a head out of range is the nearest (the GUI's selection).
        m_options.head = std::clamp(m_options.head, 0, heads - 1);
        m_options.layer = 0;
    }
    const FigureView view = m_options.view;
    if (!isSetFigure() && (m_options.layer < 0 || m_options.layer >= layers)) {
        m_problem = tr("layer %1 is out of range: the input has %2 layer(s), numbered 0 to %3")
                        .arg(m_options.layer)
                        .arg(layers)
                        .arg(layers - 1);
        return;
    }
    if ((view == FigureView::Head || view == FigureView::HeadView) && (m_options.head < 0 || m_options.head >= heads)) {
        m_problem = tr("head %1 is out of range: the input has %2 head(s), numbered 0 to %3")
                        .arg(m_options.head)
                        .arg(heads)
                        .arg(heads - 1);
        return;
    }
    if (m_options.mergeWords && (set.queryWordOf.empty() || set.keyWordOf.empty())) {
        m_problem = tr("words cannot be merged: the input has no token labels");
        return;
    }
    if (!m_shown.tensorsOf(m_options.layer) && (view == FigureView::Teaching || view == FigureView::Mask)) {
        m_problem = tr("the %1 view needs a project").arg(FigureOptions::viewKey(view));
        return;
    }
    if (isSetFigure())
        buildSet();
    else
        buildLayer();
}

void FigureRenderer::buildLayer()
{
    // A project's trace is drawn as it is (its mask, its scores); otherwise the layer is read
    // now, merged into words when asked.
    m_layer = m_shown;
    m_layer.mergeWords = m_options.mergeWords;
    m_layer.layer = m_options.layer;
    // The layer the views read already (same layer, same merging) is drawn as it is.
    const bool readAlready =
        m_shown.maps && m_shown.maps->layer == m_options.layer && m_shown.merges() == m_layer.merges();
    if ((!m_shown.tensorsOf(m_options.layer) || m_layer.merges()) && !readAlready) {
        m_layer.tensors = nullptr;
        m_layer.maps = readLayer(m_layer, m_options.layer, nullptr);
    }
    const auto add = [this](int head, HeatmapQuantity quantity) {
        if (!m_layer.scores())
            quantity = HeatmapQuantity::Weights; // a set's maps are weights
        // A difference: the enlarged head on its own ±max|value|, a grid's tiles on the layer's.
        const ScaleScope scope = !m_layer.set.isSigned()               ? m_options.scale
                                 : m_options.view == FigureView::Heads ? ScaleScope::Shared
                                                                       : ScaleScope::PerHead;
        HeatmapData d = HeatmapData::of(m_layer, head, quantity, scope);
        if (!d.allowed && m_allowed && m_allowed->rows() == d.rows() && m_allowed->cols() == d.cols())
            d.allowed = m_allowed.get(); // a pooled block's cells with no allowed key
        m_data.push_back(std::move(d));
    };
    switch (m_options.view) {
    case FigureView::Head:
        add(m_options.head, m_options.quantity);
        break;
    case FigureView::Mean:
        // The mean of signed scores says little: the mean view shows weights, as in the GUI.
        add(-1, HeatmapQuantity::Weights);
        break;
    case FigureView::Heads:
        for (int h = 0; h < m_layer.heads(); ++h)
            add(h, m_options.quantity);
        m_columns = chooseColumns();
        if (sharedColorBar())
            shareOneScale();
        break;
    default:
        break;
    }
}

void FigureRenderer::shareOneScale()
{
    if (m_options.colorScale == ColorScaleKind::Linear)
        return; // a linear scale is its range, which the tiles share already
    std::vector<const HeatmapData *> all;
    for (const HeatmapData &d : m_data)
        all.push_back(&d);
    const auto scale = std::make_shared<const ColorScale>(ColorScale::build(m_options.colorScale, all));
    for (HeatmapData &d : m_data)
        d.scale = scale;
}

QFont FigureRenderer::font(double scale) const
{
    // Pixel-sized in points: metrics do not depend on any device's DPI.
    QFont f;
    f.setPixelSize(std::max(3, int(std::lround(m_options.fontSize * scale))));
    return f;
}

namespace {

bool hasChinese(const QString &text)
{
    for (const QChar c : text)
        if (c.unicode() >= 0x3400 && c.unicode() <= 0x9fff)
            return true;
    return false;
}

} // namespace

QString titleInLanguage(const QString &title)
{
    const QString whole = title.trimmed();
    const QStringList parts = whole.split(QStringLiteral(" \u2014 "));
    if (parts.size() != 2 || hasChinese(parts[0]) == hasChinese(parts[1]))
        return whole;
    const bool chinese = QLocale().language() == QLocale::Chinese;
    return hasChinese(parts[0]) == chinese ? parts[0] : parts[1];
}

QString shortFigureName(const QString &title)
{
    QString name = titleInLanguage(title);
    // Its head only: up to a colon or a parenthesis.
    for (const QString &cut :
         {QStringLiteral(": "), QStringLiteral("\uff1a"), QStringLiteral(" ("), QStringLiteral("\uff08")}) {
        const int at = name.indexOf(cut);
        if (at > 0)
            name = name.left(at);
    }
    name = name.trimmed();
    return name.size() <= kShortFigureName ? name : QString();
}

QString FigureRenderer::title() const
{
    if (m_options.title)
        return displayText(*m_options.title);
    // Short, for a slide: the view and head, after the source's name where that is short.
    const QString name = m_shown.title.isEmpty() ? QString() : shortFigureName(displayText(m_shown.title));
    const bool project = m_shown.tensors && m_shown.set.layers() == 1; // a layer that goes unsaid
    QString view = isSetFigure() || !project ? setTitle() : layerTitle();
    QString t;
    if (name.isEmpty()) {
        if (!view.isEmpty())
            view[0] = view[0].toUpper();
        t = view.isEmpty() ? QStringLiteral("AttnScope") : view;
    } else {
        t = view.isEmpty() ? name : tr("%1 \u2014 %2").arg(name, view);
    }
    return m_options.mergeWords ? tr("%1 (words)").arg(t) : t;
}

// A project's figure: its one layer goes unsaid, the quantity is said.
QString FigureRenderer::layerTitle() const
{
    const int h = m_options.head, H = m_shown.set.heads();
    const QString what = m_options.quantity == HeatmapQuantity::Scores ? tr("scaled scores") : tr("weights");
    switch (m_options.view) {
    case FigureView::Head:
        return tr("head %1 (%2)").arg(h).arg(what);
    case FigureView::Heads:
        return H == 1 ? tr("1 head (%1)").arg(what) : tr("%1 heads (%2)").arg(H).arg(what);
    case FigureView::Mean:
        return H == 1 ? tr("mean weights over 1 head") : tr("mean weights over %1 heads").arg(H);
    case FigureView::HeadView:
        return m_options.overlayHeads ? tr("head view, all heads") : tr("head view, head %1").arg(h);
    case FigureView::Teaching:
        return tr("head %1 step by step").arg(h);
    case FigureView::Mask:
        return tr("attention mask (%1 \u00d7 %2)").arg(m_shown.set.queries()).arg(m_shown.set.keys());
    case FigureView::Model:
    case FigureView::Rollout:
        break;
    }
    return {};
}

// A set's figure (a file, a model run, a project's Model and Rollout): its layer is said.
QString FigureRenderer::setTitle() const
{
    const int layer = m_options.layer, head = m_options.head, layers = m_shown.set.layers();
    switch (m_options.view) {
    case FigureView::Model:
        return layers == 1 ? tr("1 layer \u00d7 %1 heads").arg(m_shown.set.heads())
                           : tr("%1 layers \u00d7 %2 heads").arg(layers).arg(m_shown.set.heads());
    case FigureView::Rollout:
        return layers == 1 ? tr("attention rollout over 1 layer") : tr("attention rollout over %1 layers").arg(layers);
    case FigureView::Head:
        return tr("layer %1, head %2").arg(layer).arg(head);
    case FigureView::Heads:
        return tr("layer %1, every head").arg(layer);
    case FigureView::Mean:
        return tr("layer %1, mean over heads").arg(layer);
    case FigureView::HeadView:
        return m_options.overlayHeads ? tr("layer %1, head view, all heads").arg(layer)
                                      : tr("layer %1, head view, head %2").arg(layer).arg(head);
    case FigureView::Teaching:
    case FigureView::Mask:
        break;
    }
    return {};
}

QString FigureRenderer::description() const
{
    return tr("AttnScope figure: %1").arg(FigureOptions::viewName(m_options.view));
}

QString FigureRenderer::problem() const
{
    return m_problem;
}

QFont FigureRenderer::titleFont() const
{
    QFont bold = font(isSetFigure() ? 1.1 : 1.25);
    bold.setBold(true);
    const double width = QFontMetricsF(bold).horizontalAdvance(title());
    if (isSetFigure()) {
        // A long title is set smaller, down to 0.6 of the body size, before it is elided.
        const double room =
            (m_shown.set.heads() <= 4 && m_options.view == FigureView::Model ? kSingleColumn : kDoubleColumn) -
            4 * QFontMetricsF(bold).height() * 0.3;
        if (width > room) {
            bold = font(std::max(0.6, 1.1 * room / width * 0.97));
            bold.setBold(true);
        }
        return bold;
    }
    // A long title is set smaller, down to the body's size, before it widens the figure.
    const double room = kMaxWidth - 4 * QFontMetricsF(bold).height() * 0.4;
    if (width > room) {
        bold = font(std::max(1.0, 1.25 * room / width));
        bold.setBold(true);
    }
    return bold;
}

QRectF FigureRenderer::titleRect(const QRectF &target) const
{
    if (title().isEmpty())
        return {};
    const QFontMetricsF fm(titleFont());
    const double pad = fm.height() * (isSetFigure() ? 0.3 : 0.4);
    return QRectF(target.left() + pad, target.top() + pad, target.width() - 2 * pad, fm.height() * 1.2);
}

QRectF FigureRenderer::bodyRect(const QRectF &target) const
{
    const QRectF t = titleRect(target);
    const double pad = QFontMetricsF(font()).height() * 0.3;
    QRectF body = target.adjusted(pad, pad, -pad, -pad);
    if (!t.isEmpty())
        body.setTop(t.bottom() + pad);
    return body;
}

HeatmapOptions FigureRenderer::heatmapOptions(bool small) const
{
    HeatmapOptions o;
    o.colorMap = m_options.colorMap;
    o.colorScale = m_options.colorScale;
    o.showTitle = small;                           // tiles: "Head N"; a single heatmap has the figure's title
    o.axisTitles = m_options.axisTitles && !small; // the grid has one pair for all tiles
    o.showLabels = m_options.labels;
    o.showColorBar = m_options.colorBar && !(small && sharedColorBar());
    o.showValues = m_options.values;
    o.font = font(small ? 0.85 : 1.0);
    o.thinLabels = true;
    o.pixelScale = m_options.pixelScale;
    o.hatchSpacing = 4.0;
    return o;
}

bool FigureRenderer::sharedColorBar() const
{
    // Every tile has the same range unless each head has its own.
    return m_options.view == FigureView::Heads && m_options.scale != ScaleScope::PerHead;
}

double FigureRenderer::gridAxisRoom() const
{
    return m_options.view == FigureView::Heads && m_options.axisTitles ? QFontMetricsF(font()).height() * 1.2 : 0.0;
}

QSizeF FigureRenderer::tileSize() const
{
    const HeatmapOptions o = heatmapOptions(true);
    const int columns = gridColumns(), rows = (int(m_data.size()) + columns - 1) / columns;
    const double pad = QFontMetricsF(font()).height() * 0.3;
    const double bar = sharedColorBar() && m_options.colorBar
                           ? HeatmapRenderer(m_data[0], heatmapOptions(false)).colorBarWidth()
                           : 0.0;
    const QRectF t = titleRect(QRectF(0, 0, kMaxWidth, 1000));
    const double titleHeight = t.isEmpty() ? 0.0 : t.bottom() + pad;
    const QSizeF room((kMaxWidth - 2 * pad - bar - gridAxisRoom()) / columns - 4,
                      (kMaxHeight - 2 * pad - titleHeight - gridAxisRoom()) / std::max(rows, 1) - 4);
    return heatmapNaturalSize(m_data[0], o, kTileGrid, kTileCell, room) + QSizeF(4, 4);
}

int FigureRenderer::gridColumns() const
{
    if (m_columns > 0)
        return m_columns;
    const int n = std::max(1, int(m_data.size()));
    return std::max(1, int(std::ceil(std::sqrt(double(n)))));
}

int FigureRenderer::chooseColumns() const
{
    // The arrangement whose tiles get the largest cells on the default page: what a tile
    // needs besides its cells (title, labels) is measured once, at the natural tile size.
    const int n = int(m_data.size());
    const HeatmapData &d = m_data[0];
    const HeatmapOptions o = heatmapOptions(true);
    const double tokens = double(std::max<Eigen::Index>({d.rows(), d.cols(), 1}));
    const double natural = std::min(kTileGrid / tokens, kTileCell);
    const QSizeF ref = heatmapNaturalSize(d, o, kTileGrid, kTileCell, QSizeF(1e6, 1e6));
    const double extraW = ref.width() - natural * double(d.cols()), extraH = ref.height() - natural * double(d.rows());
    const double pad = QFontMetricsF(font()).height() * 0.3;
    const double bar =
        sharedColorBar() && m_options.colorBar ? HeatmapRenderer(d, heatmapOptions(false)).colorBarWidth() : 0.0;
    const QRectF t = titleRect(QRectF(0, 0, kMaxWidth, 1000));
    const double width = kMaxWidth - 2 * pad - bar - gridAxisRoom();
    const double height = kMaxHeight - 2 * pad - (t.isEmpty() ? 0.0 : t.bottom() + pad) - gridAxisRoom();
    int best = 1;
    double bestCell = -1.0;
    for (int c = 1; c <= n; ++c) {
        const int r = (n + c - 1) / c;
        const double cell = std::min(
            {natural, (width / c - 4 - extraW) / double(d.cols()), (height / r - 4 - extraH) / double(d.rows())});
        if (cell >= bestCell - 1e-9) { // ties: the wider arrangement, as papers set heads side by side
            bestCell = cell;
            best = c;
        }
    }
    return best;
}

QSizeF FigureRenderer::heatmapNaturalSize(const HeatmapData &data, const HeatmapOptions &o, double gridSide,
                                          double maxCell, const QSizeF &maxSize)
{
    const double n = double(std::max(data.rows(), data.cols()));
    // Cells hold their values where values are shown: a larger font makes larger cells.
    if (o.showValues)
        maxCell = std::max(maxCell, QFontMetricsF(o.font).horizontalAdvance(QStringLiteral("0.00")) +
                                        QFontMetricsF(o.font).height() * 0.5);
    double cell = std::min(gridSide / std::max(n, 1.0), maxCell);
    QSizeF size(240, 160);
    // Lay out in generous room and keep what is not grid (labels, title, colour bar); where
    // that is larger than maxSize, the cells shrink (labels thin out with them) and again.
    for (int pass = 0; pass < 3; ++pass) {
        const QRectF guess(0, 0, cell * double(data.cols()) + 400, cell * double(data.rows()) + 400);
        const HeatmapLayout l = HeatmapRenderer(data, o).layout(guess);
        if (l.grid.isEmpty())
            return size;
        const double pad = std::max(2.0, QFontMetricsF(o.font).height() * 0.3);
        const double areaLeft = guess.left() + pad;
        const double rowLabels = l.rowLabels.isEmpty() ? 0.0 : l.rowLabels.width();
        const double axis = l.rowAxisTitle.isEmpty() ? 0.0 : l.rowAxisTitle.width();
        const double slack = l.grid.left() - rowLabels - axis - areaLeft; // centred: as much on the right
        const double extraW = guess.width() - l.grid.width() - 2 * slack;
        double extraH = l.grid.top() - guess.top() + pad + 1;
        // The generous guess has cells wide enough for the column labels to lie across them; at
        // `cell` they may not, and then they stand up and need their length, not a line.
        if (o.showLabels && !l.rotatedColumnLabels && !l.columnLabels.isEmpty()) {
            const QFontMetricsF fm(o.font);
            double longest = 0.0;
            for (qsizetype j = 0; j < std::min<qsizetype>(data.columnLabels.size(), 2048); ++j)
                longest = std::max(longest, fm.horizontalAdvance(data.columnLabels[j]));
            const double standing = longest + pad + std::max(2.0, fm.height() * 0.25) + 2;
            if (longest + pad > cell)
                extraH += std::max(0.0, standing - l.columnLabels.height());
        }
        size = QSizeF(cell * double(data.cols()) + extraW + 1, cell * double(data.rows()) + extraH);
        const double fit = std::min((maxSize.width() - extraW - 1) / double(data.cols()),
                                    (maxSize.height() - extraH) / double(data.rows()));
        if (fit >= cell - 1e-9)
            break;
        cell = std::max(fit, 0.05);
    }
    return size;
}

std::vector<FigureHeatmap> FigureRenderer::heatmaps(const QRectF &target) const
{
    if (isSetFigure())
        return setHeatmaps(target);
    std::vector<FigureHeatmap> out;
    if (m_data.empty())
        return out;
    const QRectF body = bodyRect(target);
    if (m_options.view != FigureView::Heads) {
        out.push_back({&m_data[0], heatmapOptions(false), body});
        return out;
    }
    const HeatmapOptions o = heatmapOptions(true);
    QRectF tiles = body;
    if (sharedColorBar() && m_options.colorBar)
        tiles.setRight(body.right() - HeatmapRenderer(m_data[0], heatmapOptions(false)).colorBarWidth());
    const double axis = gridAxisRoom();
    tiles.adjust(axis, axis, 0, 0);
    const int columns = gridColumns(), rows = (int(m_data.size()) + columns - 1) / columns;
    double w = tiles.width() / columns, h = tiles.height() / std::max(rows, 1);
    // Tiles keep their natural proportions; room to spare (a long title made the figure wide)
    // goes to the margins, with the tiles and the colour bar centred together.
    const QSizeF natural = tileSize();
    const double aspect = natural.width() / std::max(natural.height(), 1.0);
    w = std::min(w, h * aspect);
    h = std::min(h, w / aspect);
    const double offset = (tiles.width() - w * columns) / 2;
    for (size_t i = 0; i < m_data.size(); ++i) {
        const int c = int(i) % columns, r = int(i) / columns;
        out.push_back({&m_data[i], o, QRectF(tiles.left() + offset + c * w, tiles.top() + r * h, w, h)});
    }
    return out;
}

MaskRenderOptions FigureRenderer::maskOptions() const
{
    MaskRenderOptions o;
    o.font = font();
    o.showLabels = m_options.labels;
    o.showLegend = m_options.colorBar;
    o.thinLabels = true;
    o.hatchSpacing = 4.0;
    return o;
}

MaskLayout FigureRenderer::maskLayout(const QRectF &target) const
{
    const LayerTensors *tensors = m_layer.shownTensors();
    if (!tensors)
        return {};
    return MaskRenderer(tensors->project, maskOptions()).layout(bodyRect(target));
}

QSizeF FigureRenderer::naturalSize() const
{
    if (isSetFigure())
        return setNaturalSize();
    const QFontMetricsF fm(font());
    QSizeF body(360, 240);
    const Eigen::Index tq = m_layer.shownQueries(), tk = m_layer.shownKeys();
    switch (m_options.view) {
    case FigureView::Head:
    case FigureView::Mean:
        if (!m_data.empty()) {
            const QRectF t = titleRect(QRectF(0, 0, kMaxWidth, 1000));
            const double room = kMaxHeight - (t.isEmpty() ? 0.0 : t.bottom()) - 3 * fm.height() * 0.3;
            body = heatmapNaturalSize(m_data[0], heatmapOptions(false), kHeadGrid, kHeadCell,
                                      QSizeF(kMaxWidth - 2 * fm.height() * 0.3, room));
        }
        break;
    case FigureView::Heads:
        if (!m_data.empty()) {
            const QSizeF tile = tileSize();
            const int columns = gridColumns(), rows = (int(m_data.size()) + columns - 1) / columns;
            const double bar = sharedColorBar() && m_options.colorBar
                                   ? HeatmapRenderer(m_data[0], heatmapOptions(false)).colorBarWidth()
                                   : 0.0;
            body = QSizeF(tile.width() * columns + bar + gridAxisRoom(), tile.height() * rows + gridAxisRoom());
        }
        break;
    case FigureView::HeadView: {
        double label = 0.0;
        const QStringList queries = m_layer.queryLabels(), keys = m_layer.keyLabels();
        for (qsizetype i = 0; i < std::min<qsizetype>(queries.size(), 2048); ++i)
            label = std::max(label, fm.horizontalAdvance(queries[i]));
        for (qsizetype j = 0; j < std::min<qsizetype>(keys.size(), 2048); ++j)
            label = std::max(label, fm.horizontalAdvance(keys[j]));
        const double rowsHeight = std::min(double(std::max(tq, tk)) * fm.height() * 1.5, 600.0);
        body = QSizeF(std::max(360.0, (std::min(label, 200.0) + 16) / 0.35),
                      rowsHeight + fm.height() * 3.1 + 6 + (m_options.overlayHeads ? 0 : 0));
        break;
    }
    case FigureView::Teaching:
        if (const LayerTensors *t = m_layer.shownTensors(); t && t->trace.heads() > 0) {
            TeachingRenderer teaching(t->project, t->trace, m_options.head, m_options.query, m_options.key);
            // A readable figure: the tensors of a step side by side where the page has room.
            teaching.setRoom((kTeachingWidth - 2 * fm.height() * 0.3) / fm.averageCharWidth());
            body = teaching.naturalSize(font(), kTeachingWidth - 2 * fm.height() * 0.3);
            // Wide tables are scaled down to the page width when painted.
            const double w = kTeachingWidth - 2 * fm.height() * 0.3;
            if (body.width() > w)
                body = QSizeF(w, body.height() * w / body.width());
        }
        break;
    case FigureView::Mask: {
        const LayerTensors *t = m_layer.shownTensors();
        if (!t)
            break;
        const MaskRenderer renderer(t->project, maskOptions());
        const double cell = std::min(kMaskGrid / double(std::max<Eigen::Index>({tq, tk, 1})), kMaskCell);
        const QRectF guess(0, 0, cell * double(tk) + 300, cell * double(tq) + 300);
        const MaskLayout l = renderer.layout(guess);
        const double legend = l.legend.isEmpty() ? 0.0 : l.legend.height() + fm.height() * 0.3;
        // The legend's entries side by side.
        const double legendWidth = m_options.colorBar ? renderer.legendWidth() : 0.0;
        // The guess's cells may hold the key labels across; at `cell` they may stand up instead.
        double labelsTop = l.grid.top() - guess.top();
        if (l.labels && !l.rotatedColumnLabels) {
            double keyWidth = 0.0;
            const QStringList keys = m_layer.keyLabels();
            for (qsizetype j = 0; j < std::min<qsizetype>(keys.size(), 2048); ++j)
                keyWidth = std::max(keyWidth, fm.horizontalAdvance(keys[j]));
            if (keyWidth + 2 > cell)
                labelsTop = std::max(labelsTop, keyWidth + 6);
        }
        body = QSizeF(std::max(cell * double(tk) + (l.grid.left() - guess.left()) + 6, legendWidth),
                      cell * double(tq) + labelsTop + 4 + legend);
        break;
    }
    case FigureView::Model: // setNaturalSize()
    case FigureView::Rollout:
        break;
    }
    const double pad = fm.height() * 0.3;
    const QRectF t = titleRect(QRectF(0, 0, body.width(), 1000));
    const double titleHeight = t.isEmpty() ? 0.0 : t.bottom() + pad;
    // Wide enough for the title.
    const double titleWidth = t.isEmpty() ? 0.0 : QFontMetricsF(titleFont()).horizontalAdvance(title()) + 4 * pad;
    return QSizeF(std::ceil(std::max(body.width() + 2 * pad, titleWidth)),
                  std::ceil(body.height() + 2 * pad + titleHeight));
}

void FigureRenderer::paint(QPainter &painter, const QRectF &target) const
{
    if (isSetFigure()) {
        paintSetFigure(painter, target);
        return;
    }
    painter.save();
    if (!m_options.transparent)
        painter.fillRect(target, Qt::white);
    const QRectF t = titleRect(target);
    if (!t.isEmpty()) {
        const QFont bold = titleFont();
        painter.setFont(bold);
        painter.setPen(Qt::black);
        painter.drawText(t, Qt::AlignHCenter | Qt::AlignVCenter,
                         QFontMetricsF(bold).elidedText(title(), Qt::ElideRight, t.width()));
    }
    const QRectF body = bodyRect(target);
    switch (m_options.view) {
    case FigureView::Head:
    case FigureView::Mean:
    case FigureView::Heads: {
        const auto maps = heatmaps(target);
        for (const FigureHeatmap &m : maps)
            HeatmapRenderer(*m.data, m.options).paint(painter, m.target);
        if (const double axis = gridAxisRoom(); axis > 0 && !maps.empty()) {
            // One "key" above and one "query" beside the whole grid of tiles.
            const int columns = std::min(gridColumns(), int(maps.size()));
            const int rows = (int(maps.size()) + gridColumns() - 1) / gridColumns();
            const QRectF first = maps.front().target;
            const QRectF tiles(first.left(), first.top(), first.width() * columns, first.height() * rows);
            QFont italic = font();
            italic.setItalic(true);
            painter.save();
            painter.setFont(italic);
            painter.setPen(QColor(0x40, 0x40, 0x40));
            painter.drawText(QRectF(tiles.left(), tiles.top() - axis, tiles.width(), axis),
                             Qt::AlignHCenter | Qt::AlignTop, HeatmapRenderer::columnAxisName());
            painter.translate(tiles.left() - axis, tiles.bottom());
            painter.rotate(-90);
            painter.drawText(QRectF(0, 0, tiles.height(), axis), Qt::AlignHCenter | Qt::AlignTop,
                             HeatmapRenderer::rowAxisName());
            painter.restore();
        }
        if (sharedColorBar() && m_options.colorBar && !maps.empty()) {
            // One bar for every tile, beside the first row down to the last.
            const HeatmapRenderer first(*maps.front().data, maps.front().options);
            const HeatmapLayout top = first.layout(maps.front().target);
            const HeatmapLayout bottom =
                HeatmapRenderer(*maps.back().data, maps.back().options).layout(maps.back().target);
            const HeatmapOptions o = heatmapOptions(false);
            // The shared bar's legend names the non-finite colour when any tile has one.
            HeatmapData barData = *maps.front().data;
            barData.nonFinite = barData.nanCount = 0;
            for (const FigureHeatmap &m : maps) {
                barData.nonFinite += m.data->nonFinite;
                barData.nanCount += m.data->nanCount;
            }
            const HeatmapRenderer bar(barData, o);
            const QFontMetricsF fm(o.font);
            const double barWidth = std::max(8.0, fm.height() * 0.8);
            const double left = maps.front().target.left() + maps.front().target.width() * gridColumns() +
                                std::max(2.0, fm.height() * 0.3);
            const double y0 = top.grid.top(), y1 = std::max(bottom.grid.bottom(), y0 + fm.height() * 4);
            const double legend = bar.nonFiniteLegendHeight();
            bar.paintColorBar(painter, QRectF(left, y0, barWidth, std::max(fm.height() * 2, y1 - y0 - legend)));
        }
        break;
    }
    case FigureView::HeadView:
        if (m_layer.heads() > 0) {
            HeadViewOptions o;
            o.head = m_options.head;
            o.overlay = m_options.overlayHeads;
            o.font = font();
            HeadViewRenderer(m_layer, o).paint(painter, body);
        }
        break;
    case FigureView::Teaching:
        if (const LayerTensors *t = m_layer.shownTensors(); t && t->trace.heads() > 0) {
            TeachingRenderer teaching(t->project, t->trace, m_options.head, m_options.query, m_options.key);
            teaching.setRoom((kTeachingWidth - 2 * QFontMetricsF(font()).height() * 0.3) /
                             QFontMetricsF(font()).averageCharWidth());
            teaching.paint(painter, body, font());
        }
        break;
    case FigureView::Mask:
        if (const LayerTensors *t = m_layer.shownTensors())
            MaskRenderer(t->project, maskOptions()).paint(painter, body);
        break;
    case FigureView::Model: // paintSetFigure()
    case FigureView::Rollout:
        break;
    }
    painter.restore();
}

} // namespace attnscope
