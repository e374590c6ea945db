#pragma once

#include <QCommandLineParser>
#include <QStringList>
#include <QTextStream>

#include <optional>
#include <string>

namespace attnscope::cli {

// attnscope-cli's exit codes: success, the work failed, a usage error.
inline constexpr int kOk = 0, kFailed = 1, kUsage = 2;

// Writes "attnscope-cli: MESSAGE" as one line on err and returns code, so a command can
// `return fail(err, ..., kUsage);`.
int fail(QTextStream &err, const QString &message, int code);
int fail(QTextStream &err, const std::string &message, int code);

// What every command with one positional argument does first: parses args with parser (single-
// dash words as long options, --help added), prints usage for --help, and refuses an unknown
// option or a wrong number of arguments ("model: expected 1 argument (MODEL_DIR), found 2 (see
// --help)"). nullopt when the command goes on, else the exit code to return.
std::optional<int> parseOnePositional(QCommandLineParser &parser, const QStringList &args, const char *command,
                                      const char *argumentName, const char *usage, QTextStream &out, QTextStream &err);

} // namespace attnscope::cli
