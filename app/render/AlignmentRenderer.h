#pragma once

#include "core/Tensor.h"

#include <QCoreApplication>
#include <QFont>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QStringList>

#include <vector>

class QPainter;

namespace attnscope {

struct AlignmentOptions {
    int head = -1; // -1: the mean of the heads
    // The decoder's row i predicts target token i+1: row i is drawn under that token's label and
    // the last row (after </s>) is dropped, T-1 rows labelled target[1..T-1]. Without it, row i is
    // labelled target[i], the decoder's input (the start token first).
    bool shiftByOne = false;
    // The source end-of-sentence column is not drawn and each row is renormalised to sum to 1
    // over the remaining columns (that column often takes most of a row's weight).
    bool hideEndOfSentence = false;
    int hoverTarget = -1; // only this row's lines, highlighted (-1: all)
    int hoverSource = -1; // only the lines into this source token (-1: all); a hovered row wins
    QFont font;
};

// The alignment view of an encoder-decoder model's cross-attention: the source tokens in a row
// above, the target tokens in a row below, a line from each target token to each source token
// weighted by attention (as in the head view, and as the tutorials draw translation alignments).
// Paints onto any QPainter; the widget and figure export share it.
//
// Indices: a row is a drawn target row (0..rows()-1, decoder row i whatever the labelling); a
// source index is a column of the given matrices (0..S-1), also when the end-of-sentence column
// is hidden (it then has no anchor and is never hit).
class AlignmentRenderer
{
    Q_DECLARE_TR_FUNCTIONS(AlignmentRenderer)

public:
    // heads: the H heads of one layer, each T x S (T decoder positions, S source tokens).
    // sourceLabels: S readable labels; targetLabels: T (the decoder's input, start token first).
    // sourceEos: the source end-of-sentence column, or -1. Inconsistent input paints error() and
    // has no rows.
    AlignmentRenderer(const std::vector<MatrixF> &heads, const QStringList &sourceLabels,
                      const QStringList &targetLabels, int sourceEos, const AlignmentOptions &options);

    // Empty when the input is consistent (or empty: nothing to draw); otherwise one line naming
    // what is wrong.
    const QString &error() const { return m_error; }
    void setHover(int target, int source);

    void paint(QPainter &painter, const QRectF &target) const;
    // Where row's / source's lines end; a null point for a hidden or missing one.
    QPointF targetAnchor(const QRectF &target, int row) const;
    QPointF sourceAnchor(const QRectF &target, int source) const;
    // The row / source whose label or anchor is at pos, or -1.
    int targetAt(const QRectF &target, const QPointF &pos) const;
    int sourceAt(const QRectF &target, const QPointF &pos) const;
    // Where a label is drawn (rotated labels: their bounding box); empty when it is not drawn
    // (hidden, or left out where the labels are too many to draw each one).
    QRectF targetLabelRect(const QRectF &target, int row) const;
    QRectF sourceLabelRect(const QRectF &target, int source) const;

    int rows() const { return int(m_shown.rows()); }
    int sources() const { return int(m_sourceLabels.size()); }
    QString targetLabel(int row) const;
    QString sourceLabel(int source) const;
    // The value drawn for (row, source): the head or the mean of the heads, renormalised when
    // the end-of-sentence column is hidden (0 for that column).
    double weight(int row, int source) const;
    // "猫 → cat: 0.62": the target token, the source token it attends to, the weight drawn.
    QString describe(int row, int source) const;

private:
    struct Band {
        bool rotated = false;
        int step = 1;         // every step-th label drawn
        double height = 0;    // of the label band
        double slot = 0;      // width per token
        double thickness = 0; // of a rotated label across the row
    };
    QString validate(const std::vector<MatrixF> &heads, int sourceEos) const;
    Band band(const QRectF &target, const QStringList &labels, int count) const;
    Band sourceBand(const QRectF &target) const;
    Band targetBand(const QRectF &target) const;
    QStringList shownSourceLabels() const;
    QStringList shownTargetLabels() const;
    int shownColumn(int source) const; // -1 when hidden
    QRectF labelRect(const QRectF &target, const Band &b, const QPointF &anchor, bool above) const;

    QString m_error;
    MatrixF m_shown;                            // rows() x shown columns, as drawn
    std::vector<int> m_columns;                 // shown column -> source index
    QStringList m_sourceLabels, m_targetLabels; // display text, all S and T
    AlignmentOptions m_options;
};

} // namespace attnscope
