#include "app/cli/CliCommands.h"

#include "app/cli/AnalysisCommands.h"
#include "app/cli/CliCommand.h"
#include "app/cli/CompareCommand.h"
#include "app/cli/GenerateCommand.h"
#include "app/cli/ModelCommands.h"
#include "app/cli/RenderCommand.h"
#include "app/cli/TracePrinter.h"
#include "app/engine/BackendChoice.h"
#include "core/analysis/AttentionStats.h"
#include "core/attention/PooledAttention.h"
#include "core/attention/TraceCheck.h"
#include "core/attention/Validation.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/QkDump.h"
#include "core/formats/TensorExport.h"
#include "core/formats/TraceDataExport.h"
#include "core/formats/TraceExport.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <new>

namespace attnscope {

namespace {

const char *const kUsageTemplate = R"(Usage: attnscope-cli COMMAND [options]

Commands:
  compute PROJECT --out DIR [--backend auto|cpu|vulkan]
      Compute a project and write q, k, v, scores, weights, context and output
      as float32 .npy files into DIR.
  compute PROJECT --out DIR --pool N [--pool-mode max|mean] [--backend ...]
      Long sequences: write weights_pooled.npy [H,N,N] (max or mean of the exact
      weights per block), entropy.npy [H,Tq] and output.npy, never holding
      Tq x Tk per head. A batch gains a leading B axis on each file.
  export PROJECT --out FILE.(csv|npy|npz|json) [--tensor NAME] [--head N] [--backend ...]
      Write tensors of the computation as data: one tensor (CSV: one head) or
      every tensor (.npz, .json). Tensors: q k v scores weights headOutputs
      context output mask.
  export INPUT [--text TEXT] --tensor weights|rollout|mean|stats [--layer L] [--head H]
              --out FILE.(npy|csv|json) [--softmax] [--pool N [--pool-mode max|mean]]
      Attention maps of an attention file (.npy, .npz, .safetensors), a Q/K
      dump, a project, or a model folder run on TEXT, as float32 .npy: weights
      [L,H,Tq,Tk] (all), [H,Tq,Tk] (--layer) or [Tq,Tk] (--layer and --head);
      mean: one layer's mean over heads [Tq,Tk]; rollout: attention rollout
      over all layers [T,T]. One matrix (a head, the mean, the rollout) may
      be .csv, token-labelled; stats (every head's statistics) is .csv or
      .json. Layers and heads count from 0 everywhere: the window, figures,
      the CLI and the JSON. --softmax: as for stats. --pool N writes weights
      or the mean pooled to at most N x N cells per map (.npy); whole maps
      larger than the memory budget are refused, naming --pool.
%1%2%6%3%5  tokenize MODEL_DIR --text TEXT
      Print the ids and tokens of TEXT as the model folder's tokenizer (GPT-2
      or BERT) gives them, as JSON: {"ids": [...], "tokens": [...]}.
  show PROJECT [--backend ...] [--precision N]
      Print every step of the computation with its shape.
  bench --tokens T --dim D --heads H [--causal] [--backend ...] [--repeat N]
        [--pool N [--pool-mode max|mean]]
      Time the engine on random inputs; the last line is "median_ms: X".
      With --pool, the pooled path, its peak memory and GFLOP/s.
%4  devices
      List the compute devices.

Options:
  -h, --help     Show this help.
  -v, --version  Show the version.
)";

// The usage text with the render command's section in its place.
QString usageText()
{
    return QString::fromUtf8(kUsageTemplate)
        .arg(QString::fromUtf8(kRenderUsage), QString::fromUtf8(kStatsUsage), QString::fromUtf8(kModelUsage),
             QString::fromUtf8(kModelBenchUsage), QString::fromUtf8(kGenerateUsage), QString::fromUtf8(kCompareUsage));
}

} // namespace

namespace cli {

int Command::fail(const QString &message, int code)
{
    return cli::fail(m_err, message, code);
}

bool Command::parse(QCommandLineParser &parser, const QStringList &args, int positionals)
{
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.addHelpOption();
    if (!parser.parse(args)) {
        m_exit = fail(parser.errorText(), kUsage);
        return false;
    }
    if (parser.isSet("help")) {
        m_out << usageText();
        m_exit = kOk;
        return false;
    }
    if (parser.positionalArguments().size() != positionals) {
        m_exit = fail(QStringLiteral("%1: expected %2 argument(s), found %3 (see --help)")
                          .arg(args.value(0))
                          .arg(positionals)
                          .arg(parser.positionalArguments().size()),
                      kUsage);
        return false;
    }
    return true;
}

std::optional<BackendSelection> Command::backend(const QCommandLineParser &parser)
{
    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request) {
        m_exit = fail(request.message(), kUsage);
        return std::nullopt;
    }
    auto selection = createBackend(*request, m_backendOptions);
    if (!selection) {
        m_exit = fail(selection.message());
        return std::nullopt;
    }
    return std::move(selection.value());
}

