#include "app/gui/document/ExampleModel.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace attnscope {

namespace {

// The folder's name (under share/attnscope/models and resources/models) and the variable that
// overrides where it is looked for.
struct ExampleModelPlace {
    const char *folder;
    const char *variable;
};

ExampleModelPlace placeOf(ExampleModelId which)
{
    switch (which) {
    case ExampleModelId::TinyQwen3:
        return {"tiny-qwen3", "ATTNSCOPE_EXAMPLE_MODEL_QWEN3"};
    case ExampleModelId::TinyMarianEnZh:
        return {"tiny-marian-en-zh", "ATTNSCOPE_EXAMPLE_MODEL_MARIAN"};
    case ExampleModelId::TinyGpt2:
        break;
    }
    return {"tiny-gpt2", "ATTNSCOPE_EXAMPLE_MODEL"};
}

} // namespace

QStringList exampleModelCandidates(ExampleModelId which)
{
    const ExampleModelPlace place = placeOf(which);
    if (const QString forced = qEnvironmentVariable(place.variable); !forced.isEmpty())
        return {QDir::cleanPath(forced)};
    const QString folder = QString::fromLatin1(place.folder);
    QStringList candidates;
    // Installed: bin/attnscope and share/attnscope/models/NAME under one prefix.
    candidates << QDir::cleanPath(QCoreApplication::applicationDirPath() +
                                  QStringLiteral("/../share/attnscope/models/") + folder);
#ifdef ATTNSCOPE_EXAMPLE_MODELS_SOURCE_DIR
    // Run from the build tree: the folder in the sources.
    candidates << QDir::cleanPath(QStringLiteral(ATTNSCOPE_EXAMPLE_MODELS_SOURCE_DIR "/") + folder);
#endif
    return candidates;
}

QString exampleModelDir(ExampleModelId which)
{
    for (const QString &dir : exampleModelCandidates(which))
        if (QFileInfo(dir + QStringLiteral("/config.json")).isFile() &&
            QFileInfo(dir + QStringLiteral("/model.safetensors")).isFile())
            return dir;
    return {};
}

std::optional<ExampleModelId> exampleModelAt(const QString &dir)
{
    const QString path = QFileInfo(dir).canonicalFilePath();
    if (path.isEmpty())
        return std::nullopt;
    for (ExampleModelId which : {ExampleModelId::TinyGpt2, ExampleModelId::TinyQwen3, ExampleModelId::TinyMarianEnZh})
        if (const QString example = exampleModelDir(which);
            !example.isEmpty() && QFileInfo(example).canonicalFilePath() == path)
            return which;
    return std::nullopt;
}

} // namespace attnscope
