#include "app/gui/views/HeadLinesView.h"

#include <QMouseEvent>
#include <QPainter>

namespace attnscope {

HeadLinesView::HeadLinesView(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void HeadLinesView::setAttention(ShownAttention shown)
{
    m_shown = std::move(shown);
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

void HeadLinesView::setHeadShown(int head, bool shown)
{
    if (head < 0)
        return;
    if (size_t(head) >= m_hiddenHeads.size())
        m_hiddenHeads.resize(size_t(head) + 1, false);
    m_hiddenHeads[size_t(head)] = !shown;
    update();
}

bool HeadLinesView::isHeadShown(int head) const
{
    return size_t(head) >= m_hiddenHeads.size() || !m_hiddenHeads[size_t(head)];
}

HeadViewOptions HeadLinesView::options() const
{
    HeadViewOptions o;
    o.head = m_head;
    o.overlay = m_overlay;
    o.hoverQuery = m_hoverQuery;
    o.hoverKey = m_hoverKey;
    o.hiddenHeads = m_hiddenHeads;
    o.font = font();
    return o;
}

QPointF HeadLinesView::queryAnchor(int query) const
{
    if (!m_shown.weights())
        return {};
    return HeadViewRenderer(m_shown, options()).queryAnchor(QRectF(rect()), query);
}

QPointF HeadLinesView::keyAnchor(int key) const
{
    if (!m_shown.weights())
        return {};
    return HeadViewRenderer(m_shown, options()).keyAnchor(QRectF(rect()), key);
}

void HeadLinesView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (m_shown.weights())
        HeadViewRenderer(m_shown, options()).paint(p, QRectF(rect()));
}

// Hovering a query shows its lines; hovering a key shows the lines into it.
void HeadLinesView::mouseMoveEvent(QMouseEvent *event)
{
    int query = -1, key = -1;
    if (m_shown.weights()) {
        const HeadViewRenderer r(m_shown, options());
        query = r.queryAt(QRectF(rect()), event->position());
        if (query < 0)
            key = r.keyAt(QRectF(rect()), event->position());
    }
    if (query != m_hoverQuery || key != m_hoverKey) {
        m_hoverQuery = query;
        m_hoverKey = key;
        update();
    }
}

void HeadLinesView::mousePressEvent(QMouseEvent *event)
{
    if (!m_shown.weights() || event->button() != Qt::LeftButton)
        return;
    const int head = HeadViewRenderer(m_shown, options()).legendHeadAt(QRectF(rect()), event->position());
    if (head >= 0)
        setHeadShown(head, !isHeadShown(head));
}

void HeadLinesView::leaveEvent(QEvent *)
{
    m_hoverQuery = -1;
    m_hoverKey = -1;
    update();
}

} // namespace attnscope
