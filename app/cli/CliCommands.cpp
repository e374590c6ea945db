#include "app/cli/CliCommands.h"

#include "app/cli/AnalysisCommands.h"
#include "app/cli/ModelCommands.h"
#include "app/cli/RenderCommand.h"
#include "app/cli/TracePrinter.h"
#include "app/engine/BackendChoice.h"
#include "core/AttentionFile.h"
#include "core/AttentionStats.h"
#include "core/BatchedProject.h"
#include "core/FileIo.h"
#include "core/MemoryLimits.h"
#include "core/PooledAttention.h"
#include "core/ProjectFile.h"
#include "core/RandomProblem.h"
#include "core/TensorExport.h"
#include "core/TraceCheck.h"
#include "core/TraceDataExport.h"
#include "core/TraceExport.h"
#include "core/UserText.h"
#include "core/Validation.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <new>

namespace attnscope {

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

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
  export INPUT [--text TEXT] --tensor weights|rollout|mean [--layer L] [--head H] --out FILE.npy
      Attention maps of an attention file (.npy, .npz, .safetensors), a
      project, or a model folder run on TEXT, as float32: weights [L,H,Tq,Tk]
      (all), [H,Tq,Tk] (--layer) or [Tq,Tk] (--layer and --head); mean: one
      layer's mean over heads [Tq,Tk]; rollout: attention rollout over all
      layers [T,T]. Layers and heads count from 0 everywhere: the window,
      figures, the CLI and the JSON.
%1%2%3  tokenize MODEL_DIR --text TEXT
      Print the ids and tokens of TEXT as the model folder's tokenizer (GPT-2
      or BERT) gives them, as JSON: {"ids": [...], "tokens": [...]}.
  show PROJECT [--backend ...] [--precision N]
      Print every step of the computation with its shape.
  bench --tokens T --dim D --heads H [--causal] [--backend ...] [--repeat N]
        [--pool N [--pool-mode max|mean]]
      Time the engine on random inputs; the last line is "median_ms: X".
      With --pool, the pooled path, its peak memory and GFLOP/s.
  devices
      List the compute devices.

Options:
  -h, --help     Show this help.
  -v, --version  Show the version.
)";

// The usage text with the render command's section in its place.
QString usageText()
{
    return QString::fromUtf8(kUsageTemplate)
        .arg(QString::fromUtf8(kRenderUsage), QString::fromUtf8(kStatsUsage), QString::fromUtf8(kModelUsage));
}

class Command
{
public:
    Command(QTextStream &out, QTextStream &err) : m_out(out), m_err(err) {}

    int fail(const QString &message, int code = kFailed)
    {
        m_err << "attnscope-cli: " << message << "\n";
        m_err.flush();
        return code;
    }
    int fail(const std::string &message, int code = kFailed) { return fail(QString::fromStdString(message), code); }

    // Parses the command's own options; false (with the exit code in m_exit) on a usage error.
    bool parse(QCommandLineParser &parser, const QStringList &args, int positionals)
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

    std::optional<BackendSelection> backend(const QCommandLineParser &parser)
    {
        auto request = parseBackendRequest(parser.value("backend").toStdString());
        if (!request) {
            m_exit = fail(request.message(), kUsage);
            return std::nullopt;
        }
        auto selection = createBackend(*request);
        if (!selection) {
            m_exit = fail(selection.message());
            return std::nullopt;
        }
        return std::move(selection.value());
    }

    void reportBackend(BackendSelection &selection)
    {
        m_out << "backend: " << QString::fromStdString(selection.backend->name()) << "\n"
              << "device: " << QString::fromStdString(selection.backend->deviceName()) << "\n";
        if (!selection.notice.empty())
            m_out << "note: " << QString::fromStdString(selection.notice) << "\n";
        // A fallback that happened during compute() (Vulkan device lost, out of memory).
        if (const std::string late = takeBackendNotice(*selection.backend); !late.empty())
            m_out << "note: " << QString::fromStdString(late) << "\n";
    }

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
    std::optional<ComputedProject> computeProject(const QCommandLineParser &parser, bool allowNonFinite = false)
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

