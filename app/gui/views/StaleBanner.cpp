#include "app/gui/views/StaleBanner.h"

#include "app/gui/views/PlainText.h"

#include <QGraphicsColorizeEffect>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace attnscope {

StaleBanner::StaleBanner(QWidget *greyed, QWidget *parent)
    : QWidget(parent), m_greyed(greyed), m_label(plainLabel()), m_button(new QPushButton)
{
    m_label->setObjectName(QStringLiteral("staleBanner"));
    m_label->setWordWrap(true);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_label->setStyleSheet(
        QStringLiteral("QLabel { background: #fff4e5; color: #7a3e00; border: 1px solid #e0a060; padding: 6px; }"));
    m_button->setObjectName(QStringLiteral("reopenButton"));
    m_button->hide();
    connect(m_button, &QPushButton::clicked, this, &StaleBanner::buttonClicked);
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(4);
    row->addWidget(m_label, 1);
    row->addWidget(m_button, 0, Qt::AlignVCenter);
    auto *grey = new QGraphicsColorizeEffect(greyed);
    grey->setColor(QColor(0x80, 0x80, 0x80));
    grey->setStrength(0.85);
    grey->setEnabled(false);
    greyed->setGraphicsEffect(grey);
    hide();
}

void StaleBanner::setStale(const QString &headline, const QString &reason, const QString &button,
                           const QString &buttonTip)
{
    m_stale = true;
    m_reason = reason;
    m_label->setText(headline + QLatin1Char('\n') + reason);
    m_button->setText(button);
    m_button->setToolTip(buttonTip);
    m_button->setVisible(!button.isEmpty());
    m_greyed->graphicsEffect()->setEnabled(true);
    show();
}

void StaleBanner::clear()
{
    m_stale = false;
    m_reason.clear();
    m_button->hide();
    m_greyed->graphicsEffect()->setEnabled(false);
    hide();
}

} // namespace attnscope
