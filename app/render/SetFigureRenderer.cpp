#include "app/render/SetFigureRenderer.h"

#include "app/render/DisplayText.h"
#include "app/render/ErrorText.h"
#include "core/analysis/AttentionStats.h"
#include "core/analysis/Pooling.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// A single heatmap's natural cells, as the project figures have them.
constexpr double kHeadGrid = 320.0, kHeadCell = 34.0;
constexpr double kMaxHeight = 648.0; // a page's text block (9 in)

QStringList labelsOf(const std::vector<std::string> &tokens, Eigen::Index n)
{
    QStringList out;
    for (Eigen::Index i = 0; i < n; ++i)
        out << (std::size_t(i) < tokens.size() ? displayText(tokens[std::size_t(i)]) : QString::number(i));
    return out;
}

QStringList blockLabels(Eigen::Index total, Eigen::Index n)
{
    QStringList out;
    for (Eigen::Index a = 0; a < n; ++a)
        out << QString::number(binStart(a, total, n));
    return out;
}

} // namespace

SetFigureRenderer::SetFigureRenderer(AttentionSet set, const QString &name, const FigureOptions &options,
                                     const MaskMatrix *allowed, std::vector<bool> emptyRows, MaskFill maskFill)
    : m_set(std::move(set)), m_name(name), m_options(options), m_allowed(allowed), m_emptyRows(std::move(emptyRows)),
      m_maskFill(maskFill)
{
    m_options.fontSize = std::clamp(m_options.fontSize, 4, 96);
    if (m_allowed && (m_allowed->rows() != m_set.queries() || m_allowed->cols() != m_set.keys()))
        m_allowed = nullptr;
    if (m_set.isEmpty()) {
        m_problem = tr("nothing to draw: the input has no attention maps");
        return;
    }
    const int layers = m_set.layers(), heads = m_set.heads();
    const int layer = m_options.layer, head = m_options.head;
    const bool oneLayer =
        m_options.view == FigureView::Head || m_options.view == FigureView::Heads || m_options.view == FigureView::Mean;
    if (oneLayer && (layer < 0 || layer >= layers)) {
        m_problem = tr("layer %1 is out of range: the input has %2 layer(s), numbered 0 to %3")
                        .arg(layer)
                        .arg(layers)
                        .arg(layers - 1);
        return;
    }
    if (m_options.view == FigureView::Head && (head < 0 || head >= heads)) {
        m_problem = tr("head %1 is out of range: the input has %2 head(s), numbered 0 to %3")
                        .arg(head)
                        .arg(heads)
                        .arg(heads - 1);
        return;
    }
    if (m_options.mergeWords && (m_set.queryWordOf.empty() || m_set.keyWordOf.empty())) {
        m_problem = tr("words cannot be merged: the input has no token labels");
        return;
    }
    switch (m_options.view) {
    case FigureView::Model:
        for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h)
                addTile(m_set.map(0, l, h), l, h);
        break;
    case FigureView::Heads:
        for (int h = 0; h < heads; ++h)
            addTile(m_set.map(0, layer, h), layer, h);
        break;
    case FigureView::Head:
        addTile(m_set.map(0, layer, head), layer, head);
        break;
    case FigureView::Mean:
        addTile(meanOverHeads(m_set, 0, layer).cast<float>(), layer, -1);
        break;
    case FigureView::Rollout: {
        auto rollout = attentionRollout(m_set, 0);
        if (!rollout) {
            m_problem = errorText(rollout.error());
            return;
        }
        addTile(rollout->cast<float>(), -1, -1);
        break;
    }
    default:
        m_problem = tr("the %1 view needs a project").arg(FigureOptions::viewKey(m_options.view));
        return;
    }
    finishRanges();
}

SetFigureRenderer::SetFigureRenderer(AttentionSet set, const QString &name, const FigureOptions &options,
                                     std::shared_ptr<const MaskMatrix> allowed)
    : SetFigureRenderer(std::move(set), name, options, allowed.get())
{
    m_ownedAllowed = std::move(allowed);
}

bool SetFigureRenderer::isGrid() const
{
    return m_options.view == FigureView::Model || m_options.view == FigureView::Heads;
}

