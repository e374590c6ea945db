#pragma once

#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QCoreApplication>
#include <QFont>
#include <QPoint>
#include <QRectF>
#include <QString>

#include <memory>
#include <optional>

class QPainter;
class QTextDocument;

namespace attnscope {

// The computation step by step for one head, as the tutorials print it: every tensor with its
// shape, X -> Q, K, V -> split heads -> QKᵀ -> scaled -> masked -> softmax -> ·V -> concat
// -> ·W_O, and the selected (query, key) cell explained with its numbers. As HTML (the
// teaching widget shows it) and painted with QTextDocument onto any QPainter (figures).
class TeachingRenderer
{
    Q_DECLARE_TR_FUNCTIONS(TeachingRenderer)

public:
    // head, query and key are clamped to the trace. interactive (the step view): add the "select
    // a cell" hint and the tutorial's 3-D weighted values tensor (WeightedValuesStep), and make
    // each cell of the Tq x Tk tables a link "cell:QUERY,KEY" that selects that cell.
    TeachingRenderer(const Project &project, const AttentionTrace &trace, int head, int query, int key,
                     bool interactive = false);

    QString html() const;
    // The room a line has, in characters (0: one table a line). Where the tensors of one step fit
    // in it (Q_h, K_h, V_h; the scores, masked and weights), they are laid side by side.
    void setRoom(double characters) { m_room = characters; }
    // Under RoPE, also lay the scores the head would have without the rotation beside its own
    // (the step view's "compare" link, kLinkCompareRope, asks for it).
    void setCompareWithoutRope(bool compare) { m_compareWithoutRope = compare; }
    static inline const QString kLinkCompareRope = QStringLiteral("compare:rope");
    // The anchor of the RoPE step (QTextBrowser::scrollToAnchor).
    static inline const QString kAnchorRope = QStringLiteral("rope");
    // The cell a link of html() selects ("cell:2,5": query 2, key 5), or nothing.
    static std::optional<QPoint> cellOfLink(const QString &link);
    int head() const { return m_head; }
    int query() const { return m_query; }
    int key() const { return m_key; }
    // The size of the pipeline laid out at this width (wider if a table needs it).
    QSizeF naturalSize(const QFont &font, double width) const;
    // Lays the pipeline out at target's width and scales it down to fit if it is larger.
    void paint(QPainter &painter, const QRectF &target, const QFont &font) const;

    // At most this many rows/columns of a matrix are printed; the rest is elided.
    static constexpr int kMaxShown = 12;

private:
    QString explanation() const;
    std::unique_ptr<QTextDocument> document(const QFont &font, double width) const;

    const Project &m_project;
    const AttentionTrace &m_trace;
    int m_head = 0;
    int m_query = 0;
    int m_key = 0;
    bool m_interactive = false;
    bool m_compareWithoutRope = false;
    double m_room = 0.0;
};

} // namespace attnscope
