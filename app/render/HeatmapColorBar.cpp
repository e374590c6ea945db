// HeatmapRenderer's colour bar: its ticks come from the colour scale (linear, log, percentile).

#include "app/render/HeatmapRenderer.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>

namespace attnscope {

namespace {

QString nanLegendText()
{
    return QCoreApplication::translate("attnscope::Heatmap", "NaN: not a number");
}

QString infinityLegendText()
{
    return QCoreApplication::translate("attnscope::Heatmap", "±Inf: overflow");
}

} // namespace

double HeatmapRenderer::tickTextWidth() const
{
    const QFontMetricsF fm(m_options.font);
    double width = fm.horizontalAdvance(QStringLiteral("-0.00"));
    // Only scales other than the linear one have other labels: no scale is built for layout alone.
    if (m_options.colorScale != ColorScaleKind::Linear)
        for (const ColorScaleTick &t : scale().ticks())
            width = std::max(width, fm.horizontalAdvance(t.label));
    // The legend's entries under the bar are as wide as a tick label may be.
    if (m_data.nanCount > 0)
        width = std::max(width, fm.horizontalAdvance(nanLegendText()) + 2);
    if (m_data.nonFinite > m_data.nanCount)
        width = std::max(width, fm.horizontalAdvance(infinityLegendText()) + 2);
    return width;
}

double HeatmapRenderer::colorBarWidth() const
{
    const QFontMetricsF fm(m_options.font);
    const double pad = std::max(2.0, fm.height() * 0.3);
    return std::max(8.0, fm.height() * 0.8) + tickTextWidth() + 2 * pad + 5;
}

double HeatmapRenderer::nonFiniteLegendHeight() const
{
    const int entries = int(m_data.nanCount > 0) + int(m_data.nonFinite - m_data.nanCount > 0);
    return entries == 0 ? 0.0 : QFontMetricsF(m_options.font).height() * (1.0 + 1.2 * entries);
}

void HeatmapRenderer::paintColorBar(QPainter &painter, const QRectF &bar) const
{
    painter.save();
    painter.setFont(m_options.font);
    const int steps = std::max(1, int(bar.height()));
    for (int i = 0; i < steps; ++i) {
        const double t = 1.0 - (i + 0.5) / steps;
        painter.fillRect(
            QRectF(bar.left(), bar.top() + i * bar.height() / steps, bar.width(), bar.height() / steps + 0.5),
            QColor::fromRgb(m_map.at(t)));
    }
    painter.setPen(QColor(0x60, 0x60, 0x60));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(bar);
    const QFontMetricsF fm(m_options.font);
    painter.setPen(Qt::black);
    const double labelWidth = std::max(tickTextWidth(), fm.horizontalAdvance(QStringLiteral("-00.00"))) + 4;
    for (const ColorScaleTick &tick : scale().ticks()) {
        const double y = bar.top() + bar.height() * (1.0 - tick.position);
        painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 3, y));
        painter.drawText(QRectF(bar.right() + 5, y - fm.height() / 2, labelWidth, fm.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, tick.label);
    }
    // The legend's entries for the colours that are no value: NaN, and ±Inf from an overflow,
    // each where the data has one.
    int entry = 0;
    const std::int64_t infinities = m_data.nonFinite - m_data.nanCount;
    for (const bool nan : {true, false}) {
        if (nan ? m_data.nanCount <= 0 : infinities <= 0)
            continue;
        const QRectF swatch(bar.left(), bar.bottom() + fm.height() * (0.6 + 1.2 * entry++), bar.width(),
                            fm.height() * 0.9);
        painter.fillRect(swatch, nan ? nanColor() : infinityColor());
        painter.setPen(QColor(0x60, 0x60, 0x60));
        painter.drawRect(swatch);
        painter.setPen(Qt::black);
        const QString text = nan ? nanLegendText() : infinityLegendText();
        painter.drawText(
            QRectF(swatch.right() + 4, swatch.top() - fm.height() * 0.05, fm.horizontalAdvance(text) + 4, fm.height()),
            Qt::AlignLeft | Qt::AlignVCenter, text);
    }
    painter.restore();
}

} // namespace attnscope