int SetFigureRenderer::gridRows() const
{
    return m_options.view == FigureView::Model ? m_set.layers() : 1;
}

int SetFigureRenderer::gridColumns() const
{
    return std::max(1, m_set.heads());
}

void SetFigureRenderer::addTile(const MatrixF &values, int layer, int head)
{
    HeatmapData d;
    auto owned = std::make_shared<MatrixF>();
    const bool pool = isGrid() && std::max(values.rows(), values.cols()) > kMaxTileSide;
    if (m_options.mergeWords) {
        *owned = mergeWords(values.cast<double>(), m_set.queryWordOf, m_set.keyWordOf).cast<float>();
        d.rowLabels = labelsOf(mergedWordLabels(m_set.queryTokens, m_set.queryWordOf), owned->rows());
        d.columnLabels = labelsOf(mergedWordLabels(m_set.keyTokens, m_set.keyWordOf), owned->cols());
    } else if (pool) {
        // core's pooling: cell a covers rows [floor(a*T/N), floor((a+1)*T/N)), as everywhere.
        *owned = poolMatrix(values, kMaxTileSide, PoolMode::Max);
        const Eigen::Index rows = owned->rows(), cols = owned->cols();
        d.rowLabels = blockLabels(values.rows(), rows);
        d.columnLabels = blockLabels(values.cols(), cols);
    } else {
        *owned = values;
        d.rowLabels = labelsOf(m_set.queryTokens, values.rows());
        d.columnLabels = labelsOf(m_set.keyTokens, values.cols());
        // A project's mask: masked cells hatched, as its own figures show them (not the rollout,
        // a product of layers).
        if (m_options.view != FigureView::Rollout) {
            d.allowed = m_allowed;
            d.emptyRows = m_emptyRows;
        }
    }
    d.owned = owned;
    d.values = owned.get();
    d.maskFill = m_maskFill;
    d.nonFinite = (!owned->array().isFinite()).count();
    d.nanCount = d.nonFinite > 0 ? owned->array().isNaN().count() : 0;
    if (head >= 0)
        d.title = tr("Layer %1, head %2").arg(layer).arg(head);
    m_data.push_back(std::move(d));
    m_tiles.emplace_back(layer, head);
}

void SetFigureRenderer::finishRanges()
{
    auto maxOf = [](const HeatmapData &d) {
        double best = 0.0;
        for (Eigen::Index r = 0; r < d.rows(); ++r)
            for (Eigen::Index c = 0; c < d.cols(); ++c)
                if (d.isAllowed(r, c) && std::isfinite((*d.values)(r, c)))
                    best = std::max(best, double((*d.values)(r, c)));
        return best;
    };
    double shared = 0.0;
    if (m_options.scale == ScaleScope::Shared)
        for (const HeatmapData &d : m_data)
            shared = std::max(shared, maxOf(d));
    for (HeatmapData &d : m_data) {
        const double m = m_options.scale == ScaleScope::Absolute ? 1.0
                         : m_options.scale == ScaleScope::Shared ? shared
                                                                 : maxOf(d);
        d.rangeMin = 0.0;
        d.rangeMax = m > 0.0 ? m : 1.0;
    }
    // A grid with one colour bar: one scale over every tile's values.
    if (isGrid() && m_options.scale != ScaleScope::PerHead && m_options.colorScale != ColorScaleKind::Linear) {
        std::vector<const HeatmapData *> all;
        for (const HeatmapData &d : m_data)
            all.push_back(&d);
        const auto scale = std::make_shared<const ColorScale>(ColorScale::build(m_options.colorScale, all));
        for (HeatmapData &d : m_data)
            d.scale = scale;
    }
}

QFont SetFigureRenderer::font(double scale) const
{
    QFont f;
    f.setPixelSize(std::max(3, int(std::lround(m_options.fontSize * scale))));
    return f;
}

