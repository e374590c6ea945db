#pragma once

#include "app/render/ShownAttention.h"

#include <QColor>
#include <QCoreApplication>
#include <QFont>

#include <QPointF>
#include <QRectF>
#include <vector>

class QPainter;

namespace attnscope {

struct HeadViewOptions {
    int head = 0;
    bool overlay = false;          // every head at once, each in its own colour
    int hoverQuery = -1;           // only this query's lines (-1: all)
    int hoverKey = -1;             // only the lines into this key (-1: all); a hovered query wins
    std::vector<bool> hiddenHeads; // overlay: heads switched off (their legend entry stays, hollow)
    QFont font;
};

// The head view (BertViz, tensor2tensor): queries on the left, keys on the right, a line from
// query i to key j weighted by attention. Paints onto any QPainter; the widget and the
// exporter share it.
class HeadViewRenderer
{
    Q_DECLARE_TR_FUNCTIONS(HeadViewRenderer)

public:
    // shown's layer is read (weights() is set) or nothing is painted.
    HeadViewRenderer(const ShownAttention &shown, const HeadViewOptions &options);

    void paint(QPainter &painter, const QRectF &target) const;
    QPointF queryAnchor(const QRectF &target, int query) const;
    QPointF keyAnchor(const QRectF &target, int key) const;
    // The query whose label or anchor is at pos, or -1.
    int queryAt(const QRectF &target, const QPointF &pos) const;
    // The key whose label or anchor is at pos, or -1.
    int keyAt(const QRectF &target, const QPointF &pos) const;
    // Overlay: the head whose legend entry is at pos, or -1.
    int legendHeadAt(const QRectF &target, const QPointF &pos) const;
    bool headHidden(int head) const;

    // Okabe-Ito: distinguishable with colour-vision deficiencies.
    static QColor headColor(int head);
    // Above this many query x key pairs only one query's lines are drawn (the hovered one,
    // else the first): a million lines say nothing and take seconds.
    static constexpr Eigen::Index kDenseLines = 40000;

private:
    double top(const QRectF &target) const;
    double rowHeight(const QRectF &target, Eigen::Index n) const;
    std::vector<QRectF> legendEntries(const QRectF &target) const;

    int heads() const;

    const ShownAttention &m_shown;
    const std::vector<MatrixF> *m_weights; // of the shown layer; null before it is read
    QStringList m_queryLabels, m_keyLabels;
    HeadViewOptions m_options;
};

} // namespace attnscope
