#include "app/render/HeatmapRenderer.h"

#include "app/render/DisplayText.h"
#include "core/analysis/Pooling.h"
#include "core/attention/AttentionRules.h"
#include "core/attention/HeadLayout.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QVarLengthArray>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace attnscope {

namespace {

template <typename Labels>
QStringList labelsOf(const Labels &tokens, Eigen::Index n)
{
    QStringList out;
    out.reserve(qsizetype(n));
    for (Eigen::Index i = 0; i < n; ++i)
        out << (std::size_t(i) < std::size_t(tokens.size()) ? displayText(tokens[std::size_t(i)]) : QString::number(i));
    return out;
}

// Largest |value| (signed) or largest value over allowed cells of some matrices.
double maxOver(const std::vector<const MatrixF *> &ms, const MaskMatrix *allowed, bool absolute)
{
    double best = 0.0;
    for (const MatrixF *m : ms)
        for (Eigen::Index r = 0; r < m->rows(); ++r)
            for (Eigen::Index c = 0; c < m->cols(); ++c) {
                if (allowed && !(*allowed)(r, c))
                    continue;
                const double v = absolute ? std::abs((*m)(r, c)) : (*m)(r, c);
                if (std::isfinite(v)) // an overflow must not stretch the range to Inf
                    best = std::max(best, v);
            }
    return best;
}

QString format(double v, int precision)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("+Inf") : QStringLiteral("-Inf");
    if (v == 0.0)
        return QStringLiteral("0");
    // A value near float32's limit (3e38) in fixed notation is 39 digits: in exponent form.
    if (std::abs(v) >= 1e6)
        return QString::number(v, 'g', 3);
    return QString::number(v, 'f', precision);
}

// No English translation is loaded: the singular is its own string, the plural takes %n so
// that translations can give every plural form.
QString meanTitle(int heads)
{
    return heads == 1 ? QCoreApplication::translate("attnscope::Heatmap", "Mean over 1 head")
                      : QCoreApplication::translate("attnscope::Heatmap", "Mean over %n heads", nullptr, heads);
}

} // namespace

HeatmapData HeatmapData::of(const ShownAttention &shown, int head, HeatmapQuantity quantity, ScaleScope scope)
{
    HeatmapData d;
    const bool scores = quantity == HeatmapQuantity::Scores;
    const std::vector<MatrixF> *source = scores ? shown.scores() : shown.weights();
    if (!source || source->empty())
        return d;
    const auto &all = *source;
    // A signed set's maps (a difference) are ranged as scores are: by their largest |value|.
    const bool difference = !scores && shown.set.isSigned();
    const bool symmetric = scores || difference;
    const TraceRanges *ranges = shown.ranges();
    if (ranges && (ranges->maxWeight.size() != all.size() || (symmetric && ranges->maxAbsScore.size() != all.size())))
        ranges = nullptr; // not this layer's
    const bool mean = head < 0 || head >= int(all.size());
    if (mean && ranges && !scores && ranges->meanWeights) {
        d.owned = ranges->meanWeights;
        d.values = d.owned.get();
        d.title = meanTitle(int(all.size()));
    } else if (mean) {
        auto sum = std::make_shared<MatrixF>(MatrixF::Zero(all[0].rows(), all[0].cols()));
        for (const MatrixF &m : all)
            *sum += m;
        *sum /= float(all.size());
        d.owned = sum;
        d.values = sum.get();
        d.title = meanTitle(int(all.size()));
    } else {
        d.values = &all[size_t(head)]; // not copied: keepAlive holds it
        // Under grouped-query attention a head's title names the key/value head it reads.
        const LayerFacts facts = shown.set.facts(shown.layer);
        const int heads = int(all.size());
        if (facts.kvHeads > 0 && facts.kvHeads < heads && heads % facts.kvHeads == 0)
            d.title = QCoreApplication::translate("attnscope::Heatmap", "Head %1 (K/V %2)")
                          .arg(head)
                          .arg(HeadLayout{heads, facts.kvHeads}.kvHeadOf(head));
        else
            d.title = QCoreApplication::translate("attnscope::Heatmap", "Head %1").arg(head);
    }
    d.keepAlive = shown.tensors ? std::shared_ptr<const void>(shown.tensors) : std::shared_ptr<const void>(shown.maps);
    d.allowed = shown.allowed();
    if (d.allowed && (d.allowed->rows() != d.values->rows() || d.allowed->cols() != d.values->cols()))
        d.allowed = nullptr; // merged into words: the mask is the tokens'
    else
        d.emptyRows = shown.emptyRows();
    if (shown.merges()) {
        d.rowLabels = labelsOf(shown.queryLabels(), d.values->rows());
        d.columnLabels = labelsOf(shown.keyLabels(), d.values->cols());
    } else { // straight from the set's labels: a heads grid makes these once per head
        d.rowLabels = labelsOf(shown.set.queryTokens, d.values->rows());
        d.columnLabels = labelsOf(shown.set.keyTokens, d.values->cols());
    }
    d.signedValues = symmetric;
    d.difference = difference;
    d.maskFill = shown.maskFill();
    d.nonFinite = (!d.values->array().isFinite()).count();
    d.nanCount = d.nonFinite > 0 ? d.values->array().isNaN().count() : 0;

    if (!symmetric && scope == ScaleScope::Absolute) {
        d.rangeMin = 0.0;
        d.rangeMax = 1.0;
        return d;
    }
    double m = 0.0;
    if (ranges && !(mean && symmetric)) {
        // Precomputed on the worker: per head, over all heads, or the mean's.
        if (mean)
            m = ranges->meanMaxWeight;
        else if (scope == ScaleScope::PerHead)
            m = symmetric ? ranges->maxAbsScore[size_t(head)] : ranges->maxWeight[size_t(head)];
        else
            m = symmetric ? ranges->maxAbsScoreOverHeads() : ranges->maxWeightOverHeads();
    } else {
        std::vector<const MatrixF *> range;
        if (scope == ScaleScope::PerHead || mean)
            range.push_back(d.values);
        else
            for (const MatrixF &v : all)
                range.push_back(&v);
        // Scores come before the mask: every cell has a value, so every cell sets the range.
        m = symmetric ? maxOver(range, nullptr, true) : maxOver(range, d.allowed, false);
    }
    d.rangeMax = m > 0.0 ? m : 1.0;
    d.rangeMin = symmetric ? -d.rangeMax : 0.0;
    return d;
}

