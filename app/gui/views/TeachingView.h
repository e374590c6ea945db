#pragma once

#include "app/render/ShownAttention.h"
#include "app/render/TeachingRenderer.h"

#include <QTextBrowser>

namespace attnscope {

// The computation step by step for one head (TeachingRenderer's HTML); a selected (query, key)
// cell is explained with its numbers. The tensors of a step stand side by side where the view is
// wide enough, and a click on a cell of a Tq x Tk table selects that cell (cellClicked).
class TeachingView : public QTextBrowser
{
    Q_OBJECT

public:
    explicit TeachingView(QWidget *parent = nullptr);

    // Only a source with intermediate tensors (a project) has steps to show.
    void setAttention(ShownAttention shown);
    void setHead(int head);
    void setSelection(int query, int key);
    // Under RoPE, the scores without the rotation beside the head's own (the "compare" link).
    void setCompareWithoutRope(bool compare);
    bool comparesWithoutRope() const { return m_compareWithoutRope; }
    // The HTML shown (tests read it); built now if it was left for later.
    QString html();
    // At most this many rows/columns of a matrix are printed; the rest is elided.
    static constexpr int kMaxShown = TeachingRenderer::kMaxShown;
    // The room the view gives a line, in characters (TeachingRenderer::setRoom).
    double room() const;

signals:
    void cellClicked(int query, int key);

protected:
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    // Builds the HTML now when visible, else on the next show: a hidden view costs nothing.
    void rebuild();
    void build();

    ShownAttention m_shown;
    int m_head = 0;
    int m_query = 0;
    int m_key = 0;
    QString m_html;
    bool m_dirty = false;
    bool m_compareWithoutRope = false;
    double m_builtRoom = 0.0;
};

} // namespace attnscope
