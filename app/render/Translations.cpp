#include "app/render/Translations.h"

#include <QStringList>
#include <QTranslator>

namespace attnscope {

QTranslator *loadCatalogue(const QLocale &locale, QObject *parent)
{
    // QTranslator::load(QLocale) tries the locale's UI languages in order (zh_Hans_CN, zh_CN,
    // zh, ...), so a system locale of zh_CN.UTF-8 or zh_SG finds attnscope_zh_CN.qm.
    auto *translator = new QTranslator(parent);
    if (translator->load(locale, QStringLiteral("attnscope"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        return translator;
    delete translator;
    return nullptr;
}

QStringList interfaceLanguages()
{
    return {QStringLiteral("en"), QStringLiteral("zh_CN")};
}

} // namespace attnscope
