#include "app/gui/views/ModelView.h"

#include "app/render/LayerMarks.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include <algorithm>

namespace attnscope {

ModelView::ModelView(QWidget *parent) : QAbstractScrollArea(parent)
{
    setObjectName(QStringLiteral("modelView"));
    setFrameShape(QFrame::NoFrame);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
}

void ModelView::setThumbnails(AttentionController::ThumbnailsPtr thumbnails)
{
    m_thumbs = std::move(thumbnails);
    updateScrollRange();
    viewport()->update();
}

void ModelView::setProgress(int percent)
{
    m_progress = percent;
    if (!isFilled())
        viewport()->update();
}

void ModelView::clear()
{
    m_thumbs.reset();
    m_progress = -1;
    updateScrollRange();
    viewport()->update();
}

void ModelView::setCurrent(int layer, int head)
{
    m_layer = layer;
    m_head = head;
    // Scroll the tile into view.
    const QRect tile = tileRect(layer, head);
    const QRect area = viewport()->rect().adjusted(rowHeaderWidth(), columnHeaderHeight(), 0, 0);
    if (layers() > 0 && !area.contains(tile)) {
        if (tile.left() < area.left())
            horizontalScrollBar()->setValue(horizontalScrollBar()->value() - (area.left() - tile.left()));
        else if (tile.right() > area.right())
            horizontalScrollBar()->setValue(horizontalScrollBar()->value() + tile.right() - area.right());
        if (tile.top() < area.top())
            verticalScrollBar()->setValue(verticalScrollBar()->value() - (area.top() - tile.top()));
        else if (tile.bottom() > area.bottom())
            verticalScrollBar()->setValue(verticalScrollBar()->value() + tile.bottom() - area.bottom());
    }
    viewport()->update();
}

int ModelView::rowHeaderWidth() const
{
    int width = fontMetrics().horizontalAdvance(tr("Layer %1").arg(std::max(layers() - 1, 0)));
    for (int l = 0; l < layers(); ++l)
        if (const QString note = layerNote(l); !note.isEmpty())
            width = std::max(width, fontMetrics().horizontalAdvance(note));
    return width + 16;
}

QString ModelView::layerNote(int layer) const
{
    const LayerFacts f = layer >= 0 && std::size_t(layer) < m_facts.size() ? m_facts[std::size_t(layer)] : LayerFacts{};
    return f.window > 0 ? tr("window %1").arg(f.window) : QString();
}

int ModelView::groupSize(int layer) const
{
    const LayerFacts f = layer >= 0 && std::size_t(layer) < m_facts.size() ? m_facts[std::size_t(layer)] : LayerFacts{};
    return keyValueGroupSize(f, heads());
}

QRect ModelView::groupFrame(int layer, int group) const
{
    const int size = groupSize(layer);
    return tileRect(layer, group * size).united(tileRect(layer, (group + 1) * size - 1));
}

QRectF ModelView::mapRect(int layer, int head) const
{
    const QRectF inner = QRectF(tileRect(layer, head)).adjusted(3, 3, -3, -3);
    if (!m_thumbs || !m_thumbs->sinkApart)
        return inner;
    const QRectF bar = sinkRect(layer, head);
    return inner.adjusted(bar.width() + 2, 0, 0, 0);
}

QRectF ModelView::sinkRect(int layer, int head) const
{
    if (!m_thumbs || !m_thumbs->sinkApart)
        return {};
    const QRectF inner = QRectF(tileRect(layer, head)).adjusted(3, 3, -3, -3);
    return QRectF(inner.left(), inner.top(), std::max(4.0, inner.width() / 14.0), inner.height());
}

std::optional<QLineF> ModelView::windowEdge(int layer, int head) const
{
    const LayerFacts f = layer >= 0 && std::size_t(layer) < m_facts.size() ? m_facts[std::size_t(layer)] : LayerFacts{};
    if (!m_thumbs)
        return std::nullopt;
    return attnscope::windowEdge(mapRect(layer, head), double(m_thumbs->queries), double(m_thumbs->keys), f.window,
                                 m_thumbs->sinkApart ? 1.0 : 0.0); // the sink bar: key 0 drawn apart
}

int ModelView::columnHeaderHeight() const
{
    return fontMetrics().height() + 8;
}

int ModelView::tileSize() const
{
    const int h = std::max(heads(), 1), l = std::max(layers(), 1);
    // Fill the view where the model is small; never below a readable size where it is large.
    const int byWidth = (viewport()->width() - rowHeaderWidth()) / h;
    const int byHeight = (viewport()->height() - columnHeaderHeight()) / l;
    return std::clamp(std::min(byWidth, byHeight), kMinTileSize, kMaxTileSize);
}

QRect ModelView::tileRect(int layer, int head) const
{
    const int t = tileSize();
    return QRect(rowHeaderWidth() + head * t - horizontalScrollBar()->value(),
                 columnHeaderHeight() + layer * t - verticalScrollBar()->value(), t, t);
}

std::pair<int, int> ModelView::tileAt(const QPoint &pos) const
{
    if (pos.x() < rowHeaderWidth() || pos.y() < columnHeaderHeight() || layers() == 0)
        return {-1, -1};
    const int t = tileSize();
    const int head = (pos.x() - rowHeaderWidth() + horizontalScrollBar()->value()) / t;
    const int layer = (pos.y() - columnHeaderHeight() + verticalScrollBar()->value()) / t;
    if (head < 0 || head >= heads() || layer < 0 || layer >= layers())
        return {-1, -1};
    return {layer, head};
}

void ModelView::updateScrollRange()
{
    const int t = tileSize();
    const int width = heads() * t, height = layers() * t;
    const int viewW = viewport()->width() - rowHeaderWidth(), viewH = viewport()->height() - columnHeaderHeight();
    horizontalScrollBar()->setRange(0, std::max(0, width - viewW));
    horizontalScrollBar()->setPageStep(std::max(1, viewW));
    horizontalScrollBar()->setSingleStep(std::max(1, t / 4));
    verticalScrollBar()->setRange(0, std::max(0, height - viewH));
    verticalScrollBar()->setPageStep(std::max(1, viewH));
    verticalScrollBar()->setSingleStep(std::max(1, t / 4));
}

void ModelView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateScrollRange();
}

