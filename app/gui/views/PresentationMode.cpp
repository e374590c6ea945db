#include "app/gui/views/PresentationMode.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QShortcut>

namespace attnscope {

PresentationMode::PresentationMode(QMainWindow *window)
    : QObject(window), m_window(window), m_action(new QAction(tr("&Presentation Mode"), this)),
      m_leave(new QShortcut(QKeySequence(Qt::Key_Escape), window))
{
    m_action->setObjectName(QStringLiteral("presentationMode"));
    m_action->setCheckable(true);
    m_action->setShortcut(QKeySequence(Qt::Key_F11));
    m_action->setStatusTip(tr("Full screen with larger text, for a projector (F11 or Esc to leave)"));
    window->addAction(m_action); // F11 works with the menu bar hidden too
    connect(m_action, &QAction::toggled, this, &PresentationMode::setOn);
    m_leave->setEnabled(false);
    connect(m_leave, &QShortcut::activated, this, [this] { setOn(false); });
}

void PresentationMode::setOn(bool on)
{
    if (on == m_on)
        return;
    m_on = on;
    if (m_action->isChecked() != on)
        m_action->setChecked(on);
    m_leave->setEnabled(on);
    if (on) {
        m_stateBefore = m_window->windowState();
        m_fontWasSet = m_window->testAttribute(Qt::WA_SetFont);
        m_fontBefore = m_window->font();
        QFont larger = m_fontBefore;
        if (larger.pointSizeF() > 0)
            larger.setPointSizeF(larger.pointSizeF() * kFontScale);
        else
            larger.setPixelSize(int(larger.pixelSize() * kFontScale));
        m_window->setFont(larger); // every child without a font of its own follows
        m_hidden.clear();
        for (QDockWidget *dock : m_window->findChildren<QDockWidget *>())
            if (dock->isVisible()) {
                m_hidden << dock;
                dock->hide();
            }
        m_window->setWindowState(m_stateBefore | Qt::WindowFullScreen);
    } else {
        m_window->setFont(m_fontWasSet ? m_fontBefore : QFont());
        if (!m_fontWasSet)
            m_window->setAttribute(Qt::WA_SetFont, false);
        for (const QPointer<QDockWidget> &dock : std::as_const(m_hidden))
            if (dock)
                dock->show();
        m_hidden.clear();
        m_window->setWindowState(m_stateBefore & ~Qt::WindowFullScreen);
    }
}

} // namespace attnscope
