#include "app/cli/RenderCommand.h"

#include "app/cli/AnalysisCommands.h"
#include "app/cli/CliSupport.h"

#include "core/io/FileIo.h"
#include "core/io/UserText.h"

#include "app/engine/BackendChoice.h"
#include "app/render/FigureExporter.h"
#include "app/render/Translations.h"
#include "core/attention/TraceCheck.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/BatchedProject.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/QkDump.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSet>
#include <QTranslator>

#include <map>

namespace attnscope {

const char *const kRenderUsage = R"(  render INPUT [INPUT...] --out FILE.(png|svg|pdf) [view options]
  render INPUT [INPUT...] --out DIR --format png,svg,pdf [view options]
      Draw a figure of each project or attention file (.npy, .npz,
      .safetensors). With --format, one file per input and format is written
      into DIR (created if missing), named after the input file. View options:
        --view head|heads|mean|headview|teaching|mask|model|rollout
                                  (default: head for a project, model for an
                                  attention file; teaching and mask need a
                                  project; model: layers x heads grid)
        --layer L                 layer of head/heads/mean/headview (0-based;
                                  default 0)
        --head N                  head of head/headview/teaching (0-based; layers
                                  and heads count from 0 everywhere: the window,
                                  figures, the CLI and the JSON)
        --sequence N              sequence of a batched project (0-based; default
                                  0, said on stdout when the project is a batch)
        --quantity weights|scores --colormap viridis|magma|cividis|grey|diverging
        --color-scale linear|log|percentile       (default linear)
        --merge-words             word-level maps from sub-word token labels
        --scale absolute|shared|per-head          --overlay (headview: all heads)
        --dpi N (default 150)     --width PX --height PX (default: natural size)
        --no-colorbar --no-labels --no-values     --no-axis-titles (no "query"/"key")
        --title TEXT ("" for none)
        --font-size PT (default 10)               --background white|transparent
        --language en|zh_CN       the figure's words: titles, axes, legends
                                  (default en, whatever LANG says)
        --backend auto|cpu|vulkan
        --softmax                 softmax over the rows of an attention file of
                                  scores (a file whose rows are not attention is
                                  said on stderr, with its row sums)
)";

namespace {

using cli::kFailed;
using cli::kOk;
using cli::kUsage;

struct Failure {
    QString message;
    int code = kFailed;
};

struct Job {
    QString projectPath; // the input: a project or an attention file
    Project project;
    AttentionTrace trace;
    std::optional<AttentionSet> set; // an attention file's maps (no project)
};

// The stem a batch names its files after: "runs/a.attnscope.json" -> "a".
QString projectStem(const QString &path)
{
    QString name = QFileInfo(path).fileName();
    for (const char *suffix : {".attnscope.json", ".json"})
        if (name.endsWith(QLatin1String(suffix), Qt::CaseInsensitive))
            return name.chopped(int(qstrlen(suffix)));
    return QFileInfo(path).completeBaseName();
}

class RenderCommand
{
public:
    explicit RenderCommand(BackendOptions backendOptions) : m_backendOptions(std::move(backendOptions)) {}

