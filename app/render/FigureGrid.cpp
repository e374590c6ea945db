// FigureRenderer: the figures of a whole set, Model (layers x heads) and Rollout, set in a
// paper's column.

#include "app/render/FigureRenderer.h"

#include "app/render/DisplayText.h"
#include "app/render/ErrorText.h"
#include "app/render/LayerMarks.h"
#include "core/analysis/AttentionStats.h"
#include "core/analysis/Pooling.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// A single heatmap's natural cells, as the layer figures have them.
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

bool FigureRenderer::isSetFigure() const
{
    return m_options.view == FigureView::Model || m_options.view == FigureView::Rollout;
}

void FigureRenderer::buildSet()
{
    const AttentionSet &set = m_shown.set;
    if (m_options.view == FigureView::Model) {
        // Long maps are pooled where they are read (a set from queries and keys is never a whole
        // map in memory); short ones are read whole, their words merged where asked.
        const bool pool = !m_options.mergeWords && std::max(set.queries(), set.keys()) > kMaxTileSide;
        for (int l = 0; l < set.layers(); ++l)
            for (int h = 0; h < set.heads(); ++h) {
                if (!pool) {
                    addTile(set.map(0, l, h), l, h);
                    continue;
                }
                if (set.isSigned()) { // a difference, pooled by magnitude (its maps fit in memory)
                    addPooledTile(poolSigned(set.map(0, l, h), kMaxTileSide), l, h);
                    continue;
                }
                SetPoolOptions options;
                options.bins = kMaxTileSide;
                options.head = h;
                auto pooled = poolSetBlock(set, 0, l, SetBlock{0, set.queries(), 0, set.keys()}, options);
                if (!pooled) {
                    m_problem = errorText(pooled.error());
                    return;
                }
                addPooledTile(std::move(pooled->heads.front()), l, h);
            }
    } else {
        auto rollout = attentionRollout(set, 0);
        if (!rollout) {
            m_problem = errorText(rollout.error());
            return;
        }
        addTile(rollout->cast<float>(), -1, -1);
    }
    finishTileRanges();
}

void FigureRenderer::addTile(const MatrixF &values, int layer, int head)
{
    const AttentionSet &set = m_shown.set;
    HeatmapData d;
    auto owned = std::make_shared<MatrixF>();
    const bool pool = m_options.view == FigureView::Model && std::max(values.rows(), values.cols()) > kMaxTileSide;
    if (m_options.mergeWords) {
        *owned = mergeWords(values.cast<double>(), set.queryWordOf, set.keyWordOf).cast<float>();
        d.rowLabels = labelsOf(set.queryWordLabels(), owned->rows());
        d.columnLabels = labelsOf(set.keyWordLabels(), owned->cols());
    } else if (pool) {
        // core's pooling: cell a covers rows [floor(a*T/N), floor((a+1)*T/N)), as everywhere.
        return addPooledTile(set.isSigned() ? poolSigned(values, kMaxTileSide)
                                            : poolMatrix(values, kMaxTileSide, PoolMode::Max),
                             layer, head);
    } else {
        *owned = values;
        d.rowLabels = labelsOf(set.queryTokens, values.rows());
        d.columnLabels = labelsOf(set.keyTokens, values.cols());
        // A project's mask: masked cells hatched, as its layer figures show them (not the
        // rollout, a product of layers).
        if (m_options.view != FigureView::Rollout) {
            d.allowed = m_shown.allowed() ? m_shown.allowed() : m_allowed.get();
            d.emptyRows = m_shown.emptyRows();
        }
    }
    pushTile(std::move(d), std::move(owned), layer, head);
}

void FigureRenderer::addPooledTile(MatrixF pooled, int layer, int head)
{
    HeatmapData d;
    d.rowLabels = blockLabels(m_shown.set.queries(), pooled.rows());
    d.columnLabels = blockLabels(m_shown.set.keys(), pooled.cols());
    pushTile(std::move(d), std::make_shared<MatrixF>(std::move(pooled)), layer, head);
}

void FigureRenderer::pushTile(HeatmapData d, std::shared_ptr<MatrixF> owned, int layer, int head)
{
    d.owned = owned;
    d.values = owned.get();
    d.maskFill = m_shown.maskFill();
    d.nonFinite = (!owned->array().isFinite()).count();
    d.nanCount = d.nonFinite > 0 ? owned->array().isNaN().count() : 0;
    if (head >= 0)
        d.title = tr("Layer %1, head %2").arg(layer).arg(head);
    m_data.push_back(std::move(d));
    m_tiles.emplace_back(layer, head);
}

