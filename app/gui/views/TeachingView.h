#pragma once

#include "app/gui/document/ComputeController.h"

#include <QTextBrowser>

namespace attnscope {

// The computation step by step for one head, as the tutorials print it: every tensor with its
// shape, X -> Q, K, V -> split heads -> QKᵀ -> scaled -> masked -> softmax -> ·V -> concat
// -> ·W_O. A selected (query, key) cell is explained with its numbers.
class TeachingView : public QTextBrowser
{
    Q_OBJECT

public:
    explicit TeachingView(QWidget *parent = nullptr);

    void setResult(ComputedTracePtr result);
    void setHead(int head);
    void setSelection(int query, int key);
    // The HTML shown (tests read it).
    QString html() const { return m_html; }
    // At most this many rows/columns of a matrix are printed; the rest is elided.
    static constexpr int kMaxShown = 12;

private:
    void rebuild();
    QString explanation() const;

    ComputedTracePtr m_result;
    int m_head = 0;
    int m_query = 0;
    int m_key = 0;
    QString m_html;
};

} // namespace attnscope