    int run(const QStringList &args, QTextStream &out, QTextStream &err)
    {
        QCommandLineParser parser;
        parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
        parser.addHelpOption();
        parser.addOptions({
            {"out", "Figure file, or directory with --format.", "path"},
            {"format", "png, svg and/or pdf, comma-separated (batch).", "list"},
            {"view", "head, heads, mean, headview, teaching or mask.", "view", "head"},
            {"head", "Head (0-based).", "n", "0"},
            {"layer", "Layer (0-based).", "n", "0"},
            {"sequence", "Sequence of a batch (0-based).", "n", "0"},
            {"color-scale", "linear, log or percentile.", "scale", "linear"},
            {"merge-words", "Word-level maps from sub-word token labels."},
            {"quantity", "weights or scores.", "q", "weights"},
            {"colormap", "Colour map.", "name", "viridis"},
            {"scale", "absolute, shared or per-head.", "scope", "absolute"},
            {"overlay", "Head view: every head in its own colour."},
            {"dpi", "Dots per inch.", "n", "150"},
            {"width", "Width in pixels at --dpi.", "px"},
            {"height", "Height in pixels at --dpi.", "px"},
            {"no-colorbar", "No colour bar (mask: no legend)."},
            {"no-labels", "No token labels."},
            {"no-values", "No values in cells."},
            {"no-axis-titles", "No \"query\" and \"key\" axis titles."},
            {"title", "Figure title (empty: none).", "text"},
            {"font-size", "Font size in points.", "pt", "10"},
            {"background", "white or transparent.", "bg", "white"},
            {"language", "en or zh_CN: the figure's own words.", "code", "en"},
            {"backend", "auto, cpu or vulkan (default auto).", "name", "auto"},
        });
        parser.addOption(softmaxOption());
        if (!parser.parse(args))
            return fail(err, {parser.errorText(), kUsage});
        if (parser.isSet("help")) {
            out << "Usage: attnscope-cli render ...\n" << kRenderUsage;
            return kOk;
        }
        if (auto f = parseOptions(parser))
            return fail(err, *f);
        if (auto f = computeAll(parser, out, err))
            return fail(err, *f);
        if (auto f = checkHeads())
            return fail(err, *f);
        // What cannot be drawn (words without labels, a rollout of cross-attention) is refused
        // before the first file is written.
        for (const Job &job : m_jobs)
            if (const QString problem = exporterFor(job).figure(optionsFor(job))->problem(); !problem.isEmpty())
                return fail(err, {QStringLiteral("%1: %2").arg(job.projectPath, problem)});
        // Every name is known before anything is written: a batch that would overwrite one of
        // its own figures is refused whole.
        std::vector<std::pair<size_t, QString>> files;
        QSet<QString> seen;
        for (size_t i = 0; i < m_jobs.size(); ++i)
            for (FigureFormat format : m_formats) {
                const QString path = m_batch ? QDir(m_out).filePath(projectStem(m_jobs[i].projectPath) +
                                                                    QLatin1Char('.') + figureFormatSuffix(format))
                                             : m_out;
                if (seen.contains(path))
                    return fail(err, {QStringLiteral("render: two projects would both write %1").arg(path), kUsage});
                for (const QString &input : m_projects)
                    if (sameFile(path.toStdString(), input.toStdString()))
                        return fail(err, {QStringLiteral("render: %1 is an input project; it would be overwritten")
                                              .arg(QString::fromStdString(printableText(path.toStdString(), 200))),
                                          kUsage});
                seen.insert(path);
                files.emplace_back(i, path);
            }
        cli::Outputs outputs{m_out, {}, m_batch};
        for (const auto &[i, path] : files)
            outputs.files.push_back(path);
        if (auto exit = cli::checkBeforeWriting(err, m_read, "render", outputs))
            return *exit;
        if (m_batch && !QDir().mkpath(m_out))
            return fail(err, {QStringLiteral("render: --out %1: cannot create the directory").arg(m_out)});
        for (const auto &[i, path] : files) {
            const FigureExporter exporter = exporterFor(m_jobs[i]);
            const FigureOptions options = optionsFor(m_jobs[i]);
            QString error;
            if (!exporter.write(path, options, m_size, &error))
                return fail(err, {error});
            const QSize px = exporter.pixelSize(options, m_size);
            const QSizeF pt = exporter.pageSize(options, m_size);
            out << "wrote: " << path << " (" << px.width() << " x " << px.height() << " px at " << m_size.dpi
                << " dpi, " << QString::number(pt.width(), 'f', 0) << " x " << QString::number(pt.height(), 'f', 0)
                << " pt)\n";
        }
        return kOk;
    }

private:
    FigureExporter exporterFor(const Job &job) const
    {
        if (job.set)
            return FigureExporter(*job.set, QFileInfo(job.projectPath).fileName());
        return FigureExporter(job.project, job.trace);
    }

    // An attention file's figure is the model grid unless a view is asked for.
    FigureOptions optionsFor(const Job &job) const
    {
        FigureOptions o = m_options;
        if (job.set && !m_viewGiven)
            o.view = FigureView::Model;
        return o;
    }

    static int fail(QTextStream &err, const Failure &f)
    {
        err << "attnscope-cli: " << f.message << "\n";
        err.flush();
        return f.code;
    }

