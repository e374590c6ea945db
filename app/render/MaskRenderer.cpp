#include "app/render/MaskRenderer.h"

#include "app/render/DisplayText.h"
#include "app/render/HeatmapRenderer.h"
#include "core/attention/Mask.h"

#include <QFontMetricsF>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

QString label(const std::vector<std::string> &tokens, Eigen::Index i)
{
    return size_t(i) < tokens.size() ? displayText(tokens[size_t(i)]) : QString::number(i);
}

} // namespace

MaskRenderer::MaskRenderer(const Project &project, const MaskRenderOptions &options)
    : m_project(project), m_options(options)
{
}

QColor MaskRenderer::allowedColor()
{
    return QColor(0x8f, 0xd1, 0x9e);
}

QColor MaskRenderer::maskedColor()
{
    return QColor(0x4a, 0x4a, 0x4a);
}

QColor MaskRenderer::windowColor()
{
    return QColor(0x1f, 0x6f, 0xd1);
}

std::vector<MaskLegendEntry> MaskRenderer::legendEntries() const
{
    // Only the kinds of cell the figure has.
    const AttentionProblem &p = m_project.problem;
    const MaskMatrix effective = effectiveMask(p);
    bool custom = false, other = false;
    for (Eigen::Index i = 0; i < p.tq(); ++i)
        for (Eigen::Index j = 0; j < p.tk(); ++j)
            if (!effective(i, j)) {
                const bool byCustom = p.mask.allowed && !(*p.mask.allowed)(i, j);
                (byCustom ? custom : other) = true;
            }
    std::vector<MaskLegendEntry> entries{{tr("allowed"), MaskLegendEntry::Allowed}};
    if (custom)
        entries.push_back({tr("masked"), MaskLegendEntry::Masked});
    if (other)
        entries.push_back({p.mask.window > 0 ? tr("masked by causal/padding/window") : tr("masked by causal/padding"),
                           MaskLegendEntry::Hatched});
    if (p.mask.window > 0)
        entries.push_back(
            {p.mask.window == 1 ? tr("window edge (1 key)") : tr("window edge (%1 keys)").arg(p.mask.window),
             MaskLegendEntry::Edge});
    const std::vector<bool> empty = emptyMaskRows(effective);
    if (std::find(empty.begin(), empty.end(), true) != empty.end())
        entries.push_back({tr("no allowed key"), MaskLegendEntry::Frame});
    return entries;
}

double MaskRenderer::legendWidth() const
{
    const QFontMetricsF fm(m_options.font);
    double width = 4.0;
    for (const MaskLegendEntry &e : legendEntries())
        width += fm.height() * 0.8 + 4 + fm.horizontalAdvance(e.text) + 2 + fm.height();
    return width;
}

MaskLayout MaskRenderer::layout(const QRectF &target) const
{
    MaskLayout g;
    const AttentionProblem &p = m_project.problem;
    const Eigen::Index tq = std::max<Eigen::Index>(p.tq(), 1), tk = std::max<Eigen::Index>(p.tk(), 1);
    const QFontMetricsF fm(m_options.font);
    QRectF area = target;
    if (m_options.showLegend) {
        g.legend = QRectF(area.left(), area.bottom() - fm.height() * 1.4, area.width(), fm.height() * 1.4);
        area.setBottom(g.legend.top() - fm.height() * 0.3);
    }
    const double bare = std::min(area.width() / double(tk), area.height() / double(tq));
    const double minCell = fm.height() * 0.7;
    g.labels = m_options.showLabels && (bare >= minCell || m_options.thinLabels);
    g.labelStep =
        bare >= minCell ? 1 : HeatmapRenderer::roundStep(int(std::ceil(fm.height() * 1.2 / std::max(bare, 1e-3))));
    double keyWidth = 0.0;
    if (g.labels) {
        for (Eigen::Index i = 0; i < p.tq(); i += g.labelStep)
            g.labelWidth = std::max(g.labelWidth, fm.horizontalAdvance(label(m_project.queryTokens, i)));
        for (Eigen::Index j = 0; j < p.tk(); j += g.labelStep)
            keyWidth = std::max(keyWidth, fm.horizontalAdvance(label(m_project.keyLabels(), j)));
        g.labelWidth =
            std::min(g.labelWidth + 8, std::max(area.width() * 0.3, area.width() - double(tk) * fm.height() * 1.6));
    }
    double top = g.labels ? fm.height() + 4 : 2.0;
    auto cellSize = [&] {
        return std::min((area.width() - g.labelWidth - 4) / double(tk), (area.height() - top - 4) / double(tq));
    };
    g.cell = cellSize();
    // Key labels wider than their cells run upwards instead of being cut to "…".
    if (g.labels && keyWidth + 2 > g.cell * g.labelStep) {
        g.rotatedColumnLabels = true;
        // At most a share of the height, or what the rows leave when each keeps a line of text.
        top = std::min(keyWidth + 6, std::max(area.height() * 0.3, area.height() - double(tq) * fm.height() * 1.6));
        g.cell = cellSize();
    }
    g.cell = std::max(g.cell, 0.01); // below a pixel per cell the grid is drawn as an image
    if (g.labels && !m_options.thinLabels && g.cell < minCell) {
        g.labels = false;
        g.labelWidth = 0.0;
    }
    // Centred across the width left over.
    const double slack = std::max(0.0, (area.width() - g.labelWidth - 4 - g.cell * double(p.tk())) / 2);
    g.grid =
        QRectF(area.left() + g.labelWidth + slack, area.top() + top, g.cell * double(p.tk()), g.cell * double(p.tq()));
    return g;
}

