#include "app/cli/CliCommand.h"

#include "core/attention/RandomProblem.h"
#include "core/attention/TraceCheck.h"
#include "core/attention/Validation.h"
#include "core/formats/BatchedProject.h"
#include "core/formats/TraceExport.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"

#include <QDir>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>

namespace attnscope::cli {

namespace {

// The NAME.npy files a command writes into dir.
Outputs folderOutputs(const QString &dir, const std::vector<std::string> &names)
{
    Outputs outputs{dir, {}, true};
    for (const std::string &name : names)
        outputs.files.push_back(QDir(dir).filePath(QString::fromStdString(name + ".npy")));
    return outputs;
}

} // namespace

Result<PoolOptions> parsePoolOptions(const QCommandLineParser &parser, const char *command)
{
    if (parser.isSet("pool-mode") && !parser.isSet("pool"))
        return Error{std::string(command) + ": --pool-mode needs --pool N"};
    PoolOptions options;
    bool ok = false;
    options.bins = parser.value("pool").toLongLong(&ok);
    if (!ok || options.bins < 1 || options.bins > (1 << 16))
        return Error{"--pool: expected a whole number from 1 to 65536, found \"" +
                     printableText(parser.value("pool").toStdString(), 200) + "\""};
    const QString mode = parser.value("pool-mode");
    if (mode != "max" && mode != "mean")
        return Error{"--pool-mode: expected max or mean, found \"" + printableText(mode.toStdString(), 200) + "\""};
    options.mode = mode == "mean" ? PoolMode::Mean : PoolMode::Max;
    return options;
}

std::optional<PoolOptions> Command::poolOptions(const QCommandLineParser &parser, const char *command)
{
    auto options = parsePoolOptions(parser, command);
    if (!options) {
        m_exit = fail(QString::fromStdString(options.message()), kUsage);
        return std::nullopt;
    }
    return *options;
}

void Command::addPoolOptions(QCommandLineParser &parser)
{
    parser.addOption({"pool", "Pooled long-sequence form: at most N x N cells per head.", "N"});
    parser.addOption({"pool-mode", "max (default) or mean.", "mode", "max"});
}

int Command::computePooled(const QCommandLineParser &parser, const QString &dir)
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
            return fail(
                batch.isBatched()
                    ? QStringLiteral("compute: sequence %1: %2").arg(b).arg(QString::fromStdString(result.message()))
                    : QString::fromStdString(result.message()));
        const bool finite =
            result->output.allFinite() && result->entropy.allFinite() &&
            std::all_of(result->pooled.begin(), result->pooled.end(), [](const MatrixF &m) { return m.allFinite(); });
        if (!finite)
            return fail(
                batch.isBatched()
                    ? QStringLiteral("compute: sequence %1: the result overflowed to Inf or NaN (the inputs are "
                                     "too large)")
                          .arg(b)
                    : QStringLiteral("compute: the result overflowed to Inf or NaN (the inputs are too large)"));
        results.push_back(std::move(*result));
    }
    if (auto exit = checkBeforeWriting("compute", folderOutputs(dir, {"weights_pooled", "entropy", "output"})))
        return *exit;
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

int Command::compute(const QStringList &args)
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
    if (auto exit = checkBeforeWriting("compute", folderOutputs(dir, traceTensorNames())))
        return *exit;
    if (Status s = writeTraceNpy(run->trace, dir.toStdString()); !s)
        return fail(s.message());
    reportBackend(run->selection);
    m_out << "wrote: " << dir << " (q, k, v, scores, weights, context, output .npy)\n";
    return kOk;
}

int Command::writeBatch(ComputedProject &run, const QString &dir)
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
    if (auto exit = checkBeforeWriting("compute", folderOutputs(dir, traceTensorNames())))
        return *exit;
    if (Status s = writeBatchTraceNpy(traces, dir.toStdString()); !s)
        return fail(s.message());
    reportBackend(run.selection);
    m_out << "wrote: " << dir << " (q, k, v, scores, weights, context, output .npy; " << batch.sequenceCount()
          << " sequences on a leading axis)\n";
    return kOk;
}

