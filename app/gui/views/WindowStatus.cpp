#include "app/gui/views/WindowStatus.h"

#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/PlainText.h"

#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>

namespace attnscope {

WindowStatus::WindowStatus(QMainWindow *window)
    : QObject(window), m_window(window), m_message(new ElidedLabel), m_notice(new ElidedLabel),
      m_backend(new ElidedLabel), m_time(plainLabel()), m_progress(new QProgressBar)
{
    // Long texts (a file's name, a fallback's reason, an error) end in "…" and are whole in
    // the tooltip: none widens the window or runs under another.
    m_message->setObjectName(QStringLiteral("statusMessage"));
    m_notice->setObjectName(QStringLiteral("statusNotice"));
    m_notice->setStyleSheet(QStringLiteral("color: #b35900"));
    m_notice->hide();
    m_backend->setText(tr("Backend: starting\u2026"));
    QStatusBar *bar = window->statusBar();
    bar->addWidget(m_message, 1);
    bar->addWidget(m_notice, 2);
    bar->addPermanentWidget(m_backend);
    bar->addPermanentWidget(m_time);
    m_progress->setObjectName(QStringLiteral("computeProgress"));
    m_progress->setFixedWidth(m_progress->fontMetrics().horizontalAdvance(tr("Computing %p%")) + 60);
    m_progress->setFormat(tr("Computing %p%"));
    m_progress->hide();
    bar->addPermanentWidget(m_progress);
}

void WindowStatus::message(const QString &text, int timeoutMs)
{
    m_message->showMessage(text, timeoutMs);
}

void WindowStatus::setNotice(const QString &text, const QString &toolTip)
{
    m_notice->setText(text);
    if (!toolTip.isEmpty())
        m_notice->setToolTip(plainToolTip(toolTip));
    m_notice->setVisible(!text.isEmpty());
}

QString WindowStatus::notice() const
{
    return m_notice->text();
}

void WindowStatus::setBackend(const QString &text)
{
    m_backend->setText(text);
}

QString WindowStatus::backend() const
{
    return m_backend->text();
}

void WindowStatus::setTime(const QString &text)
{
    m_time->setText(text);
}

QString WindowStatus::text() const
{
    return QStringList{m_backend->text(), m_time->text(), m_notice->text()}.join(QStringLiteral(" | "));
}

void WindowStatus::error(const QString &message)
{
    m_lastError = message;
    m_message->showMessage(message);
    // Window-modal but not blocking: the event loop (and the tests) go on.
    auto *box = plainMessageBox(QMessageBox::Warning, tr("AttnScope"), message, QMessageBox::Ok, m_window);
    box->setObjectName(QStringLiteral("errorBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace attnscope