std::optional<QPoint> MaskRenderer::cellAt(const QRectF &target, const QPointF &pos) const
{
    const MaskLayout g = layout(target);
    const AttentionProblem &p = m_project.problem;
    if (!g.grid.contains(pos) || p.tq() == 0 || p.tk() == 0)
        return std::nullopt;
    return QPoint(std::clamp(int((pos.x() - g.grid.left()) / g.cell), 0, int(p.tk()) - 1),
                  std::clamp(int((pos.y() - g.grid.top()) / g.cell), 0, int(p.tq()) - 1));
}

void MaskRenderer::paint(QPainter &painter, const QRectF &target) const
{
    const AttentionProblem &p = m_project.problem;
    if (p.tq() == 0 || p.tk() == 0)
        return;
    const MaskLayout g = layout(target);
    const MaskMatrix effective = effectiveMask(p);
    const std::vector<bool> empty = emptyMaskRows(effective);
    const QColor allowed = allowedColor(), masked = maskedColor();
    const QPen hatch(QColor(0xb0, 0xb0, 0xb0), 0);
    painter.save();
    painter.setFont(m_options.font);
    if (g.cell < 4 || p.tq() * p.tk() > 96 * 96) {
        // Long sequences: one pixel per cell, scaled without smoothing.
        QImage image(int(p.tk()), int(p.tq()), QImage::Format_RGB32);
        const QRgb on = allowed.rgb(), off = masked.rgb();
        for (Eigen::Index i = 0; i < p.tq(); ++i) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(int(i)));
            for (Eigen::Index j = 0; j < p.tk(); ++j)
                line[j] = effective(i, j) ? on : off;
        }
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter.drawImage(g.grid, image);
    } else {
        for (Eigen::Index i = 0; i < p.tq(); ++i)
            for (Eigen::Index j = 0; j < p.tk(); ++j) {
                const QRectF cell(g.grid.left() + double(j) * g.cell, g.grid.top() + double(i) * g.cell, g.cell,
                                  g.cell);
                const bool custom = !p.mask.allowed || (*p.mask.allowed)(i, j);
                painter.fillRect(cell, effective(i, j) ? allowed : masked);
                if (custom && !effective(i, j)) { // masked by causal / padding, not by the custom part
                    painter.setPen(hatch);
                    HeatmapRenderer::paintHatch(painter, cell, m_options.hatchSpacing);
                }
            }
    }
    if (g.cell >= 6) {
        painter.setPen(QPen(m_options.base, 1));
        for (Eigen::Index i = 0; i <= p.tq(); ++i)
            painter.drawLine(QPointF(g.grid.left(), g.grid.top() + double(i) * g.cell),
                             QPointF(g.grid.right(), g.grid.top() + double(i) * g.cell));
        for (Eigen::Index j = 0; j <= p.tk(); ++j)
            painter.drawLine(QPointF(g.grid.left() + double(j) * g.cell, g.grid.top()),
                             QPointF(g.grid.left() + double(j) * g.cell, g.grid.bottom()));
    }
    // The sliding window's band: per row, its left edge at the first key the window keeps, drawn
    // over the cells so the band reads even where causal or padding also mask (design.md: key j is
    // in the window of query i when j > i - W; by position where RoPE positions are given).
    const StructuralMask structure(p);
    if (p.mask.window > 0) {
        painter.setPen(QPen(windowColor(), std::max(2.0, g.cell * 0.15)));
        for (Eigen::Index i = 0; i < p.tq(); ++i)
            for (Eigen::Index j = 0; j < p.tk(); ++j) {
                const bool inside = structure.keyPosition(j) > structure.queryPosition(i) - p.mask.window;
                const bool leftInside =
                    j > 0 && structure.keyPosition(j - 1) > structure.queryPosition(i) - p.mask.window;
                if (inside && !leftInside) {
                    const double x = g.grid.left() + double(j) * g.cell, y = g.grid.top() + double(i) * g.cell;
                    painter.drawLine(QPointF(x, y), QPointF(x, y + g.cell));
                }
            }
    }
    const QFontMetricsF fm(m_options.font);
    if (g.labels) {
        const double h = g.cell * g.labelStep;
        for (Eigen::Index i = 0; i < p.tq(); i += g.labelStep) {
            painter.setPen(empty[size_t(i)] ? HeatmapRenderer::emptyRowColor() : m_options.text);
            painter.drawText(QRectF(g.grid.left() - g.labelWidth, g.grid.top() + (double(i) + 0.5) * g.cell - h / 2,
                                    g.labelWidth - 4, h),
                             Qt::AlignRight | Qt::AlignVCenter,
                             fm.elidedText(label(m_project.queryTokens, i), Qt::ElideRight, g.labelWidth - 4));
        }
        painter.setPen(m_options.text);
        for (Eigen::Index j = 0; j < p.tk(); j += g.labelStep) {
            const QString text = label(m_project.keyLabels(), j);
            const double cx = g.grid.left() + (double(j) + 0.5) * g.cell;
            if (g.rotatedColumnLabels) {
                painter.save();
                painter.translate(cx, g.grid.top() - 3);
                painter.rotate(-90);
                const double room = g.grid.top() - target.top() - 4;
                painter.drawText(QRectF(0, -fm.height() / 2, room, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                                 fm.elidedText(text, Qt::ElideRight, room));
                painter.restore();
            } else {
                painter.drawText(QRectF(cx - h / 2, target.top(), h, g.grid.top() - target.top() - 2),
                                 Qt::AlignHCenter | Qt::AlignBottom, fm.elidedText(text, Qt::ElideRight, h));
            }
        }
    }
    painter.setBrush(Qt::NoBrush);
    for (size_t i = 0; i < empty.size(); ++i)
        if (empty[i]) {
            painter.setPen(QPen(HeatmapRenderer::emptyRowColor(), 2));
            painter.drawRect(QRectF(g.grid.left(), g.grid.top() + double(i) * g.cell, g.grid.width(), g.cell));
        }
    if (!g.legend.isEmpty()) {
        const double box = fm.height() * 0.8;
        double x = g.legend.left() + 4;
        const double y = g.legend.center().y();
        for (const MaskLegendEntry &e : legendEntries()) {
            const QRectF r(x, y - box / 2, box, box);
            switch (e.swatch) {
            case MaskLegendEntry::Frame:
                painter.setPen(QPen(HeatmapRenderer::emptyRowColor(), 2));
                painter.setBrush(Qt::NoBrush);
                painter.drawRect(r.adjusted(1, 1, -1, -1));
                break;
            case MaskLegendEntry::Edge:
                painter.setPen(QPen(windowColor(), 2));
                painter.drawLine(QPointF(r.center().x(), r.top()), QPointF(r.center().x(), r.bottom()));
                break;
            case MaskLegendEntry::Allowed:
            case MaskLegendEntry::Masked:
            case MaskLegendEntry::Hatched:
                painter.fillRect(r, e.swatch == MaskLegendEntry::Allowed ? allowed : masked);
                if (e.swatch == MaskLegendEntry::Hatched) {
                    painter.setPen(hatch);
                    HeatmapRenderer::paintHatch(painter, r, m_options.hatchSpacing);
                }
                painter.setPen(QPen(QColor(0x80, 0x80, 0x80), 0));
                painter.setBrush(Qt::NoBrush);
                painter.drawRect(r);
                break;
            }
            painter.setPen(m_options.text);
            const double w = fm.horizontalAdvance(e.text) + 2;
            painter.drawText(QRectF(x + box + 4, y - fm.height() / 2, w, fm.height()), Qt::AlignLeft | Qt::AlignVCenter,
                             e.text);
            x += box + 4 + w + fm.height();
        }
    }
    painter.restore();
}

} // namespace attnscope