    static QCommandLineOption backendOption()
    {
        return {"backend", "auto, cpu or vulkan (default auto).", "name", "auto"};
    }

    // --pool N and --pool-mode as options; nullopt (m_exit set) on a usage error.
    std::optional<PoolOptions> poolOptions(const QCommandLineParser &parser, const char *command)
    {
        if (parser.isSet("pool-mode") && !parser.isSet("pool")) {
            m_exit = fail(QStringLiteral("%1: --pool-mode needs --pool N").arg(command), kUsage);
            return std::nullopt;
        }
        PoolOptions options;
        bool ok = false;
        options.bins = parser.value("pool").toLongLong(&ok);
        if (!ok || options.bins < 1 || options.bins > (1 << 16)) {
            m_exit = fail(QStringLiteral("--pool: expected a whole number from 1 to 65536, found \"%1\"")
                              .arg(shown(parser.value("pool"))),
                          kUsage);
            return std::nullopt;
        }
        const QString mode = parser.value("pool-mode");
        if (mode != "max" && mode != "mean") {
            m_exit = fail(QStringLiteral("--pool-mode: expected max or mean, found \"%1\"").arg(shown(mode)), kUsage);
            return std::nullopt;
        }
        options.mode = mode == "mean" ? PoolMode::Mean : PoolMode::Max;
        return options;
    }

    static void addPoolOptions(QCommandLineParser &parser)
    {
        parser.addOption({"pool", "Pooled long-sequence form: at most N x N cells per head.", "N"});
        parser.addOption({"pool-mode", "max (default) or mean.", "mode", "max"});
    }

    // compute --pool: weights_pooled.npy, entropy.npy and output.npy, nothing full-size.
    int computePooled(const QCommandLineParser &parser, const QString &dir)
    {
        auto options = poolOptions(parser, "compute");
        if (!options)
            return m_exit;
        const std::string projectPath = parser.positionalArguments()[0].toStdString();
        for (const char *name : {"weights_pooled", "entropy", "output"})
            if (sameFile(QDir(dir).filePath(QStringLiteral("%1.npy").arg(name)).toStdString(), projectPath))
                return fail(QStringLiteral("compute: --out %1 would overwrite the project file %2 (%3.npy)")
                                .arg(shown(dir), shown(parser.positionalArguments()[0]), name),
                            kUsage);
        ProjectReadOptions read;
        read.checkTraceSize = false; // the pooled path checks its own, far smaller, need
        auto project = readProjectFile(projectPath, read);
        if (!project)
            return fail(project.message());
        auto selection = backend(parser);
        if (!selection)
            return m_exit;
        // A batch is pooled sequence by sequence (each one a problem, as the full compute does)
        // and every file gains the leading B axis: [B,H,Nq,Nk], [B,H,Tq], [B,Tq,d_out].
        const BatchedProject batch(*project);
        std::vector<PooledResult> results;
        for (int b = 0; b < batch.sequenceCount(); ++b) {
            auto result = selection->backend->computePooled(batch.problemForSequence(b), *options);
            if (!result)
                return fail(batch.isBatched() ? QStringLiteral("compute: sequence %1: %2")
                                                    .arg(b)
                                                    .arg(QString::fromStdString(result.message()))
                                              : QString::fromStdString(result.message()));
            const bool finite = result->output.allFinite() && result->entropy.allFinite() &&
                                std::all_of(result->pooled.begin(), result->pooled.end(),
                                            [](const MatrixF &m) { return m.allFinite(); });
            if (!finite)
                return fail(
                    batch.isBatched()
                        ? QStringLiteral("compute: sequence %1: the result overflowed to Inf or NaN (the inputs are "
                                         "too large)")
                              .arg(b)
                        : QStringLiteral("compute: the result overflowed to Inf or NaN (the inputs are too large)"));
            results.push_back(std::move(*result));
        }
        const AttentionProblem &p = project->problem;
        const PooledResult &first = results.front();
        std::vector<const MatrixF *> pooled, entropy, output;
        for (const PooledResult &r : results) {
            for (const MatrixF &m : r.pooled)
                pooled.push_back(&m);
            entropy.push_back(&r.entropy);
            output.push_back(&r.output);
        }
        auto shape = [&](std::vector<std::int64_t> dims) {
            if (batch.isBatched())
                dims.insert(dims.begin(), batch.sequenceCount());
            return dims;
        };
        const std::vector<NpyFolderTensor> files = {
            {"weights_pooled", shape({p.spec.heads, first.pooled[0].rows(), first.pooled[0].cols()}), pooled},
            {"entropy", shape({p.spec.heads, p.tq()}), entropy},
            {"output", shape({first.output.rows(), first.output.cols()}), output}};
        if (Status s = writeNpyFolder(files, dir.toStdString()); !s)
            return fail(s.message());
        reportBackend(*selection);
        if (selection->backend->usesCpuForPooled() && selection->backend->name() != "cpu")
            m_out << "note: the pooled path ran on the CPU engine (this backend has no pooled kernels)\n";
        m_out << "wrote: " << dir << " (weights_pooled " << p.spec.heads << "x" << first.pooled[0].rows() << "x"
              << first.pooled[0].cols() << " " << (options->mode == PoolMode::Mean ? "mean" : "max")
              << ", entropy, output .npy";
        if (batch.isBatched())
            m_out << "; " << batch.sequenceCount() << " sequences on a leading axis";
        m_out << ")\n";
        return kOk;
    }

