#pragma once

#include "app/render/HeatmapRenderer.h"

#include <QPointF>
#include <QRect>
#include <QRectF>

#include <optional>

namespace attnscope {

// The block of a map a heatmap view shows: the whole map, or a block zoomed into by the wheel
// (around the cell under the cursor), + and -, and panned by a drag; never smaller than
// kMinCells a side. The enlarged head, the mean and the rollout share it.
class HeatmapZoom
{
public:
    static constexpr int kMinCells = 4;

    // The map's size; a block that no longer fits (another map) goes.
    void setMapSize(int rows, int cols);
    bool isZoomed() const { return m_zoom.has_value(); }
    // The block in view in whole cells (x: first key, y: first query).
    QRect visible() const;
    // Zooms by `factor` (> 1: in) keeping `aroundCell` (fractional cells) where it is.
    void zoomBy(double factor, QPointF aroundCell);
    void reset() { m_zoom.reset(); }
    // Pans so that a cell is in view.
    void ensureVisible(QPoint cell);
    // A drag: begin() where the mouse went down, moveBy() the cells it has moved since.
    void beginDrag() { m_dragFrom = m_zoom; }
    bool isDragging() const { return m_dragFrom.has_value(); }
    void moveBy(QPointF cells);
    void endDrag() { m_dragFrom.reset(); }

    // What is painted: `whole`, or its block in view (HeatmapData::block, coloured as the whole),
    // kept until the block or the map changes (invalidate()).
    const HeatmapData &shown(const HeatmapData &whole, ColorScaleKind kind) const;
    void invalidate() { m_blockDirty = true; }

    // The fractional cell at a position of a layout of shown(), or the centre of the block.
    QPointF cellAt(const HeatmapLayout &layout, QPointF pos) const;

private:
    void set(std::optional<QRectF> zoom);

    int m_rows = 0, m_cols = 0;
    std::optional<QRectF> m_zoom, m_dragFrom;
    mutable HeatmapData m_block;
    mutable QRect m_blockOf;
    mutable bool m_blockDirty = true;
};

} // namespace attnscope
