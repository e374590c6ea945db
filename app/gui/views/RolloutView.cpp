#include "app/gui/views/RolloutView.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace attnscope {

RolloutView::RolloutView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("rolloutView"));
    setAttribute(Qt::WA_OpaquePaintEvent);
    setFocusPolicy(Qt::StrongFocus); // + and - zoom, Home shows the whole map
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
    m_zoom.setMapSize(int(m_data.rows()), int(m_data.cols()));
    update();
}

void RolloutView::clear()
{
    m_data = HeatmapData();
    m_error.clear();
    m_zoom.setMapSize(0, 0);
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
    m_zoom.invalidate();
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
    HeatmapRenderer(m_zoom.shown(m_data, m_colorScale), options()).paint(p, heatmapRect());
}

HeatmapOptions RolloutView::options() const
{
    HeatmapOptions o;
    o.colorMap = m_colorMap;
    o.colorScale = m_colorScale;
    o.font = font();
    o.showValues = false;
    o.axisTitles = true;
    return o;
}

HeatmapLayout RolloutView::layout() const
{
    return HeatmapRenderer(m_zoom.shown(m_data, m_colorScale), options()).layout(heatmapRect());
}

void RolloutView::wheelEvent(QWheelEvent *event)
{
    if (!m_data.values || event->angleDelta().y() == 0) {
        event->ignore();
        return;
    }
    m_zoom.zoomBy(std::pow(1.25, event->angleDelta().y() / 120.0), m_zoom.cellAt(layout(), event->position()));
    update();
    event->accept();
}

void RolloutView::mousePressEvent(QMouseEvent *event)
{
    m_pressAt = event->position();
    if (m_zoom.isZoomed())
        m_zoom.beginDrag();
}

void RolloutView::mouseMoveEvent(QMouseEvent *event)
{
    const HeatmapLayout l = layout();
    if (!m_zoom.isDragging() || !(event->buttons() & Qt::LeftButton) || l.cellWidth <= 0)
        return;
    const QPointF moved = event->position() - m_pressAt;
    m_zoom.moveBy(QPointF(moved.x() / l.cellWidth, moved.y() / l.cellHeight));
    update();
}

void RolloutView::mouseReleaseEvent(QMouseEvent *)
{
    m_zoom.endDrag();
}

void RolloutView::mouseDoubleClickEvent(QMouseEvent *)
{
    m_zoom.reset();
    update();
}

void RolloutView::keyPressEvent(QKeyEvent *event)
{
    const QRect v = m_zoom.visible();
    const QPointF centre(v.center().x() + 0.5, v.center().y() + 0.5);
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        m_zoom.zoomBy(1.5, centre);
        break;
    case Qt::Key_Minus:
        m_zoom.zoomBy(1 / 1.5, centre);
        break;
    case Qt::Key_Home:
        m_zoom.reset();
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    update();
}

} // namespace attnscope