    int compute(const QStringList &args)
    {
        QCommandLineParser parser;
        parser.addOption({"out", "Directory for the .npy files.", "dir"});
        parser.addOption(backendOption());
        addPoolOptions(parser);
        if (!parse(parser, args, 1))
            return m_exit;
        if (!parser.isSet("out"))
            return fail(QStringLiteral("compute: --out DIR is required"), kUsage);
        const QString dir = parser.value("out");
        if (parser.isSet("pool") || parser.isSet("pool-mode"))
            return computePooled(parser, dir);
        const std::string projectPath = parser.positionalArguments()[0].toStdString();
        for (const std::string &name : traceTensorNames())
            if (sameFile(QDir(dir).filePath(QString::fromStdString(name + ".npy")).toStdString(), projectPath))
                return fail(QStringLiteral("compute: --out %1 would overwrite the project file %2 (%3.npy)")
                                .arg(shown(dir), shown(parser.positionalArguments()[0]), QString::fromStdString(name)),
                            kUsage);
        m_suggestPool = true;
        auto run = computeProject(parser);
        if (!run)
            return m_exit;
        if (run->project.batch)
            return writeBatch(*run, dir);
        if (Status s = writeTraceNpy(run->trace, dir.toStdString()); !s)
            return fail(s.message());
        reportBackend(run->selection);
        m_out << "wrote: " << dir << " (q, k, v, scores, weights, context, output .npy)\n";
        return kOk;
    }

    // compute on a batch: every sequence through the same backend, each file with a leading B axis.
    int writeBatch(ComputedProject &run, const QString &dir)
    {
        const BatchedProject batch(run.project);
        std::vector<AttentionTrace> traces;
        traces.push_back(std::move(run.trace)); // sequence 0, computed by computeProject()
        for (int b = 1; b < batch.sequenceCount(); ++b) {
            auto trace = run.selection.backend->compute(batch.problemForSequence(b));
            Status finite = trace ? checkFinite(*trace) : Status(trace.error());
            if (!finite)
                return fail(
                    QStringLiteral("compute: sequence %1: %2").arg(b).arg(QString::fromStdString(finite.message())));
            traces.push_back(std::move(*trace));
        }
        if (Status s = writeBatchTraceNpy(traces, dir.toStdString()); !s)
            return fail(s.message());
        reportBackend(run.selection);
        m_out << "wrote: " << dir << " (q, k, v, scores, weights, context, output .npy; " << batch.sequenceCount()
              << " sequences on a leading axis)\n";
        return kOk;
    }