QFont SetFigureRenderer::titleFont() const
{
    // A long title is set smaller, down to 0.6 of the body size, before it is elided.
    QFont bold = font(1.1);
    bold.setBold(true);
    const double room =
        (isGrid() && m_set.heads() <= 4 ? kSingleColumn : kDoubleColumn) - 4 * QFontMetricsF(bold).height() * 0.3;
    const double width = QFontMetricsF(bold).horizontalAdvance(title());
    if (width > room) {
        bold = font(std::max(0.6, 1.1 * room / width * 0.97));
        bold.setBold(true);
    }
    return bold;
}

QRectF SetFigureRenderer::titleRect(const QRectF &target) const
{
    if (title().isEmpty())
        return {};
    const QFontMetricsF fm(titleFont());
    const double pad = fm.height() * 0.3;
    return QRectF(target.left() + pad, target.top() + pad, target.width() - 2 * pad, fm.height() * 1.2);
}

HeatmapOptions SetFigureRenderer::heatmapOptions(bool tile) const
{
    HeatmapOptions o;
    o.colorMap = m_options.colorMap;
    o.colorScale = m_options.colorScale;
    o.showTitle = false; // tiles: row and column titles; a single map: the figure's title
    o.axisTitles = m_options.axisTitles && !tile;
    o.showLabels = m_options.labels;
    o.showColorBar = m_options.colorBar && !tile;
    o.showValues = m_options.values;
    o.font = font(tile ? 0.7 : 1.0);
    o.thinLabels = true;
    o.pixelScale = m_options.pixelScale;
    o.hatchSpacing = tile ? 2.0 : 4.0;
    return o;
}

SetFigureRenderer::GridLayout SetFigureRenderer::gridLayout(const QRectF &target) const
{
    GridLayout l;
    const QFont f = font(0.8);
    const QFontMetricsF fm(f);
    const double fh = fm.height(), pad = fh * 0.3;
    QRectF area = target.adjusted(pad, pad, -pad, -pad);
    if (const QRectF t = titleRect(target); !t.isEmpty())
        area.setTop(t.bottom() + pad);
    const int rows = gridRows(), columns = gridColumns();
    const double axis = m_options.axisTitles ? fh * 1.2 : 0.0;
    const int lastLayer = m_options.view == FigureView::Model ? m_set.layers() - 1 : m_options.layer;
    const double rowWidth = fm.horizontalAdvance(tr("Layer %1").arg(lastLayer)) + 2 * pad;
    const double columnHeight = fh * 1.2;
    HeatmapOptions barOptions = heatmapOptions(false);
    barOptions.font = f;
    const bool bar = m_options.colorBar && m_options.scale != ScaleScope::PerHead && !m_data.empty();
    const double barRoom = bar ? HeatmapRenderer(m_data[0], barOptions).colorBarWidth() + pad : 0.0;
    const double side = std::max(1.0, std::min((area.width() - axis - rowWidth - barRoom) / columns,
                                               (area.height() - axis - columnHeight) / rows));
    l.side = side;
    l.shortTitles = fm.horizontalAdvance(tr("Head %1").arg(columns - 1)) + pad > side;
    if (l.shortTitles)
        l.columnStep =
            HeatmapRenderer::roundStep(int(std::ceil((fm.horizontalAdvance(QString::number(columns)) + pad) / side)));
    if (side < fh * 1.05)
        l.rowStep = HeatmapRenderer::roundStep(int(std::ceil(fh * 1.05 / side)));
    const double blockW = side * columns, blockH = side * rows;
    const double spare = std::max(0.0, area.width() - axis - rowWidth - barRoom - blockW);
    const double left = area.left() + spare / 2 + axis + rowWidth, top = area.top() + axis + columnHeight;
    l.tiles = QRectF(left, top, blockW, blockH);
    l.rowTitles = QRectF(left - rowWidth, top, rowWidth - pad, blockH);
    l.columnTitles = QRectF(left, top - columnHeight, blockW, columnHeight);
    if (axis > 0) {
        l.colAxis = QRectF(left, top - columnHeight - axis, blockW, axis);
        l.rowAxis = QRectF(left - rowWidth - axis, top, axis, blockH);
    }
    if (bar) {
        // Level with the tiles' cells (each tile pads its grid by its own font's margin).
        const double inset = std::max(2.0, QFontMetricsF(heatmapOptions(true).font).height() * 0.3);
        l.colorBar =
            QRectF(l.tiles.right() + pad, top + inset, std::max(8.0, fh * 0.8), std::max(blockH - 2 * inset, fh * 4));
    }
    return l;
}

