#pragma once

#include "app/render/HeadViewRenderer.h"

#include <QWidget>

#include <vector>

namespace attnscope {

// The head view (painted by HeadViewRenderer): one head, or every head overlaid in its own
// colour. Hovering a query shows only its lines, hovering a key only the lines into it; in the
// overlay, clicking a head in the legend switches its lines off and on.
class HeadLinesView : public QWidget
{
    Q_OBJECT

public:
    explicit HeadLinesView(QWidget *parent = nullptr);

    void setAttention(ShownAttention shown);
    void setHead(int head);
    void setOverlay(bool overlay);
    // Overlay: a head switched off draws no lines; clicking its legend entry toggles it.
    void setHeadShown(int head, bool shown);
    bool isHeadShown(int head) const;
    int hoverQuery() const { return m_hoverQuery; }
    int hoverKey() const { return m_hoverKey; }
    bool overlay() const { return m_overlay; }
    static QColor headColor(int head) { return HeadViewRenderer::headColor(head); }
    QPointF queryAnchor(int query) const;
    QPointF keyAnchor(int key) const;

    QSize sizeHint() const override { return {420, 420}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    HeadViewOptions options() const;

    ShownAttention m_shown;
    int m_head = 0;
    bool m_overlay = false;
    int m_hoverQuery = -1;
    int m_hoverKey = -1;
    std::vector<bool> m_hiddenHeads;
};

} // namespace attnscope
