#pragma once

#include "app/gui/document/ComputeController.h"
#include "app/render/HeadViewRenderer.h"

#include <QWidget>

namespace attnscope {

// The head view (painted by HeadViewRenderer): one head, or every head overlaid in its own
// colour. Hovering a query shows only its lines.
class HeadLinesView : public QWidget
{
    Q_OBJECT

public:
    explicit HeadLinesView(QWidget *parent = nullptr);

    void setResult(ComputedTracePtr result);
    void setHead(int head);
    void setOverlay(bool overlay);
    bool overlay() const { return m_overlay; }
    static QColor headColor(int head) { return HeadViewRenderer::headColor(head); }
    QPointF queryAnchor(int query) const;
    QPointF keyAnchor(int key) const;

    QSize sizeHint() const override { return {420, 420}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    HeadViewOptions options() const;

    ComputedTracePtr m_result;
    int m_head = 0;
    bool m_overlay = false;
    int m_hoverQuery = -1;
};

} // namespace attnscope
