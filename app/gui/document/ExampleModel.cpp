#include "app/gui/document/ExampleModel.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace attnscope {

QStringList exampleModelCandidates()
{
    if (const QString forced = qEnvironmentVariable("ATTNSCOPE_EXAMPLE_MODEL"); !forced.isEmpty())
        return {QDir::cleanPath(forced)};
    QStringList candidates;
    // Installed: bin/attnscope and share/attnscope/models/tiny-gpt2 under one prefix.
    candidates << QDir::cleanPath(QCoreApplication::applicationDirPath() +
                                  QStringLiteral("/../share/attnscope/models/tiny-gpt2"));
#ifdef ATTNSCOPE_EXAMPLE_MODEL_SOURCE_DIR
    // Run from the build tree: the folder in the sources.
    candidates << QDir::cleanPath(QStringLiteral(ATTNSCOPE_EXAMPLE_MODEL_SOURCE_DIR));
#endif
    return candidates;
}

QString exampleModelDir()
{
    for (const QString &dir : exampleModelCandidates())
        if (QFileInfo(dir + QStringLiteral("/config.json")).isFile() &&
            QFileInfo(dir + QStringLiteral("/model.safetensors")).isFile())
            return dir;
    return {};
}

} // namespace attnscope
