#pragma once

#include "app/gui/document/AttentionController.h"
#include "app/gui/views/HeatmapZoom.h"
#include "app/render/HeatmapRenderer.h"

#include <QWidget>

namespace attnscope {

// Attention rollout over every layer (computed on the worker) as one heatmap, coloured over
// [0, its largest value]. Shows why there is none (cross-attention maps are not square). Zooms
// as the enlarged head does (HeatmapZoom): the wheel, + and -, a drag, Home or a double-click.
class RolloutView : public QWidget
{
    Q_OBJECT

public:
    explicit RolloutView(QWidget *parent = nullptr);

    void setRollout(AttentionController::RolloutPtr rollout, const QStringList &queryLabels,
                    const QStringList &keyLabels, int layers, const QString &error);
    void clear();
    void setColorMap(ColorMapKind kind);
    // The toolbar's scale: linear, log or percentile over the rollout's values.
    void setColorScale(ColorScaleKind kind);
    ColorScaleKind colorScale() const { return m_colorScale; }
    const HeatmapData &data() const { return m_data; }
    QString error() const { return m_error; }
    bool isFilled() const { return m_data.values != nullptr || !m_error.isEmpty(); }

    QSize sizeHint() const override { return {480, 400}; }
    // The block in view (x: first key, y: first query).
    QRect visibleCells() const { return m_zoom.visible(); }
    bool isZoomed() const { return m_zoom.isZoomed(); }
    // Where the map is painted, and the layout of what is painted there.
    QRectF heatmapRect() const { return QRectF(rect()).adjusted(4, 4, -4, -4); }
    HeatmapLayout layout() const;

protected:
    void paintEvent(QPaintEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    HeatmapOptions options() const;

    HeatmapData m_data;
    QString m_error;
    ColorMapKind m_colorMap = ColorMapKind::Viridis;
    ColorScaleKind m_colorScale = ColorScaleKind::Linear;
    HeatmapZoom m_zoom;
    QPointF m_pressAt;
};

} // namespace attnscope