void FigureRenderer::finishTileRanges()
{
    // A difference (a signed set): every tile on one scale symmetric around 0, so tiles compare.
    const bool difference = m_shown.set.isSigned();
    auto maxOf = [difference](const HeatmapData &d) {
        double best = 0.0;
        for (Eigen::Index r = 0; r < d.rows(); ++r)
            for (Eigen::Index c = 0; c < d.cols(); ++c)
                if (d.isAllowed(r, c) && std::isfinite((*d.values)(r, c)))
                    best = std::max(best, difference ? std::abs(double((*d.values)(r, c))) : double((*d.values)(r, c)));
        return best;
    };
    const ScaleScope scope = difference ? ScaleScope::Shared : m_options.scale;
    double shared = 0.0;
    if (scope == ScaleScope::Shared)
        for (const HeatmapData &d : m_data)
            shared = std::max(shared, maxOf(d));
    for (HeatmapData &d : m_data) {
        const double m = scope == ScaleScope::Absolute ? 1.0 : scope == ScaleScope::Shared ? shared : maxOf(d);
        d.rangeMax = m > 0.0 ? m : 1.0;
        d.rangeMin = difference ? -d.rangeMax : 0.0;
        d.signedValues = d.difference = difference;
    }
    // The grid has one colour bar: one scale over every tile's values.
    if (m_options.view == FigureView::Model && m_options.scale != ScaleScope::PerHead)
        shareOneScale();
}

HeatmapOptions FigureRenderer::setHeatmapOptions(bool tile) const
{
    HeatmapOptions o;
    o.colorMap = m_options.colorMap;
    o.colorScale = m_options.colorScale;
    o.showTitle = false; // tiles: row and column titles; the rollout: the figure's title
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

FigureRenderer::GridLayout FigureRenderer::gridLayout(const QRectF &target) const
{
    GridLayout l;
    const QFont f = font(0.8);
    const QFontMetricsF fm(f);
    const double fh = fm.height(), pad = fh * 0.3;
    QRectF area = target.adjusted(pad, pad, -pad, -pad);
    if (const QRectF t = titleRect(target); !t.isEmpty())
        area.setTop(t.bottom() + pad);
    const int rows = std::max(1, m_shown.set.layers()), columns = std::max(1, m_shown.set.heads());
    const double axis = m_options.axisTitles ? fh * 1.2 : 0.0;
    double rowWidth = fm.horizontalAdvance(tr("Layer %1").arg(rows - 1)) + 2 * pad;
    for (int layer = 0; layer < rows; ++layer) // notes under the titles
        for (const QString &note : layerNotes(layer))
            rowWidth = std::max(rowWidth, fm.horizontalAdvance(note) + 2 * pad);
    const double columnHeight = fh * 1.2;
    HeatmapOptions barOptions = setHeatmapOptions(false);
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
        const double inset = std::max(2.0, QFontMetricsF(setHeatmapOptions(true).font).height() * 0.3);
        l.colorBar =
            QRectF(l.tiles.right() + pad, top + inset, std::max(8.0, fh * 0.8), std::max(blockH - 2 * inset, fh * 4));
    }
    return l;
}

std::vector<FigureHeatmap> FigureRenderer::setHeatmaps(const QRectF &target) const
{
    std::vector<FigureHeatmap> out;
    if (m_data.empty())
        return out;
    if (m_options.view == FigureView::Rollout) {
        const double pad = QFontMetricsF(font(1.0)).height() * 0.3;
        QRectF body = target.adjusted(pad, pad, -pad, -pad);
        if (const QRectF t = titleRect(target); !t.isEmpty())
            body.setTop(t.bottom() + pad);
        out.push_back({&m_data[0], setHeatmapOptions(false), body});
        return out;
    }
    const GridLayout l = gridLayout(target);
    HeatmapOptions o = setHeatmapOptions(true);
    // Token labels only where a tile's cells can hold them; else the tiles are all cells.
    const double cells = double(std::max(m_data[0].rows(), m_data[0].cols()));
    o.showLabels = o.showLabels && l.side / cells >= QFontMetricsF(o.font).height() * 0.9;
    const int columns = std::max(1, m_shown.set.heads());
    for (std::size_t i = 0; i < m_data.size(); ++i) {
        const int r = int(i) / columns, c = int(i) % columns;
        out.push_back({&m_data[i], o, QRectF(l.tiles.left() + c * l.side, l.tiles.top() + r * l.side, l.side, l.side)});
    }
    return out;
}