void ModelView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void ModelView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    const QRect all = viewport()->rect();
    p.fillRect(all, Qt::white);
    if (!isFilled()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(all, Qt::AlignCenter,
                   m_progress < 0 ? tr("Computing\u2026") : tr("Computing the thumbnails… %1%").arg(m_progress));
        return;
    }
    const int rowHeader = rowHeaderWidth(), columnHeader = columnHeaderHeight();
    p.save();
    p.setClipRect(all.adjusted(rowHeader, columnHeader, 0, 0));
    for (int l = 0; l < layers(); ++l)
        for (int h = 0; h < heads(); ++h) {
            const QRect tile = tileRect(l, h);
            if (!tile.intersects(all))
                continue; // a 48 x 25 model: only the tiles in view are drawn
            const std::size_t index = std::size_t(l) * std::size_t(heads()) + std::size_t(h);
            p.drawImage(mapRect(l, h), m_thumbs->images[index]);
            if (m_thumbs->sinkApart && index < m_thumbs->sinks.size())
                p.drawImage(sinkRect(l, h), m_thumbs->sinks[index]);
            if (const auto edge = windowEdge(l, h)) {
                p.save();
                p.setClipRect(mapRect(l, h));
                p.setPen(windowEdgePen(1.5));
                p.drawLine(*edge);
                p.restore();
            }
            if (l == m_layer && h == m_head) {
                p.setPen(QPen(palette().color(QPalette::Highlight), 3));
                p.setBrush(Qt::NoBrush);
                p.drawRect(tile.adjusted(1, 1, -2, -2));
            }
        }
    // Each key/value head's query heads framed together, as the heads grid frames them.
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    for (int l = 0; l < layers(); ++l) {
        const int size = groupSize(l);
        if (size <= 1)
            continue;
        for (int g = 0; g * size < heads(); ++g) {
            const QRect frame = groupFrame(l, g);
            if (frame.intersects(all))
                paintKeyValueGroup(p, frame, g, tr("K/V %1").arg(g), small);
        }
    }
    p.setFont(font());
    p.restore();
    // Headers stay in view while the tiles scroll under them.
    const QColor headerBack(0xf2, 0xf2, 0xf2);
    p.fillRect(QRect(0, 0, all.width(), columnHeader), headerBack);
    p.fillRect(QRect(0, 0, rowHeader, all.height()), headerBack);
    p.setPen(palette().color(QPalette::WindowText));
    p.save();
    p.setClipRect(QRect(rowHeader, 0, all.width() - rowHeader, columnHeader));
    for (int h = 0; h < heads(); ++h) {
        const QRect tile = tileRect(0, h);
        p.drawText(QRect(tile.left(), 0, tile.width(), columnHeader), Qt::AlignCenter, tr("Head %1").arg(h));
    }
    p.restore();
    p.save();
    p.setClipRect(QRect(0, columnHeader, rowHeader, all.height() - columnHeader));
    for (int l = 0; l < layers(); ++l) {
        const QRect tile = tileRect(l, 0);
        const QString note = layerNote(l);
        if (note.isEmpty()) {
            p.drawText(QRect(4, tile.top(), rowHeader - 8, tile.height()), Qt::AlignVCenter | Qt::AlignLeft,
                       tr("Layer %1").arg(l));
            continue;
        }
        // A sliding-window layer: its label, and under it the window, in the band's colour.
        const int line = fontMetrics().height();
        const int top = tile.top() + (tile.height() - 2 * line) / 2;
        p.drawText(QRect(4, top, rowHeader - 8, line), Qt::AlignVCenter | Qt::AlignLeft, tr("Layer %1").arg(l));
        p.save();
        p.setPen(QColor(0x8a, 0x4b, 0x08));
        p.drawText(QRect(4, top + line, rowHeader - 8, line), Qt::AlignVCenter | Qt::AlignLeft, note);
        p.restore();
    }
    p.restore();
}

