#pragma once

#include "app/gui/document/AttentionController.h"
#include "app/render/HeatmapRenderer.h"

#include <QWidget>

namespace attnscope {

// Attention rollout over every layer (computed on the worker) as one heatmap, coloured over
// [0, its largest value]. Shows why there is none (cross-attention maps are not square).
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

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    HeatmapData m_data;
    QString m_error;
    ColorMapKind m_colorMap = ColorMapKind::Viridis;
    ColorScaleKind m_colorScale = ColorScaleKind::Linear;
};

} // namespace attnscope
