#pragma once

#include <QWidget>

class QLabel;
class QPushButton;

namespace attnscope {

// Over the views: says why they show something older than what their source holds now (a
// computation or a model run that failed, a file that changed on disk), greys the views while
// it shows, and offers one button where the source has a remedy (Reopen).
class StaleBanner : public QWidget
{
    Q_OBJECT

public:
    // `greyed`: the widget greyed while the banner shows (the views).
    explicit StaleBanner(QWidget *greyed, QWidget *parent = nullptr);

    // headline: the first line; reason: why. button: the remedy's name (none when empty), and
    // buttonTip what it does.
    void setStale(const QString &headline, const QString &reason, const QString &button = {},
                  const QString &buttonTip = {});
    void clear();
    bool isStale() const { return m_stale; }
    QString reason() const { return m_reason; }

signals:
    void buttonClicked();

private:
    QWidget *m_greyed;
    QLabel *m_label;
    QPushButton *m_button;
    bool m_stale = false;
    QString m_reason;
};

} // namespace attnscope