std::vector<FigureHeatmap> SetFigureRenderer::heatmaps(const QRectF &target) const
{
    std::vector<FigureHeatmap> out;
    if (m_data.empty())
        return out;
    if (!isGrid()) {
        const double pad = QFontMetricsF(font(1.0)).height() * 0.3;
        QRectF body = target.adjusted(pad, pad, -pad, -pad);
        if (const QRectF t = titleRect(target); !t.isEmpty())
            body.setTop(t.bottom() + pad);
        out.push_back({&m_data[0], heatmapOptions(false), body});
        return out;
    }
    const GridLayout l = gridLayout(target);
    HeatmapOptions o = heatmapOptions(true);
    // Token labels only where a tile's cells can hold them; else the tiles are all cells.
    const double cells = double(std::max(m_data[0].rows(), m_data[0].cols()));
    o.showLabels = o.showLabels && l.side / cells >= QFontMetricsF(o.font).height() * 0.9;
    const int columns = gridColumns();
    for (std::size_t i = 0; i < m_data.size(); ++i) {
        const int r = int(i) / columns, c = int(i) % columns;
        out.push_back({&m_data[i], o, QRectF(l.tiles.left() + c * l.side, l.tiles.top() + r * l.side, l.side, l.side)});
    }
    return out;
}

QSizeF SetFigureRenderer::naturalSize() const
{
    const double pad = QFontMetricsF(font(1.0)).height() * 0.3;
    const QRectF t = titleRect(QRectF(0, 0, kDoubleColumn, 1000));
    const double titleHeight = t.isEmpty() ? 0.0 : t.bottom() + pad;
    if (m_data.empty())
        return {kSingleColumn, 120};
    if (!isGrid()) {
        const QSizeF body =
            FigureRenderer::heatmapNaturalSize(m_data[0], heatmapOptions(false), kHeadGrid, kHeadCell,
                                               QSizeF(kDoubleColumn - 2 * pad, kMaxHeight - titleHeight - 2 * pad));
        const double titleWidth = t.isEmpty() ? 0.0 : QFontMetricsF(titleFont()).horizontalAdvance(title()) + 4 * pad;
        return {std::ceil(std::max(body.width() + 2 * pad, titleWidth)),
                std::ceil(body.height() + 2 * pad + titleHeight)};
    }
    const double width = m_set.heads() <= 4 ? kSingleColumn : kDoubleColumn;
    GridLayout l = gridLayout(QRectF(0, 0, width, 1e5));
    double height = std::max(l.tiles.bottom(), l.colorBar.bottom()) + 2 * pad;
    if (height > kMaxHeight) { // many layers: smaller tiles, not a taller page
        l = gridLayout(QRectF(0, 0, width, kMaxHeight));
        height = std::max(l.tiles.bottom(), l.colorBar.bottom()) + 2 * pad;
    }
    return {width, std::ceil(height)};
}

