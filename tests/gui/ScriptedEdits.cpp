#include "ScriptedEdits.h"

#include "core/io/FileIo.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace attnscope {

namespace {

std::optional<MatrixId> matrixFromName(const QString &name)
{
    static const std::pair<const char *, MatrixId> names[] = {{"Xq", MatrixId::Xq}, {"Xkv", MatrixId::Xkv},
                                                              {"Wq", MatrixId::Wq}, {"Wk", MatrixId::Wk},
                                                              {"Wv", MatrixId::Wv}, {"Wo", MatrixId::Wo}};
    for (const auto &[text, id] : names)
        if (name == QLatin1String(text))
            return id;
    return std::nullopt;
}

Error scriptError(const QString &edit, const char *expected)
{
    return Error{("ATTNSCOPE_TEST_EDITS: \"" + edit + "\": expected " + QLatin1String(expected)).toStdString()};
}

} // namespace

Status applyScriptedEdits(Document &document, const QString &script)
{
    for (const QString &edit : script.split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        const QString key = edit.section(QLatin1Char('='), 0, 0).trimmed();
        const QString value = edit.section(QLatin1Char('='), 1);
        bool ok = false;
        if (key == QLatin1String("title")) {
            document.setTitle(value);
        } else if (key == QLatin1String("heads") || key == QLatin1String("dK") || key == QLatin1String("dV")) {
            const int n = value.toInt(&ok);
            if (!ok)
                return scriptError(edit, "a whole number");
            if (key == QLatin1String("heads"))
                document.setHeads(n);
            else if (key == QLatin1String("dK"))
                document.setHeadDimQK(n);
            else
                document.setHeadDimV(n);
        } else if (key == QLatin1String("value")) {
            const QStringList parts = value.split(QLatin1Char(':'));
            const auto id = parts.size() == 4 ? matrixFromName(parts[0]) : std::nullopt;
            bool rowOk = false, colOk = false;
            const int row = parts.value(1).toInt(&rowOk), col = parts.value(2).toInt(&colOk);
            const float number = parts.value(3).toFloat(&ok);
            if (!id || !rowOk || !colOk || !ok)
                return scriptError(edit, "value=MATRIX:ROW:COL:NUMBER");
            document.setValue(*id, row, col, number);
        } else {
            return scriptError(edit, "title, heads, dK, dV or value");
        }
    }
    return Ok{};
}

Status writeDocumentState(const Document &document, const QString &path)
{
    QJsonObject state;
    state[QStringLiteral("filePath")] = document.filePath();
    state[QStringLiteral("modified")] = document.isModified();
    state[QStringLiteral("project")] = QString::fromStdString(serializeProject(document.project()));
    const QByteArray data = QJsonDocument(state).toJson();
    AtomicFileWriter file(QFile::encodeName(path).toStdString());
    if (Status s = file.open(); !s)
        return s;
    file.write(data.constData(), std::size_t(data.size()));
    return file.commit();
}

} // namespace attnscope
