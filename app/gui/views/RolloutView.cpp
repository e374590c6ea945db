#include "app/gui/views/RolloutView.h"

#include <QPainter>

#include <algorithm>

namespace attnscope {

RolloutView::RolloutView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("rolloutView"));
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void RolloutView::setRollout(AttentionController::RolloutPtr rollout, const QStringList &queryLabels,
                             const QStringList &keyLabels, int layers, const QString &error)
{
    m_data = HeatmapData();
    m_error = error;
    if (rollout) {
        // Shares the worker's matrix: nothing of its size is copied or scanned here.
        m_data.owned = std::shared_ptr<const MatrixF>(rollout, &rollout->values);
        m_data.values = m_data.owned.get();
        m_data.rowLabels = queryLabels;
        m_data.columnLabels = keyLabels;
        m_data.title =
            layers == 1 ? tr("Attention rollout of one layer") : tr("Attention rollout over %1 layers").arg(layers);
        m_data.rangeMax = rollout->max > 0.0 ? rollout->max : 1.0;
    }
    update();
}

void RolloutView::clear()
{
    m_data = HeatmapData();
    m_error.clear();
    update();
}

void RolloutView::setColorMap(ColorMapKind kind)
{
    m_colorMap = kind;
    update();
}

void RolloutView::setColorScale(ColorScaleKind kind)
{
    if (kind == m_colorScale)
        return;
    m_colorScale = kind;
    m_data.scale.reset(); // built again for the new kind when next painted
    update();
}

void RolloutView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!m_data.values) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   m_error.isEmpty() ? tr("Computing\u2026") : m_error);
        return;
    }
    HeatmapOptions o;
    o.colorMap = m_colorMap;
    o.colorScale = m_colorScale;
    o.font = font();
    o.showValues = false;
    o.axisTitles = true;
    HeatmapRenderer(m_data, o).paint(p, QRectF(rect()).adjusted(4, 4, -4, -4));
}

} // namespace attnscope
