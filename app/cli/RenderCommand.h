#pragma once

#include "app/engine/BackendChoice.h"

#include <QStringList>
#include <QTextStream>

namespace attnscope {

// `attnscope-cli render PROJECT [PROJECT...] --out FILE|DIR [options]`: figures of computed
// projects through the same renderer as the GUI. Needs a QGuiApplication (fonts, painting).
// Returns the exit code; errors are one line each on err. Backends start from backendOptions.
int runRenderCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                     const BackendOptions &backendOptions = {});

// The render command's part of --help.
extern const char *const kRenderUsage;

} // namespace attnscope