    // Maps of an attention file, or of a project's one layer: weights, mean or rollout.
    int exportAttention(const QCommandLineParser &parser, const QString &out)
    {
        const QString tensor = parser.value("tensor");
        if (dataFormatFromPath(out.toStdString()) != DataFormat::Npy)
            return fail(
                QStringLiteral("export: --tensor %1 is written as .npy, found %2").arg(shown(tensor), shown(out)),
                kUsage);
        std::optional<int> layer, head;
        if (Status s = parseLayerAndHead(parser, layer, head); !s)
            return fail(s.message(), kUsage);
        auto selection = backend(parser);
        if (!selection)
            return m_exit;
        std::optional<std::string> text;
        if (parser.isSet("text"))
            text = parser.value("text").toStdString();
        auto input = loadAttentionInput(parser.positionalArguments()[0].toStdString(), *selection->backend, text);
        if (!input)
            return fail(input.message());
        if (Status s = checkAttentionTensor(input->set, tensor.toStdString(), layer, head); !s)
            return fail(s.message(), kUsage);
        auto written = writeAttentionTensor(input->set, tensor.toStdString(), layer, head, out.toStdString());
        if (!written)
            return fail(written.message());
        m_out << "wrote: " << shown(out) << " (" << QString::fromStdString(*written) << ")\n";
        return kOk;
    }

    int exportData(const QStringList &args)
    {
        QCommandLineParser parser;
        parser.addOption({"out", "File to write (.csv, .npy, .npz or .json).", "file"});
        parser.addOption(
            {"tensor", "Tensor to write (.csv and .npy; default weights; rollout: .npy).", "name", "weights"});
        parser.addOption({"head", "Head of a per-head tensor (.csv; default 0; 0-based).", "n", "0"});
        parser.addOption({"layer", "Layer of an attention file's maps (0-based).", "n"});
        parser.addOption(backendOption());
        parser.addOption({"text", "The text a model folder reads.", "TEXT"});
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
            return fail(QStringLiteral("--head: expected a whole number, found \"%1\"").arg(parser.value("head")),
                        kUsage);
        if (sameFile(out.toStdString(), parser.positionalArguments()[0].toStdString()))
            return fail(
                QStringLiteral("export: --out %1 is the project file itself; it would be overwritten").arg(shown(out)),
                kUsage);
        const QString tensor = parser.value("tensor");
        const QString input = parser.positionalArguments()[0];
        if (tensor == "rollout" || tensor == "mean" || parser.isSet("layer") || parser.isSet("text") ||
            QFileInfo(input).isDir() || isAttentionFilePath(input.toStdString()))
            return exportAttention(parser, out);
        auto run = computeProject(parser);
        if (!run)
            return m_exit;
        if (Status s =
                writeTraceData(run->project, run->trace, out.toStdString(), parser.value("tensor").toStdString(), head);
            !s)
            return fail(s.message(), s.kind() == ErrorKind::InvalidInput ? kUsage : kFailed);
        reportBackend(run->selection);
        m_out << "wrote: " << out << "\n";
        return kOk;
    }

    int show(const QStringList &args)
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

