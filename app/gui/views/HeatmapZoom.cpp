#include "app/gui/views/HeatmapZoom.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

void HeatmapZoom::setMapSize(int rows, int cols)
{
    m_rows = rows;
    m_cols = cols;
    m_blockDirty = true;
    // Another map of the same size keeps the block in view (another head, another scale).
    if (m_zoom && (m_zoom->right() > double(cols) + 1e-9 || m_zoom->bottom() > double(rows) + 1e-9))
        m_zoom.reset();
}

QRect HeatmapZoom::visible() const
{
    if (!m_zoom)
        return QRect(0, 0, m_cols, m_rows);
    const int w = std::clamp(int(std::lround(m_zoom->width())), 1, std::max(m_cols, 1));
    const int h = std::clamp(int(std::lround(m_zoom->height())), 1, std::max(m_rows, 1));
    const int x = std::clamp(int(std::lround(m_zoom->x())), 0, std::max(m_cols - w, 0));
    const int y = std::clamp(int(std::lround(m_zoom->y())), 0, std::max(m_rows - h, 0));
    return QRect(x, y, w, h);
}

void HeatmapZoom::set(std::optional<QRectF> zoom)
{
    const double rows = double(m_rows), cols = double(m_cols);
    if (zoom) {
        // Inside the map, and never smaller than kMinCells (or the map) a side.
        QRectF z = *zoom;
        z.setWidth(std::clamp(z.width(), std::min(double(kMinCells), cols), cols));
        z.setHeight(std::clamp(z.height(), std::min(double(kMinCells), rows), rows));
        z.moveLeft(std::clamp(z.left(), 0.0, cols - z.width()));
        z.moveTop(std::clamp(z.top(), 0.0, rows - z.height()));
        if (z.width() >= cols - 1e-9 && z.height() >= rows - 1e-9)
            zoom.reset(); // the whole map
        else
            zoom = z;
    }
    m_zoom = zoom;
}

void HeatmapZoom::zoomBy(double factor, QPointF aroundCell)
{
    if (m_rows <= 0 || m_cols <= 0 || factor <= 0)
        return;
    const QRectF current = m_zoom.value_or(QRectF(0, 0, m_cols, m_rows));
    const QSizeF size(current.width() / factor, current.height() / factor);
    // The cell under the cursor stays where it is.
    const QPointF rel((aroundCell.x() - current.left()) / current.width(),
                      (aroundCell.y() - current.top()) / current.height());
    set(QRectF(QPointF(aroundCell.x() - rel.x() * size.width(), aroundCell.y() - rel.y() * size.height()), size));
}

void HeatmapZoom::ensureVisible(QPoint cell)
{
    if (!m_zoom)
        return;
    QRectF z = *m_zoom;
    const QRect v = visible();
    if (cell.x() < v.left())
        z.moveLeft(cell.x());
    else if (cell.x() > v.right())
        z.moveLeft(cell.x() + 1 - z.width());
    if (cell.y() < v.top())
        z.moveTop(cell.y());
    else if (cell.y() > v.bottom())
        z.moveTop(cell.y() + 1 - z.height());
    set(z);
}

void HeatmapZoom::moveBy(QPointF cells)
{
    if (m_dragFrom)
        set(m_dragFrom->translated(-cells.x(), -cells.y()));
}

const HeatmapData &HeatmapZoom::shown(const HeatmapData &whole, ColorScaleKind kind) const
{
    if (!m_zoom || !whole.values)
        return whole;
    const QRect v = visible();
    if (m_blockDirty || v != m_blockOf) {
        m_block = whole.block(v, kind);
        m_blockOf = v;
        m_blockDirty = false;
    }
    return m_block;
}

QPointF HeatmapZoom::cellAt(const HeatmapLayout &layout, QPointF pos) const
{
    const QRect v = visible();
    if (layout.cellWidth > 0 && layout.cellHeight > 0 && layout.grid.contains(pos))
        return QPointF(v.left() + (pos.x() - layout.grid.left()) / layout.cellWidth,
                       v.top() + (pos.y() - layout.grid.top()) / layout.cellHeight);
    return QPointF(v.center().x() + 0.5, v.center().y() + 0.5);
}

} // namespace attnscope
