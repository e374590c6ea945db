#pragma once

#include "app/render/AlignmentRenderer.h"

#include <QWidget>

#include <vector>

class QCheckBox;
class QComboBox;

namespace attnscope {

class AlignmentCanvas;

// The alignment view of a translation's cross-attention (painted by AlignmentRenderer): source
// tokens above, target tokens below, one line per pair. Above it a head selector (the mean of
// the heads first), "Shift by one step" and "Hide </s>"; hovering a token shows only its lines
// and a tooltip with its strongest pairs.
class AlignmentView : public QWidget
{
    Q_OBJECT

public:
    explicit AlignmentView(QWidget *parent = nullptr);

    // heads: the H heads of one decoder layer's cross-attention, each T x S; sourceEos: the
    // source end-of-sentence column, or -1. The head selected before is kept where it exists.
    void setCross(std::vector<MatrixF> heads, QStringList sourceLabels, QStringList targetLabels, int sourceEos);
    // -1: the mean of the heads. Out of range: ignored.
    void setHead(int head);
    int head() const { return m_head; }
    void setShiftByOne(bool shift);
    void setHideEndOfSentence(bool hide);

    // The figure as shown (without hover), for export.
    void renderTo(QPainter &painter, const QRectF &target) const;
    // The drawn rows (T, or T-1 shifted), and where hover and the anchors are, in the canvas.
    int rows() const;
    QWidget *canvas() const;
    int hoverTarget() const;
    int hoverSource() const;
    QPointF targetAnchor(int row) const;
    QPointF sourceAnchor(int source) const;

signals:
    void headChanged(int head);

private:
    AlignmentOptions options() const;
    void rebuild();

    std::vector<MatrixF> m_heads;
    QStringList m_sourceLabels, m_targetLabels;
    int m_sourceEos = -1;
    int m_head = -1;
    QComboBox *m_headBox;
    QCheckBox *m_shift;
    QCheckBox *m_hideEos;
    AlignmentCanvas *m_canvas;
};

} // namespace attnscope