HeatmapRenderer::HeatmapRenderer(const HeatmapData &data, const HeatmapOptions &options)
    : m_data(data), m_options(options),
      m_map(data.difference || (data.signedValues && options.colorMap != ColorMapKind::Grey) ? ColorMapKind::Diverging
                                                                                             : options.colorMap)
{
}

QColor HeatmapRenderer::maskedColor()
{
    return QColor(0xd9, 0xd9, 0xd9);
}

QColor HeatmapRenderer::emptyRowColor()
{
    return QColor(0xd6, 0x27, 0x28);
}

QColor HeatmapRenderer::newRowColor()
{
    return QColor(0xff, 0x7f, 0x0e);
}

bool HeatmapData::showsAsMasked(Eigen::Index r, Eigen::Index c) const
{
    if (signedValues || isAllowed(r, c))
        return false;
    const WeightRule rule = weightRule(maskFill, false, isEmptyRow(r), cols());
    return rule.fixed && rule.weight == 0.0;
}

QColor HeatmapRenderer::nonFiniteColor()
{
    return nanColor();
}

QColor HeatmapRenderer::nanColor()
{
    return QColor(0xff, 0x00, 0xff); // magenta
}

QColor HeatmapRenderer::infinityColor()
{
    return QColor(0x00, 0xff, 0xff); // cyan
}

QString HeatmapRenderer::rowAxisName()
{
    return QCoreApplication::translate("attnscope::Heatmap", "query");
}

QString HeatmapRenderer::columnAxisName()
{
    return QCoreApplication::translate("attnscope::Heatmap", "key");
}

QRgb HeatmapRenderer::colorFor(double value) const
{
    if (std::isnan(value))
        return nanColor().rgb();
    if (std::isinf(value))
        return infinityColor().rgb();
    return m_map.at(scale().position(value));
}

