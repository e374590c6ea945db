#pragma once

#include <QDialog>
#include <QKeySequence>
#include <QList>
#include <QString>

#include <functional>

class QMenu;
class QWidget;

namespace attnscope {

// One row of the Keyboard Shortcuts dialog: where the action is ("File"), what it is called
// ("Save"), and its keys as the platform writes them.
struct ShortcutEntry {
    QString menu;
    QString action;
    QString keys;
};

// The shortcuts of every action reachable from the window's menu bar (submenus included) and
// of actions added to the window directly, in menu order: generated from the actions, so the
// list can never disagree with them.
QList<ShortcutEntry> collectShortcuts(QWidget *window);

// Help > About: version, Qt, the compute backend and device (from `backend`, asked each time
// the dialog opens), the licence.
class AboutDialog : public QDialog
{
    Q_OBJECT
public:
    AboutDialog(const QString &backend, QWidget *parent = nullptr);
    QString text() const { return m_text; }

private:
    QString m_text;
};

// Fills the Help menu: the guide (bundled HTML, offline), keyboard shortcuts and About.
void fillHelpMenu(QMenu *help, QWidget *window, std::function<QString()> backend);

// Help > Guide: the bundled page (":/guide/guide.html", or guide_LANG.html where there is one)
// in a browser that never goes online.
QDialog *createGuideDialog(QWidget *parent);
QDialog *createShortcutsDialog(QWidget *window);

} // namespace attnscope
