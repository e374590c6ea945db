#include "app/gui/views/Language.h"

#include "app/gui/views/PlainText.h"
#include "app/render/Translations.h"

#include <QActionGroup>
#include <QCoreApplication>
#include <QLibraryInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QSettings>
#include <QTranslator>

namespace attnscope {

namespace {

// The translators installed last, removed before new ones go in.
QPointer<QTranslator> g_appTranslator;
QPointer<QTranslator> g_qtTranslator;

void replaceTranslator(QPointer<QTranslator> &slot, QTranslator *next)
{
    if (slot) {
        QCoreApplication::removeTranslator(slot);
        delete slot;
    }
    slot = next;
    if (next)
        QCoreApplication::installTranslator(next);
}

} // namespace

QString languageSetting()
{
    return QSettings().value(QLatin1String(kLanguageSettingKey)).toString();
}

void setLanguageSetting(const QString &code)
{
    QSettings settings;
    if (code.isEmpty())
        settings.remove(QLatin1String(kLanguageSettingKey));
    else
        settings.setValue(QLatin1String(kLanguageSettingKey), code);
}

QLocale interfaceLocale(const QString &setting, const QLocale &system)
{
    if (setting == QLatin1String("en"))
        return QLocale(QLocale::English, QLocale::UnitedStates);
    if (setting == QLatin1String("zh_CN"))
        return QLocale(QLocale::Chinese, QLocale::SimplifiedHanScript, QLocale::China);
    return system;
}

bool installTranslators(const QLocale &locale)
{
    // QLocale() is what the guide (guide_LANG.html) and number formats follow.
    QLocale::setDefault(locale);
    QTranslator *app = loadCatalogue(locale, QCoreApplication::instance());
    const bool found = app != nullptr;
    replaceTranslator(g_appTranslator, app);
    // Qt's own strings (OK, Cancel, the file dialog) follow the same language, but only where
    // AttnScope has it too: a half-translated window is worse than an English one.
    auto *qt = new QTranslator(QCoreApplication::instance());
    const bool qtFound = found && qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                                           QLibraryInfo::path(QLibraryInfo::TranslationsPath));
    replaceTranslator(g_qtTranslator, qtFound ? qt : nullptr);
    if (!qtFound)
        delete qt;
    return found;
}

QMenu *createLanguageMenu(QWidget *parent)
{
    auto *menu = new QMenu(QCoreApplication::translate("attnscope::Language", "&Language"), parent);
    auto *group = new QActionGroup(menu);
    const QString current = languageSetting();
    // Each language is named in itself, so it can be found whatever the interface shows now.
    const std::pair<QString, QString> choices[] = {
        {QCoreApplication::translate("attnscope::Language", "System default"), QString()},
        {QStringLiteral("English"), QStringLiteral("en")},
        {QStringLiteral("\u7b80\u4f53\u4e2d\u6587"), QStringLiteral("zh_CN")}};
    for (const auto &[text, code] : choices) {
        QAction *a = menu->addAction(text);
        a->setCheckable(true);
        a->setChecked(code == current);
        a->setData(code);
        group->addAction(a);
        QObject::connect(a, &QAction::triggered, parent, [parent, code = code] {
            if (code == languageSetting())
                return;
            setLanguageSetting(code);
            auto *box = plainMessageBox(
                QMessageBox::Information, QCoreApplication::translate("attnscope::Language", "Language"),
                QCoreApplication::translate("attnscope::Language",
                                            "The new language takes effect when AttnScope starts again."),
                QMessageBox::Ok, parent);
            box->setObjectName(QStringLiteral("languageNotice"));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        });
    }
    return menu;
}

} // namespace attnscope
