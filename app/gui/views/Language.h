#pragma once

#include <QLocale>
#include <QString>

class QMenu;
class QWidget;

namespace attnscope {

// The interface language: the system's (the locale from LANG / LC_ALL / LC_MESSAGES), or an
// override chosen in View > Language and kept in QSettings. Translations are loaded once, at
// start-up, before any window exists: widgets take their texts when they are built.

// The QSettings key and its values: "" follows the system, "en" or "zh_CN" override it.
inline constexpr const char *kLanguageSettingKey = "ui/language";
QString languageSetting();
void setLanguageSetting(const QString &code);

// The locale the interface uses for a setting ("" gives `system`).
QLocale interfaceLocale(const QString &setting, const QLocale &system = QLocale::system());

// Loads AttnScope's catalogue (":/i18n/attnscope_LANG.qm") and Qt's own (qtbase_LANG.qm, from
// Qt's translations folder: the standard dialogs and buttons) for `locale` and installs them on
// the application, replacing those installed before. Returns whether AttnScope's catalogue was
// found (false for English, the source language).
bool installTranslators(const QLocale &locale);

// View > Language: System default, English, 简体中文 (each language named in itself). A choice
// is saved and applies at the next start, which a message box says.
QMenu *createLanguageMenu(QWidget *parent);

} // namespace attnscope
