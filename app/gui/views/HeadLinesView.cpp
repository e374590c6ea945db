#include "app/gui/views/HeadLinesView.h"

#include <QMouseEvent>
#include <QPainter>

namespace attnscope {

HeadLinesView::HeadLinesView(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void HeadLinesView::setResult(ComputedTracePtr result)
{
    m_result = std::move(result);
    update();
}

void HeadLinesView::setHead(int head)
{
    m_head = head;
    update();
}

void HeadLinesView::setOverlay(bool overlay)
{
    m_overlay = overlay;
    update();
}

HeadViewOptions HeadLinesView::options() const
{
    HeadViewOptions o;
    o.head = m_head;
    o.overlay = m_overlay;
    o.hoverQuery = m_hoverQuery;
    o.font = font();
    return o;
}

QPointF HeadLinesView::queryAnchor(int query) const
{
    if (!m_result)
        return {};
    return HeadViewRenderer(m_result->project, m_result->trace, options()).queryAnchor(QRectF(rect()), query);
}

QPointF HeadLinesView::keyAnchor(int key) const
{
    if (!m_result)
        return {};
    return HeadViewRenderer(m_result->project, m_result->trace, options()).keyAnchor(QRectF(rect()), key);
}

void HeadLinesView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (m_result)
        HeadViewRenderer(m_result->project, m_result->trace, options()).paint(p, QRectF(rect()));
}

void HeadLinesView::mouseMoveEvent(QMouseEvent *event)
{
    const int hover =
        m_result
            ? HeadViewRenderer(m_result->project, m_result->trace, options()).queryAt(QRectF(rect()), event->position())
            : -1;
    if (hover != m_hoverQuery) {
        m_hoverQuery = hover;
        update();
    }
}

void HeadLinesView::leaveEvent(QEvent *)
{
    m_hoverQuery = -1;
    update();
}

} // namespace attnscope
