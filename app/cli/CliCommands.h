#pragma once

#include <QStringList>
#include <QTextStream>

namespace attnscope {

// Runs attnscope-cli with the given arguments (arguments[0] is the program name) and
// returns the exit code: 0 on success, 1 when the work failed, 2 for a usage error.
// Results go to out, errors (one line each, prefixed "attnscope-cli: ") to err.
int runCli(const QStringList &arguments, QTextStream &out, QTextStream &err);

} // namespace attnscope