HeatmapData HeatmapData::block(const QRect &range, ColorScaleKind kind) const
{
    const QRect r = range.intersected(QRect(0, 0, int(cols()), int(rows())));
    const ColorScaleKind k = ColorScale::effectiveKind(kind, signedValues, difference);
    if (values && (!scale || scale->kind() != k))
        scale = std::make_shared<const ColorScale>(ColorScale::build(k, {this}));
    HeatmapData b;
    b.title = title;
    b.signedValues = signedValues;
    b.difference = difference;
    b.rangeMin = rangeMin;
    b.rangeMax = rangeMax;
    b.maskFill = maskFill;
    b.scale = scale;
    if (!values || r.isEmpty())
        return b;
    auto owned = std::make_shared<MatrixF>(values->block(r.y(), r.x(), r.height(), r.width()));
    b.values = owned.get();
    b.owned = owned;
    std::shared_ptr<const MaskMatrix> mask;
    if (allowed) {
        mask = std::make_shared<const MaskMatrix>(allowed->block(r.y(), r.x(), r.height(), r.width()));
        b.allowed = mask.get();
        b.keepAlive = mask;
    }
    for (int i = r.y(); i <= r.bottom(); ++i)
        b.emptyRows.push_back(isEmptyRow(i));
    b.rowLabels = rowLabels.mid(r.y(), r.height());
    b.columnLabels = columnLabels.mid(r.x(), r.width());
    for (Eigen::Index i = 0; i < b.values->size(); ++i)
        if (!std::isfinite(b.values->data()[i])) {
            ++b.nonFinite;
            b.nanCount += std::isnan(b.values->data()[i]) ? 1 : 0;
        }
    return b;
}

const ColorScale &HeatmapRenderer::scale() const
{
    // Scores have no log scale: the data's cached scale is the linear one then.
    const ColorScaleKind kind = ColorScale::effectiveKind(m_options.colorScale, m_data.signedValues, m_data.difference);
    if (!m_data.scale || m_data.scale->kind() != kind)
        m_data.scale = std::make_shared<const ColorScale>(ColorScale::build(kind, {&m_data}));
    return *m_data.scale;
}

namespace {

// The period of Qt's Qt::BDiagPattern, in device pixels.
constexpr double kPatternPeriod = 8.0;

} // namespace

void HeatmapRenderer::paintHatch(QPainter &painter, const QRectF &rect, double spacing)
{
    if (spacing <= 0 || rect.isEmpty())
        return;
    // On screen, unscaled, at the pattern's own period: Qt's diagonal pattern brush draws the same
    // lattice as one fill, several times faster than its lines (a causal or windowed mask hatches
    // most cells of every head on each edit). Figures and scaled painters draw the lines.
    if (spacing == kPatternPeriod && painter.device() && painter.device()->devType() == QInternal::Widget &&
        painter.deviceTransform().type() <= QTransform::TxTranslate) {
        painter.fillRect(rect, QBrush(painter.pen().color(), Qt::BDiagPattern));
        return;
    }
    // Lines x + y = k * spacing, on one lattice for the whole painter so that neighbouring
    // cells continue each other's lines.
    QVarLengthArray<QLineF, 32> lines;
    const double x0 = rect.left(), y0 = rect.top(), x1 = rect.right(), y1 = rect.bottom();
    for (double c = std::ceil((x0 + y0) / spacing) * spacing; c < x1 + y1; c += spacing) {
        const double xa = std::max(x0, c - y1), xb = std::min(x1, c - y0);
        if (xb > xa)
            lines.append(QLineF(xa, c - xa, xb, c - xb));
    }
    painter.drawLines(lines.constData(), int(lines.size()));
}

int HeatmapRenderer::roundStep(int n)
{
    for (int scale = 1;; scale *= 10)
        for (int m : {1, 2, 5})
            if (m * scale >= n || scale > 100000000)
                return m * scale;
}