bool ModelView::activateAt(const QPoint &viewportPos)
{
    const auto [layer, head] = tileAt(viewportPos);
    if (layer < 0)
        return false;
    setCurrent(layer, head);
    emit headActivated(layer, head);
    return true;
}

bool ModelView::event(QEvent *event)
{
    // As in the heads grid: a press sent to the scroll area itself still activates a tile.
    if (event->type() == QEvent::MouseButtonPress) {
        auto *press = static_cast<QMouseEvent *>(event);
        if (press->button() == Qt::LeftButton && activateAt(viewport()->mapFrom(this, press->position().toPoint())))
            return true;
    }
    return QAbstractScrollArea::event(event);
}

QString ModelView::tileToolTip(int layer, int head) const
{
    QString text = tr("Layer %1, head %2").arg(layer).arg(head);
    const LayerFacts f = layer >= 0 && std::size_t(layer) < m_facts.size() ? m_facts[std::size_t(layer)] : LayerFacts{};
    if (!f.isKnown())
        return text;
    text += QLatin1Char('\n') + (f.kvHeads > 0 && f.kvHeads < f.queryHeads
                                     ? tr("%1 query heads sharing %2 key/value heads").arg(f.queryHeads).arg(f.kvHeads)
                                     : tr("%1 heads, each with its own keys and values").arg(f.queryHeads));
    if (f.window > 0)
        text += QLatin1Char('\n') + tr("sliding window of %1 tokens").arg(f.window);
    if (f.scale > 0.0)
        text += QLatin1Char('\n') + tr("scores scaled by %1").arg(f.scale, 0, 'g', 6);
    return text;
}

bool ModelView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        const auto [layer, head] = tileAt(help->pos());
        if (layer >= 0)
            QToolTip::showText(help->globalPos(), tileToolTip(layer, head), viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

void ModelView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton)
        activateAt(event->position().toPoint());
}

} // namespace attnscope