    static std::optional<Failure> number(const QCommandLineParser &parser, const char *name, int min, int max,
                                         int &value)
    {
        bool ok = false;
        value = parser.value(name).toInt(&ok);
        if (!ok || value < min || value > max)
            return Failure{QStringLiteral("--%1: expected a whole number from %2 to %3, found \"%4\"")
                               .arg(name)
                               .arg(min)
                               .arg(max)
                               .arg(parser.value(name)),
                           kUsage};
        return std::nullopt;
    }

    static Failure badChoice(const char *option, const QString &found, const QString &choices)
    {
        return {QStringLiteral("--%1: expected %2, found \"%3\"").arg(option, choices, found), kUsage};
    }

    std::optional<Failure> parseOptions(const QCommandLineParser &parser)
    {
        m_projects = parser.positionalArguments();
        if (m_projects.isEmpty())
            return Failure{
                QStringLiteral("render: expected at least one INPUT (a project or an attention file; see --help)"),
                kUsage};
        if (!parser.isSet("out") || parser.value("out").isEmpty())
            return Failure{QStringLiteral("render: --out FILE or --out DIR is required"), kUsage};
        m_out = parser.value("out");
        if (parser.isSet("format")) {
            m_batch = true;
            for (const QString &s : parser.value("format").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                const auto f = figureFormatFromSuffix(s.trimmed());
                if (!f || s.trimmed().contains(QLatin1Char('.')))
                    return badChoice("format", s, QStringLiteral("png, svg or pdf"));
                if (!m_formats.contains(*f))
                    m_formats << *f;
            }
            if (m_formats.isEmpty())
                return badChoice("format", parser.value("format"), QStringLiteral("png, svg or pdf"));
            if (QFileInfo(m_out).exists() && !QFileInfo(m_out).isDir())
                return Failure{
                    QStringLiteral("render: --out %1 is a file; with --format it names a directory").arg(m_out),
                    kUsage};
        } else {
            if (m_projects.size() > 1)
                return Failure{QStringLiteral("render: %1 projects need --out DIR and --format png,svg,pdf")
                                   .arg(m_projects.size()),
                               kUsage};
            const auto f = figureFormatFromSuffix(QFileInfo(m_out).suffix());
            if (!f)
                return Failure{
                    QStringLiteral(
                        "render: --out %1: expected a .png, .svg or .pdf file (or --format with a directory)")
                        .arg(m_out),
                    kUsage};
            m_formats << *f;
        }
        const auto view = FigureOptions::viewFromKey(parser.value("view"));
        if (!view)
            return badChoice("view", parser.value("view"),
                             QStringLiteral("head, heads, mean, headview, teaching, mask, model or rollout"));
        m_options.view = *view;
        m_viewGiven = parser.isSet("view");
        const auto colorScale = ColorScale::fromKey(parser.value("color-scale"));
        if (!colorScale)
            return badChoice("color-scale", parser.value("color-scale"), QStringLiteral("linear, log or percentile"));
        m_options.colorScale = *colorScale;
        m_options.mergeWords = parser.isSet("merge-words");
        if (parser.value("quantity") == QLatin1String("weights"))
            m_options.quantity = HeatmapQuantity::Weights;
        else if (parser.value("quantity") == QLatin1String("scores"))
            m_options.quantity = HeatmapQuantity::Scores;
        else
            return badChoice("quantity", parser.value("quantity"), QStringLiteral("weights or scores"));
        const auto map = ColorMap::fromKey(parser.value("colormap"));
        if (!map)
            return badChoice("colormap", parser.value("colormap"),
                             QStringLiteral("viridis, magma, cividis, grey or diverging"));
        m_options.colorMap = *map;
        const QString scale = parser.value("scale");
        if (scale == QLatin1String("absolute"))
            m_options.scale = ScaleScope::Absolute;
        else if (scale == QLatin1String("shared"))
            m_options.scale = ScaleScope::Shared;
        else if (scale == QLatin1String("per-head"))
            m_options.scale = ScaleScope::PerHead;
        else
            return badChoice("scale", scale, QStringLiteral("absolute, shared or per-head"));
        // The figure's own words (titles, axes, legends) in the language asked; English by default,
        // whatever LANG says, so that a script draws the same figure everywhere.
        const QString language = parser.value("language");
        if (!interfaceLanguages().contains(language))
            return badChoice("language", language, interfaceLanguages().join(QStringLiteral(" or ")));
        QLocale::setDefault(QLocale(language)); // which half of a bilingual title a default title takes
        if (language != QLatin1String("en")) {
            QTranslator *catalogue = loadCatalogue(QLocale(language), QCoreApplication::instance());
            if (!catalogue)
                return Failure{QStringLiteral("--language %1: the catalogue is missing from this build").arg(language)};
            QCoreApplication::installTranslator(catalogue);
        }
        const QString background = parser.value("background");
        if (background != QLatin1String("white") && background != QLatin1String("transparent"))
            return badChoice("background", background, QStringLiteral("white or transparent"));
        m_options.transparent = background == QLatin1String("transparent");
        if (auto f = number(parser, "head", 0, 1 << 20, m_options.head))
            return f;
        m_headGiven = parser.isSet("head");
        if (auto f = number(parser, "layer", 0, 1 << 20, m_options.layer))
            return f;
        m_layerGiven = parser.isSet("layer");
        if (auto f = number(parser, "sequence", 0, 1 << 20, m_sequence))
            return f;
        m_sequenceGiven = parser.isSet("sequence");
        if (auto f = number(parser, "dpi", FigureSize::kMinDpi, FigureSize::kMaxDpi, m_size.dpi))
            return f;
        if (parser.isSet("width"))
            if (auto f = number(parser, "width", 1, FigureSize::kMaxPixels, m_size.width))
                return f;
        if (parser.isSet("height"))
            if (auto f = number(parser, "height", 1, FigureSize::kMaxPixels, m_size.height))
                return f;
        if (auto f = number(parser, "font-size", 4, 96, m_options.fontSize))
            return f;
        m_options.colorBar = !parser.isSet("no-colorbar");
        m_options.labels = !parser.isSet("no-labels");
        m_options.values = !parser.isSet("no-values");
        m_options.axisTitles = !parser.isSet("no-axis-titles");
        m_options.overlayHeads = parser.isSet("overlay");
        if (parser.isSet("title"))
            m_options.title = parser.value("title");
        auto request = parseBackendRequest(parser.value("backend").toStdString());
        if (!request)
            return Failure{QString::fromStdString(request.message()), kUsage};
        m_request = *request;
        return std::nullopt;
    }

