#include "app/gui/views/HeadLinesView.h"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>

namespace attnscope {

namespace {

QString tokenAt(const std::vector<std::string> &tokens, Eigen::Index i)
{
    return size_t(i) < tokens.size() ? QString::fromStdString(tokens[size_t(i)]) : QString::number(i);
}

} // namespace

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

QColor HeadLinesView::headColor(int head)
{
    // Okabe-Ito: distinguishable with colour-vision deficiencies.
    static const QColor colors[] = {QColor(0x00, 0x72, 0xb2), QColor(0xe6, 0x9f, 0x00), QColor(0x00, 0x9e, 0x73),
                                    QColor(0xcc, 0x79, 0xa7), QColor(0xd5, 0x5e, 0x00), QColor(0x56, 0xb4, 0xe9),
                                    QColor(0xf0, 0xe4, 0x42), QColor(0x00, 0x00, 0x00)};
    return colors[head % 8];
}

double HeadLinesView::rowHeight(Eigen::Index n) const
{
    return (height() - 40.0) / double(std::max<Eigen::Index>(n, 1));
}

QPointF HeadLinesView::queryAnchor(int query) const
{
    const double h = m_result ? rowHeight(m_result->project.problem.tq()) : 0;
    return QPointF(width() * 0.35, 30 + (query + 0.5) * h);
}

QPointF HeadLinesView::keyAnchor(int key) const
{
    const double h = m_result ? rowHeight(m_result->project.problem.tk()) : 0;
    return QPointF(width() * 0.65, 30 + (key + 0.5) * h);
}

void HeadLinesView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    if (!m_result || m_result->trace.heads() == 0)
        return;
    const AttentionTrace &t = m_result->trace;
    const Project &pr = m_result->project;
    const Eigen::Index tq = t.weights[0].rows(), tk = t.weights[0].cols();
    const QFontMetricsF fm(font());
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::black);
    QFont bold = font();
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRectF(0, 4, width() * 0.35, 20), Qt::AlignRight, tr("queries"));
    p.drawText(QRectF(width() * 0.65, 4, width() * 0.35, 20), Qt::AlignLeft, tr("keys"));
    p.setFont(font());

    const int head = std::clamp(m_head, 0, t.heads() - 1);
    const int firstHead = m_overlay ? 0 : head, lastHead = m_overlay ? t.heads() - 1 : head;
    // Too many lines to draw them all: only the hovered query's (or the first query's).
    const bool dense = tq * tk > 40000;
    for (int h = firstHead; h <= lastHead; ++h) {
        const MatrixF &w = t.weights[size_t(h)];
        QColor c = m_overlay ? headColor(h) : QColor(0x00, 0x72, 0xb2);
        for (Eigen::Index i = 0; i < tq; ++i) {
            if ((m_hoverQuery >= 0 && i != m_hoverQuery) || (dense && m_hoverQuery < 0 && i != 0))
                continue;
            for (Eigen::Index j = 0; j < tk; ++j) {
                const float a = w(i, j);
                if (a < 0.005f)
                    continue;
                c.setAlphaF(std::clamp(double(a), 0.05, 1.0) * (m_overlay ? 0.8 : 1.0));
                p.setPen(QPen(c, 1.0 + 4.0 * a));
                p.drawLine(queryAnchor(int(i)) + QPointF(4, 0), keyAnchor(int(j)) - QPointF(4, 0));
            }
        }
    }
    const double qh = rowHeight(tq), kh = rowHeight(tk);
    if (qh >= fm.height() * 0.6)
        for (Eigen::Index i = 0; i < tq; ++i) {
            const bool empty = size_t(i) < t.emptyRows.size() && t.emptyRows[size_t(i)];
            p.setPen(empty ? QColor(0xd6, 0x27, 0x28)
                           : (i == m_hoverQuery ? QColor(0x00, 0x72, 0xb2) : QColor(Qt::black)));
            const QPointF a = queryAnchor(int(i));
            p.drawText(QRectF(0, a.y() - qh / 2, a.x() - 4, qh), Qt::AlignRight | Qt::AlignVCenter,
                       fm.elidedText(tokenAt(pr.queryTokens, i), Qt::ElideRight, a.x() - 8));
        }
    p.setPen(Qt::black);
    if (kh >= fm.height() * 0.6)
        for (Eigen::Index j = 0; j < tk; ++j) {
            const QPointF a = keyAnchor(int(j));
            p.drawText(QRectF(a.x() + 4, a.y() - kh / 2, width() - a.x() - 4, kh), Qt::AlignLeft | Qt::AlignVCenter,
                       fm.elidedText(tokenAt(pr.keyLabels(), j), Qt::ElideRight, width() - a.x() - 8));
        }
    if (m_overlay) {
        double x = 6;
        for (int h = 0; h < t.heads(); ++h) {
            const QString s = tr("head %1").arg(h + 1);
            p.fillRect(QRectF(x, height() - 16, 10, 10), headColor(h));
            p.setPen(Qt::black);
            p.drawText(QPointF(x + 13, height() - 7), s);
            x += 20 + fm.horizontalAdvance(s);
        }
    }
}

void HeadLinesView::mouseMoveEvent(QMouseEvent *event)
{
    int hover = -1;
    if (m_result && event->position().x() < width() * 0.4) {
        const Eigen::Index tq = m_result->project.problem.tq();
        const int i = int((event->position().y() - 30) / rowHeight(tq));
        if (i >= 0 && i < tq)
            hover = i;
    }
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