QSizeF FigureRenderer::setNaturalSize() const
{
    const double pad = QFontMetricsF(font(1.0)).height() * 0.3;
    const QRectF t = titleRect(QRectF(0, 0, kDoubleColumn, 1000));
    const double titleHeight = t.isEmpty() ? 0.0 : t.bottom() + pad;
    if (m_data.empty())
        return {kSingleColumn, 120};
    if (m_options.view == FigureView::Rollout) {
        const QSizeF body = heatmapNaturalSize(m_data[0], setHeatmapOptions(false), kHeadGrid, kHeadCell,
                                               QSizeF(kDoubleColumn - 2 * pad, kMaxHeight - titleHeight - 2 * pad));
        const double titleWidth = t.isEmpty() ? 0.0 : QFontMetricsF(titleFont()).horizontalAdvance(title()) + 4 * pad;
        return {std::ceil(std::max(body.width() + 2 * pad, titleWidth)),
                std::ceil(body.height() + 2 * pad + titleHeight)};
    }
    const double width = m_shown.set.heads() <= 4 ? kSingleColumn : kDoubleColumn;
    GridLayout l = gridLayout(QRectF(0, 0, width, 1e5));
    double height = std::max(l.tiles.bottom(), l.colorBar.bottom()) + 2 * pad;
    if (height > kMaxHeight) { // many layers: smaller tiles, not a taller page
        l = gridLayout(QRectF(0, 0, width, kMaxHeight));
        height = std::max(l.tiles.bottom(), l.colorBar.bottom()) + 2 * pad;
    }
    return {width, std::ceil(height)};
}

void FigureRenderer::paintGridTitles(QPainter &painter, const GridLayout &l) const
{
    painter.save();
    const QFont f = font(0.8);
    painter.setFont(f);
    painter.setPen(Qt::black);
    const int rows = m_shown.set.layers(), columns = m_shown.set.heads();
    for (int r = 0; r < rows; r += l.rowStep) {
        const QRectF box(l.rowTitles.left(), l.tiles.top() + r * l.side, l.rowTitles.width(), l.side);
        QStringList lines = {tr("Layer %1").arg(r)};
        for (const QString &note : layerNotes(r))
            if (l.side >= (lines.size() + 1.2) * QFontMetricsF(f).height())
                lines << note;
        painter.drawText(box, Qt::AlignRight | Qt::AlignVCenter, lines.join(QLatin1Char('\n')));
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

QStringList FigureRenderer::layerNotes(int layer) const
{
    const LayerFacts facts = m_shown.set.facts(layer);
    QStringList notes;
    if (keyValueGroupSize(facts, m_shown.set.heads()) > 1)
        notes << tr("K/V heads: %1").arg(facts.kvHeads);
    if (facts.window > 0)
        notes << tr("window %1").arg(facts.window);
    return notes;
}

void FigureRenderer::paintLayerMarks(QPainter &painter, const GridLayout &l, const QRectF &target) const
{
    // As the model view draws them: each sliding-window layer's edge over its tiles (token
    // cells, or pooled blocks, which keep the proportions; not merged words), and each key/value
    // head's query heads framed together.
    const AttentionSet &set = m_shown.set;
    const std::vector<FigureHeatmap> tiles = setHeatmaps(target);
    const int columns = std::max(1, set.heads());
    for (int layer = 0; layer < set.layers(); ++layer) {
        const LayerFacts facts = set.facts(layer);
        if (facts.window > 0 && !m_options.mergeWords)
            for (int h = 0; h < columns; ++h) {
                const std::size_t i = std::size_t(layer) * std::size_t(columns) + std::size_t(h);
                if (i >= tiles.size())
                    break;
                const QRectF cells = HeatmapRenderer(*tiles[i].data, tiles[i].options).layout(tiles[i].target).grid;
                if (const auto edge = windowEdge(cells, double(set.queries()), double(set.keys()), facts.window)) {
                    painter.save();
                    painter.setClipRect(cells);
                    painter.setPen(windowEdgePen(std::max(0.75, l.side / 80.0)));
                    painter.drawLine(*edge);
                    painter.restore();
                }
            }
        const int size = keyValueGroupSize(facts, columns);
        if (size <= 1)
            continue;
        for (int g = 0; g * size < columns; ++g) { // no tags over the cells: the row title counts them
            const QRectF frame(l.tiles.left() + g * size * l.side, l.tiles.top() + layer * l.side, size * l.side,
                               l.side);
            paintKeyValueGroup(painter, frame, g, QString(), font(0.6));
        }
    }
}

void FigureRenderer::paintSetFigure(QPainter &painter, const QRectF &target) const
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
    for (const FigureHeatmap &m : setHeatmaps(target))
        HeatmapRenderer(*m.data, m.options).paint(painter, m.target);
    if (m_options.view == FigureView::Model && !m_data.empty()) {
        const GridLayout l = gridLayout(target);
        paintLayerMarks(painter, l, target);
        paintGridTitles(painter, l);
        if (!l.colorBar.isEmpty()) {
            HeatmapData barData = m_data[0];
            barData.nonFinite = barData.nanCount = 0;
            for (const HeatmapData &d : m_data) {
                barData.nonFinite += d.nonFinite;
                barData.nanCount += d.nanCount;
            }
            HeatmapOptions o = setHeatmapOptions(false);
            o.font = font(0.8);
            HeatmapRenderer(barData, o).paintColorBar(painter, l.colorBar);
        }
    }
    painter.restore();
}

} // namespace attnscope
