#pragma once

#include <QMessageBox>
#include <QString>

class QLabel;
class QWidget;

namespace attnscope {

// Text that comes from a file, a model folder, a device driver or the keyboard is shown as it
// is written, never as HTML. Qt guesses: a QLabel's and a QMessageBox's default AutoText and
// every tooltip (Qt::mightBeRichText) render a string that starts like a tag as rich text, so a
// project value quoting `<img src=/dev/zero>` had the error box read /dev/zero until memory ran
// out, and `<b>` turned bold. Every label, box and tooltip of the window is made here.

// A label that shows its text as plain text (word-wrapped where asked).
QLabel *plainLabel(const QString &text = {}, QWidget *parent = nullptr);

// A message box whose text (and informative text, set with setPlainInformativeText) is plain.
QMessageBox *plainMessageBox(QMessageBox::Icon icon, const QString &title, const QString &text,
                             QMessageBox::StandardButtons buttons, QWidget *parent);
void setPlainInformativeText(QMessageBox *box, const QString &text);

// A tooltip (QWidget::setToolTip, QAction::setToolTip, Qt::ToolTipRole, QToolTip::showText)
// that shows `text` as written: text Qt would take for HTML is escaped, and its line breaks and
// spaces kept.
QString plainToolTip(const QString &text);

} // namespace attnscope