    std::optional<Failure> computeAll(const QCommandLineParser &parser, QTextStream &out, QTextStream &err)
    {
        // Every input is read and computed before the first figure is written.
        std::vector<Job> jobs;
        bool projects = false;
        const bool softmax = parser.isSet("softmax");
        for (const QString &path : m_projects)
            if (Status s = checkSoftmaxOption(path.toStdString(), softmax); !s)
                return Failure{QString::fromStdString(s.message()), kUsage};
        for (const QString &path : m_projects) {
            if (QkDump::isDump(path.toStdString())) {
                auto set = readQkDumpSet(path.toStdString());
                if (!set)
                    return Failure{QString::fromStdString(set.message())};
                if (m_sequenceGiven && m_sequence > 0)
                    return Failure{QStringLiteral("--sequence %1: %2 is a Q/K dump, not a batched project")
                                       .arg(m_sequence)
                                       .arg(path),
                                   kUsage};
                jobs.push_back({path, {}, {}, std::move(*set)});
                continue;
            }
            if (isAttentionFilePath(path.toStdString())) {
                std::string note;
                auto set = readCheckedAttentionFile(path.toStdString(), softmax, note);
                if (!set)
                    return Failure{QString::fromStdString(set.message())};
                if (!note.empty())
                    err << QString::fromStdString(note) << "\n";
                if (m_sequenceGiven && m_sequence > 0)
                    return Failure{QStringLiteral("--sequence %1: %2 is an attention file, not a batched project")
                                       .arg(m_sequence)
                                       .arg(path),
                                   kUsage};
                jobs.push_back({path, {}, {}, std::move(*set)});
                continue;
            }
            auto project = readProjectFile(path.toStdString());
            if (!project)
                return Failure{QString::fromStdString(project.message())};
            if (auto refused = showSequence(path, *project, out))
                return refused;
            jobs.push_back({path, std::move(*project), {}, std::nullopt});
            projects = true;
        }
        if (!projects) { // attention files only: nothing to compute
            m_jobs = std::move(jobs);
            return std::nullopt;
        }
        auto selection = createBackend(m_request, m_backendOptions);
        if (!selection)
            return Failure{QString::fromStdString(selection.message())};
        // Which backend and device run, and why, as `compute` reports them (stdout).
        out << "backend: " << QString::fromStdString(selection->backend->name()) << "\n"
            << "device: " << QString::fromStdString(selection->backend->deviceName()) << "\n";
        if (!selection->notice.empty())
            out << "note: " << QString::fromStdString(selection->notice) << "\n";
        for (Job &job : jobs) {
            if (job.set)
                continue;
            auto trace = selection->backend->compute(job.project.problem);
            // A fallback during this compute (Vulkan lost, out of memory), said once.
            if (const std::string late = takeBackendNotice(*selection->backend); !late.empty())
                out << "note: " << QString::fromStdString(late) << "\n";
            if (!trace)
                return Failure{QStringLiteral("%1: %2").arg(job.projectPath, QString::fromStdString(trace.message()))};
            // Finite inputs can overflow: no figure of NaN cells, and a non-zero exit.
            if (const Status finite = checkFinite(*trace); !finite)
                return Failure{QStringLiteral("%1: %2").arg(job.projectPath, QString::fromStdString(finite.message()))};
            job.trace = std::move(*trace);
        }
        out.flush();
        m_jobs = std::move(jobs);
        return std::nullopt;
    }

