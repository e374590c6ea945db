#pragma once

#include <QObject>
#include <QString>

class QLabel;
class QMainWindow;
class QProgressBar;

namespace attnscope {

class ElidedLabel;

// The window's status bar, which every source writes to: timed messages, a notice (a fallback,
// a failure) until the source clears it, what computes the attention (or which file or model is
// shown), how long it took, and a progress bar for long computations. It also says errors in a
// box and keeps the last one (lastError()), for the tests and the command line.
class WindowStatus : public QObject
{
    Q_OBJECT

public:
    explicit WindowStatus(QMainWindow *window);

    // Shows `text`, and clears it after timeoutMs (0: until something replaces it).
    void message(const QString &text, int timeoutMs = 0);
    // Empty: hidden. The tooltip holds the whole text, or `toolTip` where one is given.
    void setNotice(const QString &text, const QString &toolTip = {});
    QString notice() const;
    void setBackend(const QString &text);
    QString backend() const;
    void setTime(const QString &text);
    QProgressBar *progressBar() const { return m_progress; }
    QString text() const; // backend | time | notice

    // Says `message` in a window-modal box (the event loop and the tests go on) and in the bar.
    void error(const QString &message);
    QString lastError() const { return m_lastError; }
    void setLastError(const QString &message) { m_lastError = message; }

private:
    QMainWindow *m_window;
    QString m_lastError;
    ElidedLabel *m_message;
    ElidedLabel *m_notice;
    ElidedLabel *m_backend;
    QLabel *m_time;
    QProgressBar *m_progress;
};

} // namespace attnscope