HeatmapLayout HeatmapRenderer::layout(const QRectF &target) const
{
    HeatmapLayout l;
    const QFontMetricsF fm(m_options.font);
    const double pad = std::max(2.0, fm.height() * 0.3);
    const Eigen::Index rows = m_data.rows(), cols = m_data.cols();
    QRectF area = target.adjusted(pad, pad, -pad, -pad);

    if (m_options.showTitle && !m_data.title.isEmpty()) {
        l.title = QRectF(area.left(), area.top(), area.width(), fm.height() * 1.3);
        area.setTop(l.title.bottom() + pad);
    }
    if (m_options.showColorBar) {
        const double textWidth = tickTextWidth() + pad;
        const double barWidth = std::max(8.0, fm.height() * 0.8);
        l.colorBar = QRectF(area.right() - barWidth - textWidth, area.top() + fm.height() * 0.5, barWidth,
                            std::max(0.0, area.height() - fm.height()));
        area.setRight(l.colorBar.left() - 2 * pad);
    }
    const double axis = m_options.axisTitles ? fm.height() * 1.2 : 0.0;
    area.adjust(axis, axis, 0, 0);
    if (rows <= 0 || cols <= 0 || area.width() <= 0 || area.height() <= 0)
        return l;

    double rowLabelWidth = 0.0, colLabelWidth = 0.0;
    // Cells too small for text even without labels: skip measuring thousands of them, or
    // (thinned labels) measure only every n-th.
    const double minCell = fm.height() * 0.55;
    const double bareCell = std::min(area.width() / double(cols), area.height() / double(rows));
    const bool labelsFit = bareCell >= minCell;
    const bool thin = m_options.showLabels && m_options.thinLabels;
    const int measureStep = labelsFit ? 1 : roundStep(int(std::ceil(fm.height() * 1.2 / std::max(bareCell, 1e-3))));
    if (m_options.showLabels && (labelsFit || thin)) {
        for (int i = 0; i < m_data.rowLabels.size(); i += measureStep)
            rowLabelWidth = std::max(rowLabelWidth, fm.horizontalAdvance(m_data.rowLabels[i]));
        for (int i = 0; i < m_data.columnLabels.size(); i += measureStep)
            colLabelWidth = std::max(colLabelWidth, fm.horizontalAdvance(m_data.columnLabels[i]));
        // Room for the empty-row flag; thinned labels (small figure tiles) may take a little
        // more of the width, so that "t20" is read rather than elided to "…".
        // Labels take at most a share of the side, or what the cells leave when they keep room for
        // a line of text each (a few tokens at 16 pt: "Machines" whole, not "Mac…").
        const double share = thin ? 0.4 : 0.3, cellRoom = fm.height() * 1.6;
        rowLabelWidth = std::min(rowLabelWidth + 2 * pad + fm.height() * 0.6 + 2,
                                 std::max(area.width() * share, area.width() - double(cols) * cellRoom));
        // Thinned labels stand on ticks: room for them too.
        const double tickRoom = thin ? std::max(2.0, fm.height() * 0.25) + 2 : 0.0;
        colLabelWidth = std::min(colLabelWidth + pad + tickRoom,
                                 std::max(area.height() * share, area.height() - double(rows) * cellRoom));
    }
    // Square cells; column labels run vertically where they do not fit across a cell.
    double colLabelHeight = m_options.showLabels ? fm.height() + pad : 0.0;
    double cell =
        std::min((area.width() - rowLabelWidth) / double(cols), (area.height() - colLabelHeight) / double(rows));
    if (m_options.showLabels && cell * (thin ? measureStep : 1) < colLabelWidth) {
        l.rotatedColumnLabels = true;
        colLabelHeight = colLabelWidth;
        cell = std::min((area.width() - rowLabelWidth) / double(cols), (area.height() - colLabelHeight) / double(rows));
    }
    cell = std::max(cell, 0.0);
    // Labels of cells too small to read are left out, unless thinned.
    if (m_options.showLabels && !thin && (!labelsFit || cell < minCell)) {
        colLabelHeight = 0.0;
        rowLabelWidth = 0.0;
        cell = std::min(area.width() / double(cols), area.height() / double(rows));
    }
    l.cellWidth = l.cellHeight = cell;
    if (thin && cell < fm.height() * 1.1) {
        // Spaced so that neighbouring labels never touch.
        l.rowLabelStep = roundStep(int(std::ceil(fm.height() * 1.2 / std::max(cell, 1e-3))));
        l.columnLabelStep = l.rowLabelStep;
    } else if (!thin) {
        l.rowLabelStep = l.columnLabelStep = std::max(1, int(std::ceil(fm.height() / std::max(cell, 0.01))));
    }
    const double gridW = cell * double(cols), gridH = cell * double(rows);
    const double left = area.left() + rowLabelWidth + std::max(0.0, (area.width() - rowLabelWidth - gridW) / 2);
    const double top = area.top() + colLabelHeight;
    l.grid = QRectF(left, top, gridW, gridH);
    if (rowLabelWidth > 0)
        l.rowLabels = QRectF(left - rowLabelWidth, top, rowLabelWidth, gridH);
    if (colLabelHeight > 0)
        l.columnLabels = QRectF(left, area.top(), gridW, colLabelHeight);
    if (axis > 0) {
        l.rowAxisTitle = QRectF(left - rowLabelWidth - axis, top, axis, gridH);
        l.columnAxisTitle = QRectF(left, area.top() - axis, gridW, axis);
    }
    // Values where they fit; cells of the image path (tiny or very many) never hold them.
    const QString sample = format(m_data.signedValues ? -8.88 : 0.88, m_options.precision);
    l.valueCellSize = std::max(fm.horizontalAdvance(sample) + 2, fm.height());
    const bool imagePath = cell < 3.0 || rows * cols > 128 * 128;
    l.valuesShown = m_options.showValues && !imagePath && cell >= l.valueCellSize;
    l.valuesHidden = m_options.showValues && !l.valuesShown;
    if (m_options.showColorBar) {
        // Beside the grid rather than at the far edge: grid and bar stay one centred block.
        l.colorBar.moveLeft(std::min(l.colorBar.left(), l.grid.right() + 2 * pad));
        l.colorBar.setHeight(std::min(l.colorBar.height(), std::max(gridH, fm.height() * 4)));
        l.colorBar.moveTop(top);
        // Room below the bar for the non-finite entry of the legend.
        if (m_data.nonFinite > 0)
            l.colorBar.setHeight(std::max(fm.height() * 2, l.colorBar.height() - nonFiniteLegendHeight()));
    }
    return l;
}