    int bench(const QStringList &args)
    {
        QCommandLineParser parser;
        parser.addOption({"tokens", "Sequence length T.", "T"});
        parser.addOption({"dim", "Model dimension d.", "D"});
        parser.addOption({"heads", "Head count H (d must be divisible by H).", "H"});
        parser.addOption({"causal", "Apply a causal mask."});
        parser.addOption({"repeat", "Timed runs (default 10).", "N", "10"});
        parser.addOption(backendOption());
        addPoolOptions(parser);
        if (!parse(parser, args, 0))
            return m_exit;
        auto number = [&](const char *name, long long min, long long max, long long &value) {
            bool ok = false;
            value = parser.value(name).toLongLong(&ok);
            if (!parser.isSet(name) && QString(name) != "repeat")
                return fail(QStringLiteral("bench: --%1 is required").arg(name), kUsage), false;
            if (!ok || value < min || value > max)
                return fail(QStringLiteral("--%1: expected a whole number from %2 to %3, found \"%4\"")
                                .arg(name)
                                .arg(min)
                                .arg(max)
                                .arg(parser.value(name)),
                            kUsage),
                       false;
            return true;
        };
        long long tokens, dim, heads, repeat;
        if (!number("tokens", 1, 1 << 20, tokens) || !number("dim", 1, 1 << 16, dim) ||
            !number("heads", 1, 4096, heads) || !number("repeat", 1, 100000, repeat))
            return kUsage;
        if (dim % heads != 0)
            return fail(QStringLiteral("bench: --dim %1 is not divisible by --heads %2").arg(dim).arg(heads), kUsage);
        // Refused before the random inputs are made: they alone can be larger than memory.
        const std::int64_t inputs =
            saturatingMul(4, saturatingAdd(saturatingMul(tokens, dim), saturatingMul(5 * dim, dim)));
        const std::int64_t headDim = dim / heads;
        std::optional<PoolOptions> pool;
        if (parser.isSet("pool") || parser.isSet("pool-mode")) {
            pool = poolOptions(parser, "bench");
            if (!pool)
                return m_exit;
        }
        const std::int64_t working =
            pool ? pooledBytes(heads, tokens, tokens, dim, dim, dim, pool->bins, omp_get_max_threads())
                 : traceBytes(heads, tokens, tokens, headDim, headDim, dim);
        if (Status s = checkFitsInMemory(saturatingAdd(inputs, working), "its inputs and intermediate tensors"); !s)
            return fail(s.message());
        auto selection = backend(parser);
        if (!selection)
            return m_exit;

        RandomProblemOptions options;
        options.tokens = tokens;
        options.modelDim = dim;
        options.heads = int(heads);
        options.causal = parser.isSet("causal");
        const AttentionProblem problem = randomProblem(options);
        reportBackend(*selection);
        if (pool)
            return benchPooled(*selection->backend, problem, *pool, repeat);
        m_out << "problem: T=" << tokens << " d=" << dim << " H=" << heads << (options.causal ? " causal" : "")
              << ", all per-head tensors kept\n";
        m_out.flush();

        std::vector<double> times;
        for (long long i = 0; i <= repeat; ++i) { // run 0 warms caches and allocators
            const auto start = std::chrono::steady_clock::now();
            auto trace = selection->backend->compute(problem);
            const auto end = std::chrono::steady_clock::now();
            if (!trace)
                return fail(trace.message());
            if (i > 0)
                times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
        }
        std::sort(times.begin(), times.end());
        const double median =
            times.size() % 2 ? times[times.size() / 2] : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
        m_out << "runs: " << repeat << "\n"
              << "min_ms: " << QString::number(times.front(), 'f', 3) << "\n"
              << "median_ms: " << QString::number(median, 'f', 3) << "\n";
        return kOk;
    }

