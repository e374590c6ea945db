#pragma once

// The attnscope-cli commands that share one reading of the project and the backend (compute,
// export, show, bench, devices): one class, its members split by theme over CliCommands.cpp
// (the shared steps, export, show, devices and the dispatch) and ComputeCommands.cpp (compute,
// its pooled and batched forms, bench). Internal to attnscope_cli_lib.

#include "app/cli/CliSupport.h"
#include "app/engine/BackendChoice.h"
#include "core/attention/AttentionTrace.h"
#include "core/attention/PooledAttention.h"
#include "core/formats/ProjectFile.h"
#include "core/io/UserText.h"

#include <QCommandLineParser>
#include <QString>
#include <QTextStream>

#include <optional>
#include <string>

namespace attnscope::cli {

class Command
{
public:
    // backendOptions: what every backend the command makes starts from (CliHooks).
    Command(QTextStream &out, QTextStream &err, BackendOptions backendOptions = {})
        : m_out(out), m_err(err), m_backendOptions(std::move(backendOptions))
    {
    }

    int fail(const QString &message, int code = kFailed);
    int fail(const std::string &message, int code = kFailed) { return fail(QString::fromStdString(message), code); }

    // Parses the command's own options; false (with the exit code in m_exit) on a usage error.
    bool parse(QCommandLineParser &parser, const QStringList &args, int positionals);

    std::optional<BackendSelection> backend(const QCommandLineParser &parser);

    void reportBackend(BackendSelection &selection);

    // What compute, export and show share: the project named by the first argument, read,
    // and computed on the backend --backend chooses.
    struct ComputedProject {
        Project project;
        BackendSelection selection;
        AttentionTrace trace;
    };

    // The project computed, or nullopt with the error reported and m_exit set. A result
    // that overflowed to Inf or NaN is refused too (exit 1), unless allowNonFinite: show
    // prints it first, so the user sees where it went wrong.
    std::optional<ComputedProject> computeProject(const QCommandLineParser &parser, bool allowNonFinite = false);

    static QCommandLineOption backendOption();

    // --pool N and --pool-mode as options; nullopt (m_exit set) on a usage error.
    std::optional<PoolOptions> poolOptions(const QCommandLineParser &parser, const char *command);

    static void addPoolOptions(QCommandLineParser &parser);

    // compute --pool: weights_pooled.npy, entropy.npy and output.npy, nothing full-size.
    int computePooled(const QCommandLineParser &parser, const QString &dir);

    int compute(const QStringList &args);

    // compute on a batch: every sequence through the same backend, each file with a leading B axis.
    int writeBatch(ComputedProject &run, const QString &dir);

    // Maps of an attention file, or of a project's one layer: weights, mean or rollout.
    int exportAttention(const QCommandLineParser &parser, const QString &out);

    int exportData(const QStringList &args);

    int show(const QStringList &args);

    int bench(const QStringList &args);

    // bench --pool: time, peak RSS and GFLOP/s of the pooled path, beside the machine's own
    // GEMM rate measured now (the same Eigen, the same threads).
    int benchPooled(AttentionBackend &backend, const AttentionProblem &problem, const PoolOptions &pool,
                    long long repeat);

    int devices(const QStringList &args);

    // checkBeforeWriting() (CliSupport.h) against everything this command read; nullopt when
    // writing may go on, else m_exit is set and returned.
    std::optional<int> checkBeforeWriting(const char *command, const Outputs &outputs);

private:
    // compute's refusal of a trace too large for memory points at the pooled form.
    std::string withPoolHint(const Error &error) const;

    // A path or argument as a message may show it: one line, no terminal escapes.
    static QString shown(const QString &text) { return QString::fromStdString(printableText(text.toStdString(), 200)); }

    QTextStream &m_out;
    QTextStream &m_err;
    BackendOptions m_backendOptions;
    // Every file read from the command's start: its outputs may not replace one of them.
    FilesRead m_read;
    int m_exit = kOk;
    bool m_suggestPool = false;
};

} // namespace attnscope::cli
