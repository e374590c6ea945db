#pragma once

#include <QFont>
#include <QList>
#include <QObject>
#include <QPointer>

class QAction;
class QDockWidget;
class QMainWindow;
class QShortcut;

namespace attnscope {

// View > Presentation Mode (F11; Esc leaves it): the window full screen with every text
// kFontScale times larger, the heatmaps' labels and values included (they follow the widgets'
// fonts), and the docks put away so that the views have the screen, for a lesson on a projector.
// Leaving it restores the window's state, fonts and docks.
class PresentationMode : public QObject
{
    Q_OBJECT

public:
    static constexpr double kFontScale = 1.5;

    explicit PresentationMode(QMainWindow *window);

    QAction *action() const { return m_action; }
    bool isOn() const { return m_on; }
    void setOn(bool on);

private:
    QMainWindow *m_window;
    QAction *m_action;
    QShortcut *m_leave;
    bool m_on = false;
    Qt::WindowStates m_stateBefore;
    QFont m_fontBefore;
    bool m_fontWasSet = false;
    QList<QPointer<QDockWidget>> m_hidden; // the docks shown before
};

} // namespace attnscope