int Command::bench(const QStringList &args)
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
    if (!number("tokens", 1, 1 << 20, tokens) || !number("dim", 1, 1 << 16, dim) || !number("heads", 1, 4096, heads) ||
        !number("repeat", 1, 100000, repeat))
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

    // The process's CPU time too (all its threads): on a machine other work shares, one thread's
    // CPU time is what its wall time would be alone.
    auto cpuMs = [] {
        timespec ts{};
        ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
    };
    std::vector<double> times, cpuTimes;
    for (long long i = 0; i <= repeat; ++i) { // run 0 warms caches and allocators
        const double cpuStart = cpuMs();
        const auto start = std::chrono::steady_clock::now();
        auto trace = selection->backend->compute(problem);
        const auto end = std::chrono::steady_clock::now();
        const double cpuEnd = cpuMs();
        if (!trace)
            return fail(trace.message());
        if (i > 0) {
            times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
            cpuTimes.push_back(cpuEnd - cpuStart);
        }
        // As a loop that reads each trace and moves on would: the next compute writes its maps
        // into this one's memory (AttentionBackend::recycle).
        selection->backend->recycle(std::move(trace).value());
    }
    auto medianOf = [](std::vector<double> &v) {
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    };
    const double median = medianOf(times), cpuMedian = medianOf(cpuTimes);
    // What the machine's limit is made of (tests/bench/bench_attention.py): the GEMMs' FLOPs (the
    // four projections, Q·Kᵀ in full since the trace keeps every score, weights·V over the keys
    // a row may see) and the bytes of the maps the trace keeps (scores and weights, H x T x T).
    const double t = double(tokens), d = double(dim), h = double(heads), hd = double(headDim);
    const double flops = 8.0 * t * d * d + 2.0 * t * t * h * hd * (options.causal ? 1.5 : 2.0);
    m_out << "runs: " << repeat << "\n"
          << "min_ms: " << QString::number(times.front(), 'f', 3) << "\n"
          << "gemm_flops: " << QString::number(flops, 'g', 6) << "\n"
          << "map_bytes: " << QString::number(2.0 * h * t * t * 4.0, 'g', 6) << "\n"
          << "peak_rss_mib: " << QString::number(peakResidentMiB(), 'f', 1) << "\n"
          << "median_cpu_ms: " << QString::number(cpuMedian, 'f', 3) << "\n"
          << "median_ms: " << QString::number(median, 'f', 3) << "\n"; // the last line, as documented
    return kOk;
}

int Command::benchPooled(AttentionBackend &backend, const AttentionProblem &problem, const PoolOptions &pool,
                         long long repeat)
{
    const double t = double(problem.tq()), d = double(problem.dq()), h = problem.spec.heads;
    const double dk = problem.spec.headDimQK, dv = problem.spec.headDimV;
    // The usual count: Q·Kᵀ and W·V (halved under a causal mask) and the four projections.
    // The pooled path computes Q·Kᵀ twice (once per pass), so it does 1.5x this attention work.
    const double attention = 2.0 * t * t * h * (dk + dv) * (problem.mask.causal ? 0.5 : 1.0);
    const double flops = attention + 2.0 * t * d * h * (2 * dk + dv) + 2.0 * t * h * dv * d;
    m_out << "problem: T=" << problem.tq() << " d=" << problem.dq() << " H=" << problem.spec.heads
          << (problem.mask.causal ? " causal" : "") << ", pooled to " << std::min<std::int64_t>(pool.bins, problem.tq())
          << (pool.mode == PoolMode::Mean ? " (mean)" : " (max)") << "\n";
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
    m_out << "runs: " << repeat << "\n"
          << "peak_rss_mib: " << QString::number(peakResidentMiB(), 'f', 1) << "\n"
          << "gflop: " << QString::number(flops / 1e9, 'f', 1) << "\n"
          << "gflop_per_s: " << QString::number(flops / (median * 1e6), 'f', 1) << "\n"
          << "gemm_gflop_per_s: " << QString::number(gemm, 'f', 1) << " (Eigen float GEMM, 4096 x " << problem.dq()
          << " times " << problem.dq() << " x " << problem.dq() << ", same threads)\n"
          << "fraction_of_gemm: " << QString::number(flops / (median * 1e6) / gemm, 'f', 2) << "\n"
          << "min_ms: " << QString::number(times.front(), 'f', 3) << "\n"
          << "median_ms: " << QString::number(median, 'f', 3) << "\n";
    return kOk;
}

} // namespace attnscope::cli
