#pragma once

#include "app/gui/document/ComputeController.h"
#include "app/render/HeatmapRenderer.h"

#include <QWidget>

namespace attnscope {

// How the heatmap views show a trace; shared by the heads grid and the enlarged head.
struct HeatmapViewSettings {
    ColorMapKind colorMap = ColorMapKind::Viridis;
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ScaleScope scope = ScaleScope::Absolute;
    bool showValues = true;
};

// One head (or the mean over heads, head = -1), enlarged: hover shows the query, key, q·k,
// scaled score and weight of a cell; a click selects the cell.
class HeatmapView : public QWidget
{
    Q_OBJECT

public:
    explicit HeatmapView(QWidget *parent = nullptr);

    void setResult(ComputedTracePtr result);
    ComputedTracePtr result() const { return m_result; }
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
    // The hover text of a cell: query, key, q·k, scaled score, weight.
    QString cellDescription(int query, int key) const;

    QSize sizeHint() const override { return {480, 400}; }
    QSize minimumSizeHint() const override { return {120, 100}; }

signals:
    void cellSelected(int head, int query, int key);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    void rebuild();

    ComputedTracePtr m_result;
    // Built lazily, on the first paint or query after a change: hidden views cost nothing.
    mutable HeatmapData m_data;
    mutable bool m_dirty = false;
    HeatmapViewSettings m_settings;
    int m_head = 0;
    std::optional<QPoint> m_selected;
};

// All heads at a glance: one small heatmap per head with its title; a click on a head
// activates it (the main window enlarges it).
class HeadsGridView : public QWidget
{
    Q_OBJECT

public:
    explicit HeadsGridView(QWidget *parent = nullptr);

    void setResult(ComputedTracePtr result);
    void setSettings(const HeatmapViewSettings &settings);
    void setCurrentHead(int head);
    int currentHead() const { return m_current; }
    int heads() const;
    QRectF tileRect(int head) const;
    int headAt(const QPointF &pos) const;

    QSize sizeHint() const override { return {480, 400}; }

signals:
    void headActivated(int head);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    int columns() const;

    void ensureData() const;

    ComputedTracePtr m_result;
    mutable std::vector<HeatmapData> m_data;
    mutable bool m_dirty = false;
    HeatmapViewSettings m_settings;
    int m_current = 0;
};

} // namespace attnscope