void HeatmapRenderer::paint(QPainter &painter, const QRectF &target) const
{
    const HeatmapLayout l = layout(target);
    painter.save();
    painter.setFont(m_options.font);
    if (!l.title.isEmpty()) {
        QFont bold = m_options.font;
        bold.setBold(true);
        painter.setFont(bold);
        painter.setPen(Qt::black);
        painter.drawText(l.title, Qt::AlignLeft | Qt::AlignVCenter, m_data.title);
        painter.setFont(m_options.font);
    }
    if (!l.grid.isEmpty()) {
        paintCells(painter, l);
        paintLabels(painter, l);
        paintAxisTitles(painter, l);
    }
    if (!l.colorBar.isEmpty())
        paintColorBar(painter, l.colorBar);
    painter.restore();
}

void HeatmapRenderer::paintCells(QPainter &painter, const HeatmapLayout &l) const
{
    const Eigen::Index rows = m_data.rows(), cols = m_data.cols();
    const MatrixF &v = *m_data.values;
    const double cw = l.cellWidth, ch = l.cellHeight;
    painter.setRenderHint(QPainter::Antialiasing, false);

    if (cw < 3.0 || rows * cols > 128 * 128) { // as layout() decides: no values on this path
        // Many small cells: one pixel per cell, or where cells are smaller than a device
        // pixel, one pixel per block of cells (max-pooled), scaled without smoothing.
        // Device pixels per unit: under a scaled painter (a PNG at 300 DPI) the image is made
        // at the resolution it will be shown at, not at the unit size.
        const QTransform t = painter.deviceTransform();
        const qreal dpr = m_options.pixelScale > 0 ? m_options.pixelScale
                                                   : (painter.device() ? painter.device()->devicePixelRatio() : 1.0) *
                                                         std::max(1.0, std::sqrt(std::abs(t.determinant())));
        const QImage image = cellImage(int(std::min<double>(double(cols), std::ceil(l.grid.width() * dpr))),
                                       int(std::min<double>(double(rows), std::ceil(l.grid.height() * dpr))));
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter.drawImage(l.grid, image);
    } else {
        const QPen hatch(QColor(0x80, 0x80, 0x80), 0);
        // Each cell reaches half a cell under its right and lower neighbours, which are
        // painted after it: the shared edge is then covered by the neighbour's colour, never
        // by a blend with the background (the light seams vector viewers show).
        const double over = m_options.overlapCells ? 0.5 * std::min(cw, ch) : 0.0;
        for (Eigen::Index r = 0; r < rows; ++r)
            for (Eigen::Index c = 0; c < cols; ++c) {
                const QRectF cell(l.grid.left() + double(c) * cw, l.grid.top() + double(r) * ch, cw, ch);
                const bool allowed = m_data.isAllowed(r, c);
                const QRectF fill = cell.adjusted(0, 0, c + 1 < cols ? over : 0.0, r + 1 < rows ? over : 0.0);
                painter.fillRect(fill, m_data.showsAsMasked(r, c) ? maskedColor() : QColor::fromRgb(colorFor(v(r, c))));
                if (!allowed) {
                    painter.setPen(hatch);
                    paintHatch(painter, cell, m_options.hatchSpacing);
                }
            }
        // Values where they fit.
        if (l.valuesShown) {
            for (Eigen::Index r = 0; r < rows; ++r)
                for (Eigen::Index c = 0; c < cols; ++c) {
                    if (m_data.showsAsMasked(r, c))
                        continue;
                    const QRectF cell(l.grid.left() + double(c) * cw, l.grid.top() + double(r) * ch, cw, ch);
                    const QColor bg = QColor::fromRgb(colorFor(v(r, c)));
                    painter.setPen(bg.lightnessF() > 0.55 ? Qt::black : Qt::white);
                    painter.drawText(cell, Qt::AlignCenter, format(v(r, c), m_options.precision));
                }
        }
    }
    // Rows with no allowed key: a red frame around the row.
    painter.setBrush(Qt::NoBrush);
    for (size_t r = 0; r < m_data.emptyRows.size() && Eigen::Index(r) < rows; ++r) {
        if (!m_data.emptyRows[r])
            continue;
        painter.setPen(QPen(emptyRowColor(), std::max(1.0, std::min(2.0, ch / 6))));
        painter.drawRect(
            QRectF(l.grid.left(), l.grid.top() + double(r) * ch, l.grid.width(), ch).adjusted(0.5, 0.5, -0.5, -0.5));
    }
    if (m_options.highlightRow && *m_options.highlightRow >= 0 && *m_options.highlightRow < rows) {
        const QRectF row(l.grid.left(), l.grid.top() + double(*m_options.highlightRow) * ch, l.grid.width(), ch);
        const double width = std::max(1.5, std::min(3.0, ch / 4));
        painter.setPen(QPen(QColor(0xff, 0xff, 0xff), width + 2));
        painter.drawRect(row);
        painter.setPen(QPen(newRowColor(), width));
        painter.drawRect(row);
    }
    if (m_options.highlight) {
        const QPoint h = *m_options.highlight;
        if (h.y() >= 0 && h.y() < rows && h.x() >= 0 && h.x() < cols) {
            const QRectF cell(l.grid.left() + h.x() * cw, l.grid.top() + h.y() * ch, cw, ch);
            painter.setPen(QPen(Qt::white, 3));
            painter.drawRect(cell);
            painter.setPen(QPen(Qt::black, 1));
            painter.drawRect(cell);
        }
    }
    painter.setPen(QPen(QColor(0x60, 0x60, 0x60), 1));
    painter.drawRect(l.grid);
}

