#include "app/render/DataExport.h"

#include <QSaveFile>

namespace attnscope {

Status writeTraceDataFile(const Project &project, const AttentionTrace &trace, const QString &path,
                          const QString &tensor, int head)
{
    const auto format = dataFormatFromPath(path.toStdString());
    if (!format)
        return Error{path.toStdString() + ": expected a .csv, .npy, .npz or .json file", ErrorKind::InvalidInput};
    auto bytes = traceDataBytes(project, trace, *format, tensor.toStdString(), head);
    if (!bytes)
        return bytes.error();
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes->data(), qint64(bytes->size())) != qint64(bytes->size()) ||
        !file.commit())
        return Error{QStringLiteral("%1: %2").arg(path, file.errorString()).toStdString(), ErrorKind::Io};
    return Ok{};
}

} // namespace attnscope
