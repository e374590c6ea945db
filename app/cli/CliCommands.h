#pragma once

#include "app/engine/BackendChoice.h"

#include <QStringList>
#include <QTextStream>

namespace attnscope {

// What a program built on attnscope-cli's commands gives every backend they make. The product
// passes none; a test driver (tests/gpu/attnscope_cli_faults.cpp) injects Vulkan faults with
// it, so that nothing a user's environment holds can.
struct CliHooks {
    BackendOptions backend;
};

// Runs attnscope-cli with the given arguments (arguments[0] is the program name) and
// returns the exit code: 0 on success, 1 when the work failed, 2 for a usage error.
// Results go to out, errors (one line each, prefixed "attnscope-cli: ") to err.
int runCli(const QStringList &arguments, QTextStream &out, QTextStream &err, const CliHooks &hooks = {});

// The attnscope-cli process around runCli: signal and message set-up, the Qt application
// (QGuiApplication for render, which paints; QCoreApplication otherwise), the terminal.
int runCliProcess(int argc, char *argv[], const CliHooks &hooks = {});

} // namespace attnscope
