#pragma once

#include <QLocale>

class QObject;
class QTranslator;

namespace attnscope {

// AttnScope's own catalogue for `locale` (":/i18n/attnscope_LANG.qm", built into this library),
// loaded into a new translator owned by `parent`; null for a language it has none for (English,
// the source language, needs none). The window installs it with Qt's own (Language.h); the command
// line installs it alone for `render --language`.
QTranslator *loadCatalogue(const QLocale &locale, QObject *parent);

// The interface languages: "en" and "zh_CN".
QStringList interfaceLanguages();

} // namespace attnscope