void HeatmapRenderer::paintLabels(QPainter &painter, const HeatmapLayout &l) const
{
    const QFontMetricsF fm(m_options.font);
    const double cw = l.cellWidth, ch = l.cellHeight;
    // Every n-th label where cells are smaller than the text; thinned labels sit on a tick
    // at their cell's centre.
    const int rowStep = l.rowLabelStep, colStep = l.columnLabelStep;
    const bool ticks = m_options.thinLabels && (rowStep > 1 || colStep > 1);
    const double tick = ticks ? std::max(2.0, fm.height() * 0.25) : 0.0;
    painter.setPen(QPen(QColor(0x60, 0x60, 0x60), 0));
    if (ticks && !l.rowLabels.isEmpty())
        for (int r = 0; r < m_data.rowLabels.size(); r += rowStep)
            painter.drawLine(QPointF(l.grid.left() - tick, l.grid.top() + (r + 0.5) * ch),
                             QPointF(l.grid.left(), l.grid.top() + (r + 0.5) * ch));
    if (ticks && !l.columnLabels.isEmpty())
        for (int c = 0; c < m_data.columnLabels.size(); c += colStep)
            painter.drawLine(QPointF(l.grid.left() + (c + 0.5) * cw, l.grid.top() - tick),
                             QPointF(l.grid.left() + (c + 0.5) * cw, l.grid.top()));
    if (!l.rowLabels.isEmpty()) {
        const double flag = std::max(fm.height() * 0.6, tick);
        const double h = ch * rowStep; // a thinned label may use its neighbours' rows
        for (int r = 0; r < m_data.rowLabels.size(); r += rowStep) {
            const QRectF cell(l.rowLabels.left(), l.grid.top() + (r + 0.5) * ch - h / 2, l.rowLabels.width() - 2 - flag,
                              h);
            const bool empty = size_t(r) < m_data.emptyRows.size() && m_data.emptyRows[size_t(r)];
            painter.setPen(empty ? emptyRowColor() : QColor(Qt::black));
            painter.drawText(cell, Qt::AlignRight | Qt::AlignVCenter,
                             fm.elidedText(m_data.rowLabels[r], Qt::ElideRight, cell.width()));
        }
        for (size_t r = 0; r < m_data.emptyRows.size() && r < size_t(m_data.rows()); ++r) {
            if (!m_data.emptyRows[r])
                continue;
            // A small red marker beside the label: this row attends to nothing.
            const double cy = l.grid.top() + (double(r) + 0.5) * ch;
            const double s = std::min(flag, ch) * 0.8;
            painter.setPen(Qt::NoPen);
            painter.setBrush(emptyRowColor());
            painter.drawEllipse(QPointF(l.grid.left() - flag / 2 - 2, cy), s / 2, s / 2);
            painter.setBrush(Qt::NoBrush);
        }
    }
    if (!l.columnLabels.isEmpty()) {
        painter.setPen(Qt::black);
        for (int c = 0; c < m_data.columnLabels.size(); c += colStep) {
            const QString text = m_data.columnLabels[c];
            if (l.rotatedColumnLabels) {
                painter.save();
                painter.translate(l.grid.left() + (c + 0.5) * cw, l.columnLabels.bottom() - 2 - tick);
                painter.rotate(-90);
                const QRectF box(0, -fm.height() / 2, l.columnLabels.height() - 2 - tick, fm.height());
                painter.drawText(box, Qt::AlignLeft | Qt::AlignVCenter,
                                 fm.elidedText(text, Qt::ElideRight, box.width()));
                painter.restore();
            } else {
                const double w = cw * colStep;
                const QRectF box(l.grid.left() + (c + 0.5) * cw - w / 2, l.columnLabels.top(), w,
                                 l.columnLabels.height() - tick);
                painter.drawText(box, Qt::AlignHCenter | Qt::AlignBottom,
                                 fm.elidedText(text, Qt::ElideRight, box.width()));
            }
        }
    }
}