void Command::reportBackend(BackendSelection &selection)
{
    cli::reportBackend(m_out, selection);
}

std::optional<Command::ComputedProject> Command::computeProject(const QCommandLineParser &parser, bool allowNonFinite)
{
    auto project = readProjectFile(parser.positionalArguments()[0].toStdString());
    if (!project) {
        m_exit = fail(withPoolHint(project.error()));
        return std::nullopt;
    }
    auto selection = backend(parser);
    if (!selection)
        return std::nullopt;
    auto trace = selection->backend->compute(project->problem);
    if (!trace) {
        m_exit = fail(withPoolHint(trace.error()));
        return std::nullopt;
    }
    if (Status finite = checkFinite(*trace); !finite && !allowNonFinite) {
        m_exit = fail(finite.message());
        return std::nullopt;
    }
    return ComputedProject{std::move(project.value()), std::move(*selection), std::move(trace.value())};
}

QCommandLineOption Command::backendOption()
{
    return {"backend", "auto, cpu or vulkan (default auto).", "name", "auto"};
}

int Command::exportAttention(const QCommandLineParser &parser, const QString &out)
{
    const QString tensor = parser.value("tensor");
    std::optional<int> layer, head;
    if (Status s = parseLayerAndHead(parser, layer, head); !s)
        return fail(s.message(), kUsage);
    AttentionExportOptions options;
    if (parser.isSet("pool") || parser.isSet("pool-mode")) {
        const auto pool = poolOptions(parser, "export");
        if (!pool)
            return m_exit;
        options.pool = pool->bins;
        options.mode = pool->mode;
    }
    auto selection = backend(parser);
    if (!selection)
        return m_exit;
    options.backend = selection->backend.get();
    std::optional<std::string> text;
    if (parser.isSet("text"))
        text = parser.value("text").toStdString();
    const std::string path = parser.positionalArguments()[0].toStdString();
    if (Status s = checkSoftmaxOption(path, parser.isSet("softmax")); !s)
        return fail(s.message(), kUsage);
    auto input = loadAttentionInput(path, *selection->backend, text, parser.isSet("softmax"));
    if (!input)
        return fail(input.message());
    if (!input->note.empty())
        m_err << QString::fromStdString(input->note) << "\n";
    if (Status s = checkAttentionExport(input->set, tensor.toStdString(), layer, head, out.toStdString(), options); !s)
        return fail(s.message(), s.kind() == ErrorKind::TooLarge ? kFailed : kUsage);
    if (auto exit = checkBeforeWriting("export", {out, {out}}))
        return *exit;
    auto written = writeAttentionTensor(input->set, tensor.toStdString(), layer, head, out.toStdString(), options);
    if (!written)
        return fail(written.message());
    m_out << "wrote: " << shown(out) << " (" << QString::fromStdString(*written) << ")\n";
    return kOk;
}

int Command::exportData(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addOption({"out", "File to write (.csv, .npy, .npz or .json).", "file"});
    parser.addOption({"tensor", "Tensor to write (.csv and .npy; default weights; rollout: .npy).", "name", "weights"});
    parser.addOption({"head", "Head of a per-head tensor (.csv; default 0; 0-based).", "n", "0"});
    parser.addOption({"layer", "Layer of an attention file's maps (0-based).", "n"});
    parser.addOption(backendOption());
    parser.addOption({"text", "The text a model folder reads.", "TEXT"});
    parser.addOption(softmaxOption());
    addPoolOptions(parser);
    if (!parse(parser, args, 1))
        return m_exit;
    if (!parser.isSet("out"))
        return fail(QStringLiteral("export: --out FILE is required"), kUsage);
    const QString out = parser.value("out");
    if (!dataFormatFromPath(out.toStdString()))
        return fail(QStringLiteral("export: --out %1: expected a .csv, .npy, .npz or .json file").arg(shown(out)),
                    kUsage);
    bool headOk = false;
    const int head = parser.value("head").toInt(&headOk);
    if (!headOk)
        return fail(QStringLiteral("--head: expected a whole number, found \"%1\"").arg(parser.value("head")), kUsage);
    if (sameFile(out.toStdString(), parser.positionalArguments()[0].toStdString()))
        return fail(
            QStringLiteral("export: --out %1 is the project file itself; it would be overwritten").arg(shown(out)),
            kUsage);
    const QString tensor = parser.value("tensor");
    const QString input = parser.positionalArguments()[0];
    if (tensor == "rollout" || tensor == "mean" || tensor == "stats" || parser.isSet("layer") || parser.isSet("text") ||
        parser.isSet("softmax") || parser.isSet("pool") || parser.isSet("pool-mode") || QFileInfo(input).isDir() ||
        isAttentionFilePath(input.toStdString()) || QkDump::isDump(input.toStdString()))
        return exportAttention(parser, out);
    auto run = computeProject(parser);
    if (!run)
        return m_exit;
    if (auto exit = checkBeforeWriting("export", {out, {out}}))
        return *exit;
    if (Status s = writeTraceData(TraceLabels::of(run->project), run->trace, out.toStdString(),
                                  parser.value("tensor").toStdString(), head);
        !s)
        return fail(s.message(), s.kind() == ErrorKind::InvalidInput ? kUsage : kFailed);
    reportBackend(run->selection);
    m_out << "wrote: " << out << "\n";
    return kOk;
}

