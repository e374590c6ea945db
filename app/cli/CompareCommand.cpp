#include "app/cli/CompareCommand.h"

#include "app/cli/AnalysisCommands.h"
#include "app/cli/CliSupport.h"
#include "core/analysis/Comparison.h"
#include "core/formats/AttentionExport.h"
#include "core/formats/QkDump.h"
#include "core/formats/TraceExport.h"
#include "core/io/UserText.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <numeric>

namespace attnscope {

const char *const kCompareUsage =
    R"(  compare A B --out DIR [--text TEXT | --text-a TEXT --text-b TEXT] [--backend ...]
      Compare two inputs of any kind stats reads (attention files, model run
      folders, projects, model folders run on a text) position by position:
      write difference.npy (B - A, float32 [L,H,Tq,Tk]) and comparison.json
      (the statistics of A and B per head, and of the difference: meanAbs,
      maxAbs, totalVariation) into DIR, and print the heads that changed most.
      A and B need the same layers, heads and token counts; tokens may differ.
      --text gives a model folder its text; --text-a and --text-b one each.
)";

namespace {

using cli::kFailed;
using cli::kOk;
using cli::kUsage;

// How many of the heads that changed most are printed.
constexpr std::size_t kTopHeads = 10;

QString number(double v)
{
    return QString::number(v, 'f', 4);
}

} // namespace

int runCompareCommand(const QStringList &args, QTextStream &out, QTextStream &err, const BackendOptions &backendOptions)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    const FilesRead read; // every file read from here on: no output may replace one
    QCommandLineParser parser;
    parser.addOption({"out", "Directory for difference.npy and comparison.json.", "DIR"});
    parser.addOption({"text", "The text a model folder reads (A and B).", "TEXT"});
    parser.addOption({"text-a", "The text A reads, when A is a model folder.", "TEXT"});
    parser.addOption({"text-b", "The text B reads, when B is a model folder.", "TEXT"});
    parser.addOption({"backend", "auto, cpu or vulkan (projects and models).", "NAME", "auto"});
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.addHelpOption();
    if (!parser.parse(args))
        return fail(parser.errorText().toStdString(), kUsage);
    if (parser.isSet("help")) {
        out << kCompareUsage;
        return kOk;
    }
    if (parser.positionalArguments().size() != 2)
        return fail("compare: expected 2 arguments (A B), found " +
                        std::to_string(parser.positionalArguments().size()) + " (see --help)",
                    kUsage);
    if (!parser.isSet("out"))
        return fail("compare: --out DIR is required", kUsage);
    if (parser.isSet("text") && (parser.isSet("text-a") || parser.isSet("text-b")))
        return fail("compare: give --text (both) or --text-a and --text-b, not both", kUsage);
    const std::string paths[2] = {parser.positionalArguments()[0].toStdString(),
                                  parser.positionalArguments()[1].toStdString()};
    // --text goes to whichever of A and B is a model folder (both, for one text on two models).
    std::optional<std::string> texts[2];
    for (int side = 0; side < 2; ++side) {
        const char *own = side == 0 ? "text-a" : "text-b";
        const bool modelFolder = QFileInfo(parser.positionalArguments()[side]).isDir() &&
                                 !isModelRunFolder(paths[side]) && !QkDump::isDump(paths[side]);
        if (parser.isSet(own))
            texts[side] = parser.value(own).toStdString();
        else if (parser.isSet("text") && modelFolder)
            texts[side] = parser.value("text").toStdString();
    }
    if (parser.isSet("text") && !texts[0] && !texts[1])
        return fail("compare: --text is for a model folder; neither A nor B is one", kUsage);
    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request)
        return fail(request.message(), kUsage);
    auto selection = createBackend(*request, backendOptions);
    if (!selection)
        return fail(selection.message(), kFailed);

    AttentionInput inputs[2];
    for (int side = 0; side < 2; ++side) {
        auto loaded = loadAttentionInput(paths[side], *selection->backend, texts[side]);
        if (!loaded)
            return fail(std::string(side == 0 ? "A: " : "B: ") + loaded.message(), kFailed);
        if (!loaded->note.empty())
            err << (side == 0 ? "A: " : "B: ") << QString::fromStdString(loaded->note) << "\n";
        inputs[side] = std::move(*loaded);
    }
    auto comparison = compareSets(inputs[0].set, inputs[1].set);
    if (!comparison)
        return fail(comparison.message(), kFailed);
    const std::vector<HeadDifference> stats = comparisonStatistics(*comparison);
    for (const AttentionInput &input : inputs)
        if (Status s = input.set.checkSource(); !s)
            return fail(s.message(), kFailed);

    const AttentionSet &d = comparison->difference;
    std::vector<std::int64_t> shape;
    if (d.samples() > 1)
        shape.push_back(d.samples());
    for (std::int64_t n : {std::int64_t(d.layers()), std::int64_t(d.heads()), d.queries(), d.keys()})
        shape.push_back(n);
    const QString outDir = parser.value("out");
    const std::vector<QString> outFiles{QDir(outDir).filePath("difference.npy"),
                                        QDir(outDir).filePath("comparison.json")};
    if (auto exit = cli::checkBeforeWriting(err, read, "compare", {outDir, outFiles, true}))
        return *exit;
    const FolderFile json{"comparison.json", comparisonJson(*comparison, stats, paths[0], paths[1])};
    const NpyFolderTensor difference{"difference", shape, {}, comparison->differenceValues->data()};
    if (Status s = writeNpyFolder({difference}, outDir.toStdString(), {json}); !s)
        return fail(s.message(), kFailed);

    const auto describe = [&](int side) {
        const AttentionSet &set = inputs[side].set;
        return QString::fromStdString(printableText(paths[side], 200)) + " (" +
               QString::fromStdString(inputs[side].kind) + ", " + QString::number(set.queries()) +
               (set.queries() == set.keys() ? QString() : " x " + QString::number(set.keys())) + " tokens)";
    };
    out << "A: " << describe(0) << "\n"
        << "B: " << describe(1) << "\n"
        << "compared: " << d.layers() << " layer(s) x " << d.heads() << " head(s), B - A\n";
    std::vector<std::size_t> order(stats.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return stats[x].totalVariation > stats[y].totalVariation; });
    order.resize(std::min(order.size(), kTopHeads));
    const bool samples = d.samples() > 1;
    out << "heads that changed most (by total variation):\n"
        << (samples ? "sample  " : "") << "layer  head  totalVariation  maxAbs  entropyA  entropyB\n";
    for (std::size_t n : order) {
        const HeadDifference &h = stats[n];
        if (samples)
            out << QString::number(h.sample).rightJustified(6) << "  ";
        out << QString::number(h.layer).rightJustified(5) << "  " << QString::number(h.head).rightJustified(4) << "  "
            << number(h.totalVariation).rightJustified(14) << "  " << number(h.maxAbs).rightJustified(6) << "  "
            << number(h.a.entropy).rightJustified(8) << "  " << number(h.b.entropy).rightJustified(8) << "\n";
    }
    QStringList dims;
    for (std::int64_t n : shape)
        dims << QString::number(n);
    out << "wrote: " << QString::fromStdString(printableText(outDir.toStdString(), 200)) << " (difference.npy ["
        << dims.join(",") << "], comparison.json)\n";
    return kOk;
}

} // namespace attnscope
