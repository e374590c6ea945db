#pragma once

#include "app/engine/BackendChoice.h"

#include "core/attention/PooledAttention.h"
#include "core/io/FilesRead.h"

#include <QCommandLineParser>
#include <QStringList>
#include <QTextStream>

#include <optional>
#include <string>
#include <vector>

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

// What a command writes, for checkBeforeWriting(): --out as given, and every file it writes
// there (--out itself for one file; each file it writes into the folder for a folder).
struct Outputs {
    QString out;
    std::vector<QString> files;
    bool folder = false;
};

// The step every command takes after its work and before it writes anything: refuses an output
// that is the same file as one the command read (`read`: the project and its {"npy": ...}
// references, an attention file and its token sidecar, a model folder's config, weights and
// tokenizer files), with one line naming both, exit 2:
// "compute: --out out: writing q.npy there would replace p/q.npy, which this command read;
// choose another folder". nullopt when writing may go on, else the exit code to return.
std::optional<int> checkBeforeWriting(QTextStream &err, const FilesRead &read, const char *command,
                                      const Outputs &outputs);

// --pool N and --pool-mode max|mean as given (N from 1 to 65536; --pool-mode only with --pool),
// or a usage error naming the option: "--pool: expected a whole number from 1 to 65536, found "x"".
Result<PoolOptions> parsePoolOptions(const QCommandLineParser &parser, const char *command);

// Which backend and device ran, and why (stdout, after the work): "backend: NAME", "device:
// NAME", the choice's notice and a fallback during the work as "note: ..." lines, and with
// `transfers` a Vulkan backend's "vulkan: submissions N, uploaded U bytes, read back R bytes".
void reportBackend(QTextStream &out, BackendSelection &selection, bool transfers = false);

} // namespace attnscope::cli
