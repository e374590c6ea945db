#pragma once

#include "app/gui/views/HeatmapZoom.h"
#include "app/render/HeatmapRenderer.h"
#include "app/render/ShownAttention.h"
#include "core/attention/TraceCheck.h"

#include <QAbstractScrollArea>
#include <QWidget>

class QLabel;

namespace attnscope {

// How the heatmap views show a layer; shared by the heads grid and the enlarged head.
struct HeatmapViewSettings {
    ColorMapKind colorMap = ColorMapKind::Viridis;
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ScaleScope scope = ScaleScope::Absolute;
    ColorScaleKind colorScale = ColorScaleKind::Linear; // log and percentile show long causal heads' structure
    bool showValues = true;
    // The model view: each map's first key (the attention sink) apart, as a thin bar beside it,
    // and out of the colour scale; off, it is drawn as any other key.
    bool sinkApart = false;
};

// One head (or the mean over heads, head = -1), enlarged: hover shows the query, key, q·k,
// scaled score and weight of a cell; a click selects the cell and the arrow keys move it. The
// wheel zooms around the cursor (+ and - too), a drag pans, Home or a double-click shows the whole
// map again: zoomed in, a block of a 512-token map has its token labels. A banner warns when the
// result is not finite (an overflow), and a note says so when cells are too small for their values.
class HeatmapView : public QWidget
{
    Q_OBJECT

public:
    explicit HeatmapView(QWidget *parent = nullptr);

    void setAttention(ShownAttention shown);
    const ShownAttention &attention() const { return m_shown; }
    void setHead(int head); // -1: mean over heads
    int head() const { return m_head; }
    void setSettings(const HeatmapViewSettings &settings);
    const HeatmapViewSettings &settings() const { return m_settings; }
    void setSelectedCell(std::optional<QPoint> cell);
    std::optional<QPoint> selectedCell() const { return m_selected; }

    const HeatmapData &data() const;
    HeatmapOptions options() const;
    // The cell (x = key, y = query) at a widget position, and where a cell's centre is.
    std::optional<QPoint> cellAt(const QPointF &pos) const;
    QRectF cellRect(int query, int key) const;
    // The hover text of a cell: query, key, q·k, scaled score, weight, and why the weight is
    // what it is (core/attention/AttentionRules), phrased here.
    QString cellDescription(int query, int key) const;
    // Where the heatmap is painted: the widget less the banner and the note when shown.
    QRectF heatmapRect() const;
    // The block of the map in view (x: first key, y: first query), the whole map unless zoomed.
    QRect visibleCells() const;
    bool isZoomed() const { return m_zoom.isZoomed(); }
    // Zooms by `factor` (> 1: in) around a cell; 1/factor out (HeatmapZoom).
    void zoomBy(double factor, QPointF aroundCell);
    void resetZoom();

    QSize sizeHint() const override { return {480, 400}; }
    QSize minimumSizeHint() const override { return {120, 100}; }

signals:
    void cellSelected(int head, int query, int key);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void showEvent(QShowEvent *event) override;

private:
    void rebuild();
    // The map as painted: data(), or its zoomed block.
    const HeatmapData &shownData() const;
    void zoomChanged();
    // Shows or hides the non-finite banner and the hidden-values note, and places them.
    void updateNotes();

    ShownAttention m_shown;
    QLabel *m_warning;
    QLabel *m_valuesNote;
    std::weak_ptr<const void> m_scanned; // the tensors or maps m_nonFinite describes
    NonFiniteReport m_nonFinite;
    // Built lazily, on the first paint or query after a change: hidden views cost nothing.
    mutable HeatmapData m_data;
    mutable bool m_dirty = false;
    HeatmapViewSettings m_settings;
    int m_head = 0;
    std::optional<QPoint> m_selected;
    HeatmapZoom m_zoom;
    QPointF m_pressAt;
};

// All heads at a glance: one small heatmap per head with its title; a click on a head
// activates it (the main window enlarges it). Tiles never shrink below kMinTileSize: many
// heads scroll instead. Positions (tileRect, headAt) are in viewport() coordinates.
class HeadsGridView : public QAbstractScrollArea
{
    Q_OBJECT

public:
    explicit HeadsGridView(QWidget *parent = nullptr);

    static constexpr int kMinTileSize = 120; // pixels: room for "Head 256" and a readable map

    void setAttention(ShownAttention shown);
    void setSettings(const HeatmapViewSettings &settings);
    void setCurrentHead(int head);
    int currentHead() const { return m_current; }
    int heads() const;
    QRectF tileRect(int head) const;
    int headAt(const QPointF &pos) const;
    // Scrolls so that a head's tile is in view.
    void ensureHeadVisible(int head);
    // Query heads per key/value head of the shown layer (1 where nothing is shared or unknown):
    // the grid lays each group out together and frames it.
    int groupSize() const;

    QSize sizeHint() const override { return {480, 400}; }

signals:
    void headActivated(int head);

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    int columns() const;
    QSizeF tileSize() const; // before scrolling
    void updateScrollRange();

    void ensureData() const;

    ShownAttention m_shown;
    mutable std::vector<HeatmapData> m_data;
    mutable bool m_dirty = false;
    HeatmapViewSettings m_settings;
    int m_current = 0;
};

} // namespace attnscope
