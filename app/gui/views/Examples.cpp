#include "app/gui/views/Examples.h"

#include "app/gui/document/Document.h"
#include "app/render/FigureRenderer.h"
#include "core/io/FileIo.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

namespace attnscope {

namespace {

const QString kRoot = QStringLiteral(":/examples");
const QString kSuffix = QStringLiteral("*.attnscope.json");

class ExamplesText
{
    Q_DECLARE_TR_FUNCTIONS(attnscope::Examples)
};

ExampleEntry entryFor(const QString &path, const QString &folder)
{
    ExampleEntry e{path, QFileInfo(path).fileName(), folder};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return e;
    const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
    if (const QString title = o.value(QStringLiteral("title")).toString(); !title.isEmpty())
        e.title = title;
    if (!folder.isEmpty())
        if (const QString group = o.value(QStringLiteral("tutorial")).toString(); !group.isEmpty())
            e.group = group;
    return e;
}

// The folder an example lives in, relative to ":/examples" (empty for a loose one).
QString folderOf(const QString &resourcePath)
{
    const QString dir = QFileInfo(resourcePath).path();
    return dir.startsWith(kRoot + QLatin1Char('/')) ? dir.mid(kRoot.size() + 1) : QString();
}

} // namespace

QString exampleMenuText(const QString &title)
{
    if (const QString name = shortFigureName(title); !name.isEmpty())
        return name;
    // The language half of a bilingual title, cut.
    const QString half = titleInLanguage(title);
    return half.size() <= kExampleMenuText ? half : half.left(kExampleMenuText - 1).trimmed() + QChar(0x2026);
}

QList<ExampleEntry> builtInExamples()
{
    QList<ExampleEntry> out;
    const QDir root(kRoot);
    for (const QString &name : root.entryList({kSuffix}, QDir::Files, QDir::Name))
        out << entryFor(root.filePath(name), {});
    for (const QString &folder : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QDir dir(root.filePath(folder));
        for (const QString &name : dir.entryList({kSuffix}, QDir::Files, QDir::Name))
            out << entryFor(dir.filePath(name), folder);
    }
    return out;
}

QString exampleCopyRoot()
{
    QString base = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    if (base.isEmpty())
        base = QDir::temp().filePath(QStringLiteral("attnscope"));
    return QDir(base).filePath(QStringLiteral("examples"));
}

Result<Project> readExample(const QString &resourcePath, const QString &copyRoot)
{
    const QString folder = folderOf(resourcePath);
    if (folder.isEmpty() || !resourcePath.startsWith(QLatin1Char(':')))
        return Document::readProject(resourcePath);
    // Copied afresh each time: the copy is ours, and an older version's files must not stay.
    const QDir target(QDir(copyRoot.isEmpty() ? exampleCopyRoot() : copyRoot).filePath(folder));
    const QDir source(kRoot + QLatin1Char('/') + folder);
    QDirIterator it(source.path(), QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString from = it.next();
        const QString to = target.filePath(source.relativeFilePath(from));
        QFile in(from);
        // Written rather than QFile::copy'd: resources are read-only, and a read-only copy could
        // not be replaced next time. Whole or not at all, as every output.
        if (!QDir().mkpath(QFileInfo(to).path()) || !in.open(QIODevice::ReadOnly))
            return Error{
                ExamplesText::tr("Could not copy the example to %1: %2").arg(to, in.errorString()).toStdString(),
                ErrorKind::Io};
        const QByteArray bytes = in.readAll();
        AtomicFileWriter out(QFile::encodeName(to).toStdString());
        Status written = out.open();
        if (written) {
            out.write(bytes.constData(), std::size_t(bytes.size()));
            written = out.commit();
        }
        if (!written)
            return Error{ExamplesText::tr("Could not copy the example to %1: %2")
                             .arg(to, QString::fromStdString(written.message()))
                             .toStdString(),
                         ErrorKind::Io};
    }
    return Document::readProject(target.filePath(QFileInfo(resourcePath).fileName()));
}

} // namespace attnscope