void HeatmapRenderer::paintAxisTitles(QPainter &painter, const HeatmapLayout &l) const
{
    if (l.rowAxisTitle.isEmpty() && l.columnAxisTitle.isEmpty())
        return;
    QFont italic = m_options.font;
    italic.setItalic(true);
    painter.save();
    painter.setFont(italic);
    painter.setPen(QColor(0x40, 0x40, 0x40));
    painter.drawText(l.columnAxisTitle, Qt::AlignHCenter | Qt::AlignTop, columnAxisName());
    const QRectF r = l.rowAxisTitle;
    // A Chinese, Japanese or Korean title (查询) is read top to bottom with its characters
    // upright, as such text is set vertically, not turned on its side like Latin text.
    const QString rowTitle = rowAxisName();
    const double step = QFontMetricsF(italic).height();
    const bool upright = !rowTitle.isEmpty() && step * rowTitle.size() <= r.height() &&
                         std::all_of(rowTitle.begin(), rowTitle.end(), [](QChar c) {
                             return c.script() == QChar::Script_Han || c.script() == QChar::Script_Hiragana ||
                                    c.script() == QChar::Script_Katakana || c.script() == QChar::Script_Hangul;
                         });
    if (upright) {
        double y = r.center().y() - step * rowTitle.size() / 2.0;
        for (const QChar c : rowTitle) {
            painter.drawText(QRectF(r.left(), y, r.width(), step), Qt::AlignCenter, QString(c));
            y += step;
        }
        painter.restore();
        return;
    }
    painter.translate(r.left(), r.bottom());
    painter.rotate(-90);
    painter.drawText(QRectF(0, 0, r.height(), r.width()), Qt::AlignHCenter | Qt::AlignTop, rowAxisName());
    painter.restore();
}

