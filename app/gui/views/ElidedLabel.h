#pragma once

#include <QFrame>

class QTimer;

namespace attnscope {

// One line of text for the status bar that never pushes the window wider or runs under its
// neighbours: where the text does not fit it ends in "…", and its tooltip holds it whole.
// Also shows timed messages (QStatusBar::showMessage's, which are cut off without a word).
class ElidedLabel : public QFrame
{
    Q_OBJECT

public:
    explicit ElidedLabel(QWidget *parent = nullptr);

    QString text() const { return m_text; } // whole
    QString shownText() const;              // as it fits now
    // The tooltip is the text, unless setToolTip() gives another after this.
    void setText(const QString &text);
    void clear();
    // Shows `text`, and clears it after timeoutMs (0: until something replaces it).
    void showMessage(const QString &text, int timeoutMs = 0);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString m_text;
    QTimer *m_timer;
};

} // namespace attnscope
