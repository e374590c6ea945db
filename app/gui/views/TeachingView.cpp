#include "app/gui/views/TeachingView.h"

#include "app/gui/views/BatchBar.h"

#include <QFontMetricsF>
#include <QScrollBar>
#include <QUrl>

#include <algorithm>
#include <cmath>

namespace attnscope {

TeachingView::TeachingView(QWidget *parent) : QTextBrowser(parent)
{
    setOpenLinks(false);
    // Between words only: never inside a number (table cells do not wrap at all).
    setWordWrapMode(QTextOption::WordWrap);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        if (url.toString() == TeachingRenderer::kLinkCompareRope) {
            setCompareWithoutRope(!m_compareWithoutRope);
            return;
        }
        const auto cell = TeachingRenderer::cellOfLink(url.toString());
        if (!cell)
            return;
        setSelection(cell->y(), cell->x());
        emit cellClicked(cell->y(), cell->x());
    });
}

double TeachingView::room() const
{
    return viewport()->width() / std::max(1.0, QFontMetricsF(font()).averageCharWidth());
}

void TeachingView::resizeEvent(QResizeEvent *event)
{
    QTextBrowser::resizeEvent(event);
    // Wider or narrower by more than a number: the tables may stand side by side now, or not.
    if (std::abs(room() - m_builtRoom) > 7.0)
        rebuild();
}

void TeachingView::setAttention(ShownAttention shown)
{
    m_shown = std::move(shown);
    rebuild();
}

void TeachingView::setHead(int head)
{
    m_head = head;
    rebuild();
}

void TeachingView::setSelection(int query, int key)
{
    m_query = query;
    m_key = key;
    rebuild();
}

void TeachingView::setCompareWithoutRope(bool compare)
{
    if (compare == m_compareWithoutRope)
        return;
    m_compareWithoutRope = compare;
    rebuild();
}

QString TeachingView::html()
{
    if (m_dirty)
        build();
    return m_html;
}

void TeachingView::showEvent(QShowEvent *event)
{
    QTextBrowser::showEvent(event);
    if (m_dirty)
        build();
}

void TeachingView::rebuild()
{
    m_dirty = true;
    if (isVisible())
        build();
}

void TeachingView::build()
{
    m_dirty = false;
    const LayerTensors *tensors = m_shown.shownTensors();
    if (!tensors || tensors->trace.heads() == 0) {
        // A source that computes tensors again may have the weights alone, and says why.
        const LayerMaps *maps = m_shown.maps && m_shown.maps->layer == m_shown.layer ? m_shown.maps.get() : nullptr;
        m_html = maps && !maps->noTensors.isEmpty() ? QStringLiteral("<p>%1</p>").arg(maps->noTensors.toHtmlEscaped())
                                                    : tr("<p>Computing\u2026</p>");
        setHtml(m_html);
        return;
    }
    TeachingRenderer renderer(tensors->project, tensors->trace, m_head, m_query, m_key, true);
    m_builtRoom = room();
    renderer.setRoom(m_builtRoom);
    renderer.setCompareWithoutRope(m_compareWithoutRope);
    m_head = renderer.head();
    m_query = renderer.query();
    m_key = renderer.key();
    m_html = batchShapesHtml(tensors->project) + renderer.html(); // the 4-D shapes first, for a batch
    const int scroll = verticalScrollBar()->value();
    setHtml(m_html);
    verticalScrollBar()->setValue(scroll);
}

} // namespace attnscope