    // The sequence of a batch the figure shows: --sequence N, or the first, said on stdout. A
    // sequence the project does not have is refused.
    std::optional<Failure> showSequence(const QString &path, Project &project, QTextStream &out) const
    {
        const int count = BatchedProject(project).sequenceCount();
        if (m_sequence >= count)
            return Failure{count == 1 ? QStringLiteral("--sequence %1: %2 is not a batch (one sequence, numbered 0)")
                                            .arg(m_sequence)
                                            .arg(path)
                                      : QStringLiteral("--sequence %1: %2 has %3 sequences, numbered 0 to %4")
                                            .arg(m_sequence)
                                            .arg(path)
                                            .arg(count)
                                            .arg(count - 1),
                           kUsage};
        if (count > 1 && !m_sequenceGiven)
            out << "note: " << path << " is a batch of " << count
                << " sequences; drawing sequence 0 (--sequence N draws another)\n";
        if (m_sequence > 0)
            project = withSequenceShown(std::move(project), m_sequence);
        return std::nullopt;
    }

    std::optional<Failure> checkHeads() const
    {
        for (const Job &job : m_jobs) {
            const int heads = job.set ? job.set->heads() : job.trace.heads();
            const int layers = job.set ? job.set->layers() : 1;
            const FigureView view = optionsFor(job).view;
            if (job.set && !FigureOptions::setViews().contains(view))
                return Failure{QStringLiteral("--view %1: %2 is an attention file; its views are model, rollout, head, "
                                              "heads, mean and headview")
                                   .arg(FigureOptions::viewKey(view), job.projectPath),
                               kUsage};
            if (m_layerGiven && m_options.layer >= layers)
                return Failure{QStringLiteral("--layer %1: %2 has %3 layer(s), numbered 0 to %4")
                                   .arg(m_options.layer)
                                   .arg(job.projectPath)
                                   .arg(layers)
                                   .arg(layers - 1),
                               kUsage};
            if (m_headGiven && m_options.head >= heads)
                return Failure{QStringLiteral("--head %1: %2 has %3 head(s), numbered 0 to %4")
                                   .arg(m_options.head)
                                   .arg(job.projectPath)
                                   .arg(heads)
                                   .arg(heads - 1),
                               kUsage};
        }
        return std::nullopt;
    }

    const FilesRead m_read; // every file read: no figure may replace one
    QStringList m_projects;
    QString m_out;
    bool m_batch = false;
    bool m_headGiven = false;
    bool m_layerGiven = false;
    int m_sequence = 0;
    bool m_sequenceGiven = false;
    bool m_viewGiven = false;
    QList<FigureFormat> m_formats;
    FigureOptions m_options;
    FigureSize m_size;
    BackendRequest m_request = BackendRequest::Auto;
    BackendOptions m_backendOptions;
    std::vector<Job> m_jobs;
};

} // namespace

int runRenderCommand(const QStringList &args, QTextStream &out, QTextStream &err, const BackendOptions &backendOptions)
{
    return RenderCommand(backendOptions).run(args, out, err);
}

} // namespace attnscope