    // bench --pool: time, peak RSS and GFLOP/s of the pooled path, beside the machine's own
    // GEMM rate measured now (the same Eigen, the same threads).
    int benchPooled(AttentionBackend &backend, const AttentionProblem &problem, const PoolOptions &pool,
                    long long repeat)
    {
        const double t = double(problem.tq()), d = double(problem.dq()), h = problem.spec.heads;
        const double dk = problem.spec.headDimQK, dv = problem.spec.headDimV;
        // The usual count: Q·Kᵀ and W·V (halved under a causal mask) and the four projections.
        // The pooled path computes Q·Kᵀ twice (once per pass), so it does 1.5x this attention work.
        const double attention = 2.0 * t * t * h * (dk + dv) * (problem.mask.causal ? 0.5 : 1.0);
        const double flops = attention + 2.0 * t * d * h * (2 * dk + dv) + 2.0 * t * h * dv * d;
        m_out << "problem: T=" << problem.tq() << " d=" << problem.dq() << " H=" << problem.spec.heads
              << (problem.mask.causal ? " causal" : "") << ", pooled to "
              << std::min<std::int64_t>(pool.bins, problem.tq()) << (pool.mode == PoolMode::Mean ? " (mean)" : " (max)")
              << "\n";
        if (backend.usesCpuForPooled() && backend.name() != "cpu")
            m_out << "note: the pooled path runs on the CPU engine (this backend has no pooled kernels)\n";
        m_out << "estimate: " << QString::fromStdString(formatBytes(pooledBytes(problem, pool)))
              << " for the pooled computation\n";
        m_out.flush();
        std::vector<double> times;
        for (long long i = 0; i < repeat; ++i) { // no warm-up run: one run at 64k tokens is long enough
            const auto start = std::chrono::steady_clock::now();
            auto result = backend.computePooled(problem, pool);
            const auto end = std::chrono::steady_clock::now();
            if (!result)
                return fail(result.message());
            times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
        }
        std::sort(times.begin(), times.end());
        const double median =
            times.size() % 2 ? times[times.size() / 2] : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
        const double gemm = measureGemmGflops(4096, problem.dq());
        struct rusage usage {
        };
        ::getrusage(RUSAGE_SELF, &usage);
        m_out << "runs: " << repeat << "\n"
              << "peak_rss_mib: " << QString::number(double(usage.ru_maxrss) / 1024.0, 'f', 1) << "\n"
              << "gflop: " << QString::number(flops / 1e9, 'f', 1) << "\n"
              << "gflop_per_s: " << QString::number(flops / (median * 1e6), 'f', 1) << "\n"
              << "gemm_gflop_per_s: " << QString::number(gemm, 'f', 1) << " (Eigen float GEMM, 4096 x " << problem.dq()
              << " times " << problem.dq() << " x " << problem.dq() << ", same threads)\n"
              << "fraction_of_gemm: " << QString::number(flops / (median * 1e6) / gemm, 'f', 2) << "\n"
              << "min_ms: " << QString::number(times.front(), 'f', 3) << "\n"
              << "median_ms: " << QString::number(median, 'f', 3) << "\n";
        return kOk;
    }

    int devices(const QStringList &args)
    {
        QCommandLineParser parser;
        if (!parse(parser, args, 0))
            return m_exit;
        for (const auto &line : formatDeviceListing(listComputeDevices()))
            m_out << QString::fromStdString(line) << "\n";
        return kOk;
    }

private:
    // compute's refusal of a trace too large for memory points at the pooled form.
    std::string withPoolHint(const Error &error) const
    {
        if (!m_suggestPool || error.kind != ErrorKind::TooLarge)
            return error.message;
        return error.message + " (for long sequences: compute --pool N writes pooled weights without the full trace)";
    }

    // A path or argument as a message may show it: one line, no terminal escapes.
    static QString shown(const QString &text) { return QString::fromStdString(printableText(text.toStdString(), 200)); }

    QTextStream &m_out;
    QTextStream &m_err;
    int m_exit = kOk;
    bool m_suggestPool = false;
};

int dispatch(const QStringList &arguments, QTextStream &out, QTextStream &err)
{
    Command command(out, err);
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
    if (name == "bench")
        return command.bench(rest);
    if (name == "render")
        return runRenderCommand(rest, out, err);
    if (name == "devices")
        return command.devices(rest);
    if (name == "stats")
        return runStatsCommand(rest, out, err);
    if (name == "tokenize")
        return runTokenizeCommand(rest, out, err);
    if (name == "model")
        return runModelCommand(rest, out, err);
    return command.fail(QStringLiteral("unknown command \"%1\" (see --help)").arg(name), kUsage);
}

} // namespace

int runCli(const QStringList &arguments, QTextStream &out, QTextStream &err)
{
    // The size checks refuse what cannot fit before allocating; this is the last resort when
    // memory runs out anyway (another process took it, a limit lower than reported).
    try {
        return dispatch(arguments, out, err);
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