void SetFigureRenderer::paintGridTitles(QPainter &painter, const GridLayout &l) const
{
    painter.save();
    const QFont f = font(0.8);
    painter.setFont(f);
    painter.setPen(Qt::black);
    const int rows = gridRows(), columns = gridColumns();
    for (int r = 0; r < rows; r += l.rowStep) {
        const int layer = m_options.view == FigureView::Model ? r : m_options.layer;
        const QRectF box(l.rowTitles.left(), l.tiles.top() + r * l.side, l.rowTitles.width(), l.side);
        painter.drawText(box, Qt::AlignRight | Qt::AlignVCenter, tr("Layer %1").arg(layer));
    }
    for (int c = 0; c < columns; c += l.columnStep) {
        const QRectF box(l.tiles.left() + c * l.side - l.side * (l.columnStep - 1) / 2.0, l.columnTitles.top(),
                         l.side * l.columnStep, l.columnTitles.height());
        painter.drawText(box, Qt::AlignHCenter | Qt::AlignBottom,
                         l.shortTitles ? QString::number(c) : tr("Head %1").arg(c));
    }
    if (l.shortTitles) // numbers alone above the columns: what they count, in the corner
        painter.drawText(QRectF(l.rowTitles.left(), l.columnTitles.top(), l.rowTitles.width(), l.columnTitles.height()),
                         Qt::AlignRight | Qt::AlignBottom, tr("Head"));
    if (!l.colAxis.isEmpty()) {
        QFont italic = f;
        italic.setItalic(true);
        painter.setFont(italic);
        painter.setPen(QColor(0x40, 0x40, 0x40));
        painter.drawText(l.colAxis, Qt::AlignHCenter | Qt::AlignTop, HeatmapRenderer::columnAxisName());
        painter.translate(l.rowAxis.left(), l.rowAxis.bottom());
        painter.rotate(-90);
        painter.drawText(QRectF(0, 0, l.rowAxis.height(), l.rowAxis.width()), Qt::AlignHCenter | Qt::AlignTop,
                         HeatmapRenderer::rowAxisName());
    }
    painter.restore();
}

void SetFigureRenderer::paint(QPainter &painter, const QRectF &target) const
{
    painter.save();
    if (!m_options.transparent)
        painter.fillRect(target, Qt::white);
    if (const QRectF t = titleRect(target); !t.isEmpty()) {
        const QFont bold = titleFont();
        painter.setFont(bold);
        painter.setPen(Qt::black);
        painter.drawText(t, Qt::AlignHCenter | Qt::AlignVCenter,
                         QFontMetricsF(bold).elidedText(title(), Qt::ElideRight, t.width()));
    }
    for (const FigureHeatmap &m : heatmaps(target))
        HeatmapRenderer(*m.data, m.options).paint(painter, m.target);
    if (isGrid() && !m_data.empty()) {
        const GridLayout l = gridLayout(target);
        paintGridTitles(painter, l);
        if (!l.colorBar.isEmpty()) {
            HeatmapData barData = m_data[0];
            barData.nonFinite = barData.nanCount = 0;
            for (const HeatmapData &d : m_data) {
                barData.nonFinite += d.nonFinite;
                barData.nanCount += d.nanCount;
            }
            HeatmapOptions o = heatmapOptions(false);
            o.font = font(0.8);
            HeatmapRenderer(barData, o).paintColorBar(painter, l.colorBar);
        }
    }
    painter.restore();
}

QString SetFigureRenderer::title() const
{
    if (m_options.title)
        return displayText(*m_options.title);
    const QString name = m_name.isEmpty() ? QStringLiteral("AttnScope") : displayText(m_name);
    const int layer = m_options.layer, head = m_options.head, layers = m_set.layers();
    QString t;
    switch (m_options.view) {
    case FigureView::Model:
        t = layers == 1 ? tr("%1 \u2014 1 layer \u00d7 %2 heads").arg(name).arg(m_set.heads())
                        : tr("%1 \u2014 %2 layers \u00d7 %3 heads").arg(name).arg(layers).arg(m_set.heads());
        break;
    case FigureView::Rollout:
        t = layers == 1 ? tr("%1 \u2014 attention rollout over 1 layer").arg(name)
                        : tr("%1 \u2014 attention rollout over %2 layers").arg(name).arg(layers);
        break;
    case FigureView::Head:
        t = tr("%1 \u2014 layer %2, head %3").arg(name).arg(layer).arg(head);
        break;
    case FigureView::Heads:
        t = tr("%1 \u2014 layer %2, every head").arg(name).arg(layer);
        break;
    case FigureView::Mean:
        t = tr("%1 \u2014 layer %2, mean over heads").arg(name).arg(layer);
        break;
    default:
        t = name;
        break;
    }
    return m_options.mergeWords ? tr("%1 (words)").arg(t) : t;
}

QString SetFigureRenderer::description() const
{
    return FigureRenderer::tr("AttnScope figure: %1").arg(FigureOptions::viewName(m_options.view));
}

QString SetFigureRenderer::problem() const
{
    return m_problem;
}

} // namespace attnscope
