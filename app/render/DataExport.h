#pragma once

#include "core/AttentionTrace.h"
#include "core/Result.h"
#include "core/TraceDataExport.h"

#include <QString>

namespace attnscope {

struct Project;

// Writes a trace as data, the format picked by the file name's suffix (core/TraceDataExport):
// .csv (one head of `tensor`), .npy (`tensor`), .npz or .json (every tensor). Atomic
// (QSaveFile): the whole file or nothing, an old file of that name kept on failure. Errors:
// InvalidInput for a suffix, tensor or head the export cannot use, Io when writing fails.
// `attnscope-cli export` and File > Export Data both write through this one function.
Status writeTraceDataFile(const Project &project, const AttentionTrace &trace, const QString &path,
                          const QString &tensor, int head);

} // namespace attnscope
