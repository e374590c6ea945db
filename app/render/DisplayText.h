#pragma once

#include <QByteArray>
#include <QString>

#include <string>

namespace attnscope {

// Text from a project (token labels, titles) as it is drawn. C0 control characters and DEL
// become their visible Unicode "control pictures" (ESC -> U+241B), so a control character in
// a token is seen rather than swallowed, and no figure format receives a character it cannot
// hold (XML 1.0, and so SVG, forbids them).
QString displayText(const QString &text);
QString displayText(const std::string &text);

// XML 1.0 text with every character it forbids (C0 controls other than tab, newline and
// carriage return; U+FFFE, U+FFFF) removed. The last guard before an SVG is written.
QByteArray xmlSafe(const QByteArray &utf8);

} // namespace attnscope
