#include "app/render/DisplayText.h"

namespace attnscope {

QString displayText(const QString &text)
{
    QString out = text;
    for (QChar &c : out) {
        const char16_t u = c.unicode();
        if (u < 0x20)
            c = QChar(char16_t(0x2400 + u));
        else if (u == 0x7f)
            c = QChar(char16_t(0x2421));
    }
    return out;
}

QString displayText(const std::string &text)
{
    return displayText(QString::fromStdString(text));
}

QByteArray xmlSafe(const QByteArray &utf8)
{
    QByteArray out;
    out.reserve(utf8.size());
    for (qsizetype i = 0; i < utf8.size(); ++i) {
        const auto b = static_cast<unsigned char>(utf8[i]);
        if (b < 0x20 && b != '\t' && b != '\n' && b != '\r')
            continue;
        // U+FFFE and U+FFFF are EF BF BE and EF BF BF in UTF-8.
        if (b == 0xef && i + 2 < utf8.size() && static_cast<unsigned char>(utf8[i + 1]) == 0xbf &&
            (static_cast<unsigned char>(utf8[i + 2]) & 0xfe) == 0xbe) {
            i += 2;
            continue;
        }
        out.append(char(b));
    }
    return out;
}

} // namespace attnscope