QImage HeatmapRenderer::cellImage(int width, int height) const
{
    const Eigen::Index rows = m_data.rows(), cols = m_data.cols();
    width = std::max(1, width);
    height = std::max(1, height);
    QImage image(width, height, QImage::Format_RGB32);
    const QRgb masked = maskedColor().rgb();
    QRgb lut[256];
    for (int i = 0; i < 256; ++i)
        lut[i] = m_map.sample(i);
    // The same index colorFor() computes: round(t * 255), clamped.
    const ColorScale &s = scale();
    auto color = [&](float value) { return lut[std::clamp(int(std::lround(s.position(value) * 255.0)), 0, 255)]; };
    const bool weights = !m_data.signedValues;
    const MaskMatrix *allowed = weights ? m_data.allowed : nullptr;
    const bool checkFinite = m_data.nonFinite > 0;
    const QRgb nan = nanColor().rgb(), inf = infinityColor().rgb();
    // Per output column: 1 where a cell is +Inf or -Inf, 2 where one is NaN (NaN wins).
    std::vector<char> bad(checkFinite ? static_cast<size_t>(width) : 0);
    // Output column x covers cells [first[x], last[x]) and row y rows [r0, r1): core's pooled
    // blocks (binCover: one cell when the picture is larger than the map); a block's value is
    // its largest allowed weight, or for signed scores its value of largest magnitude.
    std::vector<Eigen::Index> first(static_cast<size_t>(width)), last(static_cast<size_t>(width));
    for (int x = 0; x < width; ++x)
        std::tie(first[size_t(x)], last[size_t(x)]) = binCover(x, cols, width);
    constexpr float none = -std::numeric_limits<float>::infinity();
    std::vector<float> best(static_cast<size_t>(width));
    std::vector<char> any(static_cast<size_t>(width));
    const MatrixF &v = *m_data.values;
    for (int y = 0; y < height; ++y) {
        const auto [r0, r1] = binCover(y, rows, height);
        std::fill(best.begin(), best.end(), none);
        std::fill(any.begin(), any.end(), 0);
        std::fill(bad.begin(), bad.end(), 0);
        for (Eigen::Index r = r0; r < r1; ++r) {
            const float *src = v.row(r).data();
            // A row whose masked cells hold a value (empty under -1e9) is shown whole.
            const bool whole = m_data.isEmptyRow(r) && !m_data.showsAsMasked(r, 0);
            const std::uint8_t *ok = allowed && !whole ? allowed->row(r).data() : nullptr;
            if (checkFinite) // NaN compares false with everything: max() would skip it
                for (int x = 0; x < width; ++x)
                    for (Eigen::Index c = first[size_t(x)]; c < last[size_t(x)]; ++c)
                        bad[size_t(x)] |= char(std::isnan(src[c]) ? 2 : std::isinf(src[c]) ? 1 : 0);
            for (int x = 0; x < width; ++x) {
                const Eigen::Index c0 = first[size_t(x)], c1 = last[size_t(x)];
                float m = best[size_t(x)];
                char a = any[size_t(x)];
                if (weights) {
                    for (Eigen::Index c = c0; c < c1; ++c)
                        if (!ok || ok[c]) {
                            m = std::max(m, src[c]);
                            a = 1;
                        }
                } else {
                    for (Eigen::Index c = c0; c < c1; ++c)
                        if (!a || std::abs(src[c]) > std::abs(m)) {
                            m = src[c];
                            a = 1;
                        }
                }
                best[size_t(x)] = m;
                any[size_t(x)] = a;
            }
        }
        auto *line = reinterpret_cast<QRgb *>(image.scanLine(y));
        for (int x = 0; x < width; ++x)
            line[x] = checkFinite && bad[size_t(x)] ? (bad[size_t(x)] & 2 ? nan : inf)
                      : any[size_t(x)]              ? color(best[size_t(x)])
                                                    : masked;
    }
    return image;
}

std::optional<QPoint> HeatmapRenderer::cellAt(const QRectF &target, const QPointF &pos) const
{
    const HeatmapLayout l = layout(target);
    if (!l.grid.contains(pos) || l.cellWidth <= 0)
        return std::nullopt;
    const int c = std::clamp(int((pos.x() - l.grid.left()) / l.cellWidth), 0, int(m_data.cols()) - 1);
    const int r = std::clamp(int((pos.y() - l.grid.top()) / l.cellHeight), 0, int(m_data.rows()) - 1);
    return QPoint(c, r);
}

} // namespace attnscope
