#include "app/gui/views/PlainText.h"

#include <QLabel>
#include <QTextDocument>

namespace attnscope {

QLabel *plainLabel(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setTextFormat(Qt::PlainText);
    label->setText(text);
    return label;
}

QMessageBox *plainMessageBox(QMessageBox::Icon icon, const QString &title, const QString &text,
                             QMessageBox::StandardButtons buttons, QWidget *parent)
{
    // The format before the text: a rich guess would load its images as the box is built.
    auto *box = new QMessageBox(icon, title, QString(), buttons, parent);
    box->setTextFormat(Qt::PlainText);
    box->setText(text);
    return box;
}

void setPlainInformativeText(QMessageBox *box, const QString &text)
{
    // QMessageBox's informative label does not follow setTextFormat (Qt 6.4): it is found by
    // the name Qt gives it and set plain before the text reaches it.
    box->setInformativeText(QString(QChar(' ')));
    if (auto *label = box->findChild<QLabel *>(QStringLiteral("qt_msgbox_informativelabel")))
        label->setTextFormat(Qt::PlainText);
    box->setInformativeText(text);
}

QString plainToolTip(const QString &text)
{
    if (!Qt::mightBeRichText(text))
        return text; // shown as plain text by Qt already
    // white-space: pre keeps what a plain tooltip keeps: line breaks, runs of spaces, no wrapping.
    return QStringLiteral("<p style='white-space:pre'>") + text.toHtmlEscaped() + QStringLiteral("</p>");
}

} // namespace attnscope