int Command::show(const QStringList &args)
{
    QCommandLineParser parser;
    parser.addOption(backendOption());
    parser.addOption({"precision", "Decimals printed (default 4).", "n", "4"});
    if (!parse(parser, args, 1))
        return m_exit;
    bool precisionOk = false;
    const int precision = parser.value("precision").toInt(&precisionOk);
    if (!precisionOk || precision < 0 || precision > 9)
        return fail(QStringLiteral("--precision: expected a whole number from 0 to 9, found \"%1\"")
                        .arg(parser.value("precision")),
                    kUsage);
    auto run = computeProject(parser, true);
    if (!run)
        return m_exit;
    reportBackend(run->selection);
    printPipeline(m_out, run->project, run->trace, precision);
    m_out.flush();
    if (Status finite = checkFinite(run->trace); !finite)
        return fail(finite.message());
    return kOk;
}

int Command::devices(const QStringList &args)
{
    QCommandLineParser parser;
    if (!parse(parser, args, 0))
        return m_exit;
    for (const auto &line : formatDeviceListing(listComputeDevices()))
        m_out << QString::fromStdString(line) << "\n";
    return kOk;
}

std::optional<int> Command::checkBeforeWriting(const char *command, const Outputs &outputs)
{
    if (auto exit = cli::checkBeforeWriting(m_err, m_read, command, outputs)) {
        m_exit = *exit;
        return exit;
    }
    return std::nullopt;
}

std::string Command::withPoolHint(const Error &error) const
{
    if (!m_suggestPool || error.kind != ErrorKind::TooLarge)
        return error.message;
    return error.message + " (for long sequences: compute --pool N writes pooled weights without the full trace)";
}

} // namespace cli

namespace {

using cli::Command;
using cli::kFailed;
using cli::kOk;
using cli::kUsage;

int dispatch(const QStringList &arguments, QTextStream &out, QTextStream &err, const CliHooks &hooks)
{
    Command command(out, err, hooks.backend);
    const QString name = arguments.value(1);
    if (name.isEmpty())
        return command.fail(QStringLiteral("no command given (see --help)"), kUsage);
    if (name == "-h" || name == "--help" || name == "help") {
        out << usageText();
        return kOk;
    }
    if (name == "-v" || name == "--version") {
        out << "attnscope-cli " << ATTNSCOPE_VERSION << "\n";
        return kOk;
    }
    const QStringList rest = arguments.mid(1);
    if (name == "compute")
        return command.compute(rest);
    if (name == "show")
        return command.show(rest);
    if (name == "export")
        return command.exportData(rest);
    if (name == "bench" && (rest.contains("--model") || rest.contains("-model")))
        return runModelBenchCommand(rest, out, err, hooks.backend);
    if (name == "bench")
        return command.bench(rest);
    if (name == "render")
        return runRenderCommand(rest, out, err, hooks.backend);
    if (name == "devices")
        return command.devices(rest);
    if (name == "stats")
        return runStatsCommand(rest, out, err, hooks.backend);
    if (name == "compare")
        return runCompareCommand(rest, out, err, hooks.backend);
    if (name == "tokenize")
        return runTokenizeCommand(rest, out, err);
    if (name == "model")
        return runModelCommand(rest, out, err, hooks.backend);
    if (name == "generate")
        return runGenerateCommand(rest, out, err, hooks.backend);
    return command.fail(QStringLiteral("unknown command \"%1\" (see --help)").arg(name), kUsage);
}

} // namespace

int runCli(const QStringList &arguments, QTextStream &out, QTextStream &err, const CliHooks &hooks)
{
    // The size checks refuse what cannot fit before allocating; this is the last resort when
    // memory runs out anyway (another process took it, a limit lower than reported).
    try {
        return dispatch(arguments, out, err, hooks);
    } catch (const std::bad_alloc &) {
        err << "attnscope-cli: out of memory (" << QString::fromStdString(formatBytes(memoryBudget()))
            << " may be allocated now; try a smaller problem)\n";
    } catch (const std::exception &e) {
        err << "attnscope-cli: internal error: " << QString::fromStdString(printableText(e.what(), 200)) << "\n";
    }
    err.flush();
    return kFailed;
}

} // namespace attnscope
