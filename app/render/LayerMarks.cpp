#include "app/render/LayerMarks.h"

#include "core/attention/HeadLayout.h"

#include <QFontMetricsF>

#include <algorithm>

namespace attnscope {

int keyValueGroupSize(const LayerFacts &facts, int heads)
{
    if (facts.kvHeads <= 0 || facts.kvHeads >= heads || heads % facts.kvHeads != 0)
        return 1;
    return HeadLayout{heads, facts.kvHeads}.groupSize();
}

void paintKeyValueGroup(QPainter &painter, const QRectF &frame, int group, const QString &label, const QFont &font)
{
    painter.save();
    const QColor color = group % 2 == 0 ? QColor(0x2b, 0x6c, 0xb0) : QColor(0xc0, 0x5a, 0x1e);
    painter.setPen(QPen(color, 1.5, Qt::DashLine));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(frame.adjusted(0.75, 0.75, -0.75, -0.75));
    const QFontMetricsF metrics(font);
    const double width = metrics.horizontalAdvance(label) + 6;
    if (!label.isEmpty() && width + 4 < frame.width()) {
        const QRectF tag(frame.right() - width - 2, frame.top() + 1, width, metrics.height() + 2);
        painter.fillRect(tag, color);
        painter.setFont(font);
        painter.setPen(Qt::white);
        painter.drawText(tag, Qt::AlignCenter, label);
    }
    painter.restore();
}

std::optional<QLineF> windowEdge(const QRectF &cells, double queries, double keys, std::int64_t window, double firstKey)
{
    if (window <= 0 || queries <= 0 || keys <= firstKey || double(window) >= queries)
        return std::nullopt;
    const double w = double(window);
    const auto at = [&](double key, double query) {
        return QPointF(cells.left() + (key - firstKey) / (keys - firstKey) * cells.width(),
                       cells.top() + query / queries * cells.height());
    };
    const double startKey = std::max(firstKey, 0.0);
    const double endQuery = std::min(queries, keys + w - 1.0);
    return QLineF(at(startKey, startKey + w - 1.0), at(endQuery - w + 1.0, endQuery));
}

QPen windowEdgePen(double width)
{
    return QPen(QColor(255, 255, 255, 220), width, Qt::DashLine);
}

} // namespace attnscope
