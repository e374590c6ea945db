#include "app/cli/AnalysisCommands.h"

#include "app/cli/CliSupport.h"
#include "app/engine/BackendChoice.h"
#include "core/analysis/AttentionStats.h"
#include "core/analysis/RowSums.h"
#include "core/attention/TraceCheck.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/QkDump.h"
#include "core/io/FileIo.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"
#include "core/models/TransformerModel.h"

#include <QCommandLineParser>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <charconv>
#include <filesystem>

namespace attnscope {

const char *const kStatsUsage = R"(  stats INPUT [--text TEXT] --out FILE.(json|csv) [--backend auto|cpu|vulkan]
              [--softmax]
      Per (layer, head) statistics of an attention file, a project's heads or a
      model folder run on TEXT: entropy, distance, confidence, first (the sink
      mass), self, previous, spread (of |i-j|) and induction (on a text that
      repeats; null without repeats) (0-based indices). An attention file's
      rows are checked: where
      they are not softmax rows, a line on stderr names their sums, and
      --softmax applies softmax to a file of scores.
)";

namespace {

using cli::kFailed;
using cli::kOk;
using cli::kUsage;

} // namespace

QCommandLineOption softmaxOption()
{
    return {"softmax", "Apply softmax to the rows of an attention file of scores (pre-softmax values)."};
}

Status checkSoftmaxOption(const std::string &path, bool softmax)
{
    if (softmax && !isAttentionFilePath(path))
        return Error{"--softmax is for attention files (.npy, .npz, .safetensors) of scores; " +
                     printableText(path, 200) + " is not one"};
    return Ok{};
}

Result<AttentionSet> readCheckedAttentionFile(const std::string &path, bool softmax, std::string &note)
{
    AttentionFileInfo info;
    auto set = readAttentionFile(path, &info);
    if (!set)
        return set.error();
    const RowSumCheck &rows = info.rows;
    const std::string name = printableText(path, 200);
    if (softmax) {
        if (rows.isAttention())
            return Error{"--softmax: " + name + " holds attention weights already (" + rows.summary() +
                             "); leave out --softmax",
                         ErrorKind::InvalidInput};
        auto soft = softmaxRows(*set);
        if (!soft)
            return soft.error();
        note = name + ": softmax applied to every row (" + rows.summary() + ")";
        return soft;
    }
    if (!rows.isAttention())
        note = name + ": " + rows.summary() +
               "; these look like scores before softmax, not attention weights (--softmax applies it)";
    else if (!rows.isExact())
        note = name + ": " + rows.summary();
    return set;
}

bool isModelRunFolder(const std::string &path)
{
    std::error_code ec;
    const std::filesystem::path folder(path);
    return std::filesystem::is_directory(folder, ec) &&
           std::filesystem::is_regular_file(folder / "attentions.npy", ec) &&
           !std::filesystem::exists(folder / "config.json", ec);
}

Result<AttentionSet> readModelRunFolder(const std::string &path, bool softmax, std::string &note)
{
    const std::filesystem::path folder(path);
    auto set = readCheckedAttentionFile((folder / "attentions.npy").string(), softmax, note);
    if (!set)
        return set.error();
    const std::string tokensPath = (folder / "tokens.json").string();
    std::error_code ec;
    if (!std::filesystem::exists(tokensPath, ec))
        return set; // unlabelled
    const std::string shown = printableText(tokensPath, 200);
    auto text = readInputFile(tokensPath, std::min<std::int64_t>(maxInputFileBytes(), 256 << 20));
    if (!text)
        return text.error();
    auto doc = parseJsonDocument(*text);
    if (!doc)
        return Error{shown + ": " + doc.message(), doc.kind()};
    if (!doc->is_object() || !doc->contains("tokens") || !(*doc)["tokens"].is_array())
        return Error{shown + ": expected {\"ids\": [...], \"tokens\": [...]}"};
    std::vector<std::string> tokens;
    for (const auto &t : (*doc)["tokens"]) {
        if (!t.is_string())
            return Error{shown + ": tokens[" + std::to_string(tokens.size()) + "]: expected a string"};
        tokens.push_back(t.get<std::string>());
    }
    if (std::int64_t(tokens.size()) != set->queries() || set->queries() != set->keys())
        return Error{shown + ": " + std::to_string(tokens.size()) + " tokens, where attentions.npy has " +
                     std::to_string(set->queries()) + " x " + std::to_string(set->keys()) + " maps"};
    if (Status s = set->setTokens(tokens, tokens); !s)
        return Error{shown + ": " + s.message()};
    return set;
}

Result<AttentionInput> loadAttentionInput(const std::string &path, AttentionBackend &backend,
                                          const std::optional<std::string> &text, bool softmax)
{
    std::error_code ec;
    if (Status s = checkSoftmaxOption(path, softmax); !s)
        return s.error();
    if (QkDump::isDump(path)) {
        if (text)
            return Error{"--text is for a model folder; " + printableText(path, 200) + " is a Q/K dump"};
        auto set = readQkDumpSet(path);
        if (!set)
            return set.error();
        return AttentionInput{std::move(*set), "Q/K dump", {}};
    }
    if (isModelRunFolder(path)) {
        if (text)
            return Error{"--text is for a model folder; " + printableText(path, 200) +
                         " is the output of a model run (it holds attentions.npy)"};
        std::string note;
        auto set = readModelRunFolder(path, softmax, note);
        if (!set)
            return set.error();
        return AttentionInput{std::move(*set), "model run", std::move(note)};
    }
    if (std::filesystem::is_directory(path, ec)) {
        if (!text)
            return Error{printableText(path, 200) + ": a model folder needs --text TEXT (the text the model reads)"};
        auto model = TransformerModel::load(path);
        if (!model)
            return model.error();
        auto encoding = model->encode(*text);
        if (!encoding)
            return Error{"--text: " + encoding.message(), encoding.kind()};
        auto run = model->forward(*encoding, backend);
        if (!run)
            return run.error();
        auto set = attentionSetFromRun(*run);
        if (!set)
            return set.error();
        return AttentionInput{std::move(*set), "model", {}};
    }
    if (text)
        return Error{"--text is for a model folder; " + printableText(path, 200) + " is not a folder"};
    if (isAttentionFilePath(path)) {
        std::string note;
        auto set = readCheckedAttentionFile(path, softmax, note);
        if (!set)
            return set.error();
        return AttentionInput{std::move(*set), "attention file", std::move(note)};
    }
    auto project = readProjectFile(path);
    if (!project)
        return project.error();
    auto trace = backend.compute(project->problem);
    if (!trace)
        return trace.error();
    if (Status finite = checkFinite(*trace); !finite)
        return finite.error();
    auto owned = std::make_shared<const AttentionTrace>(std::move(*trace));
    AttentionSet set = AttentionSet::fromTrace(*owned, owned);
    if (Status s = set.setTokens(project->queryTokens, project->keyLabels()); !s)
        return s.error();
    return AttentionInput{std::move(set), "project", {}};
}

Status parseLayerAndHead(const QCommandLineParser &parser, std::optional<int> &layer, std::optional<int> &head)
{
    for (const char *name : {"layer", "head"}) {
        if (!parser.isSet(name))
            continue;
        bool ok = false;
        const int v = parser.value(name).toInt(&ok);
        if (!ok || v < 0)
            return Error{std::string("--") + name + ": expected a whole number from 0 (0-based), found " +
                         quotedText(parser.value(name).toStdString(), 40)};
        (std::string_view(name) == "layer" ? layer : head) = v;
    }
    return Ok{};
}

int runStatsCommand(const QStringList &args, QTextStream &out, QTextStream &err, const BackendOptions &backendOptions)
{
    const auto fail = [&](const std::string &message, int code) { return cli::fail(err, message, code); };
    const FilesRead read; // every file read from here on: the output may not replace one
    QCommandLineParser parser;
    parser.addOption({"out", "Output file (.json or .csv).", "FILE"});
    parser.addOption({"backend", "auto, cpu or vulkan (projects and models).", "NAME", "auto"});
    parser.addOption({"text", "The text a model folder reads.", "TEXT"});
    parser.addOption(softmaxOption());
    if (auto exit = cli::parseOnePositional(parser, args, "stats", "INPUT", kStatsUsage, out, err))
        return *exit;
    if (!parser.isSet("out"))
        return fail("stats: --out FILE.json or FILE.csv is required", kUsage);
    const std::string input = parser.positionalArguments().front().toStdString();
    const std::string output = parser.value("out").toStdString();
    const QString suffix = QFileInfo(parser.value("out")).suffix().toLower();
    if (suffix != "json" && suffix != "csv")
        return fail("--out: expected a .json or .csv file, found " + quotedText(output, 200), kUsage);
    if (sameFile(input, output))
        return fail("--out " + quotedText(output, 200) + " is the input file; choose another name", kUsage);

    auto request = parseBackendRequest(parser.value("backend").toStdString());
    if (!request)
        return fail(request.message(), kUsage);
    auto selection = createBackend(*request, backendOptions);
    if (!selection)
        return fail(selection.message(), kFailed);
    std::optional<std::string> text;
    if (parser.isSet("text"))
        text = parser.value("text").toStdString();
    // Opened before the statistics are computed (minutes for a long file), so that a folder it
    // cannot write to is said at once; the file appears only at commit().
    AtomicFileWriter file(output);
    if (Status s = file.open(); !s)
        return fail(s.message(), kFailed);
    if (Status s = checkSoftmaxOption(input, parser.isSet("softmax")); !s)
        return fail(s.message(), kUsage);
    auto loaded = loadAttentionInput(input, *selection->backend, text, parser.isSet("softmax"));
    if (!loaded)
        return fail(loaded.message(), kFailed);
    if (!loaded->note.empty())
        err << QString::fromStdString(loaded->note) << "\n";
    const std::string written = suffix == "json" ? statsJson(loaded->set) : statsCsv(loaded->set);
    if (Status s = loaded->set.checkSource(); !s)
        return fail(s.message(), kFailed);
    if (auto exit = cli::checkBeforeWriting(err, read, "stats", {parser.value("out"), {parser.value("out")}}))
        return *exit;
    file.write(written);
    if (Status s = file.commit(); !s)
        return fail(s.message(), kFailed);
    out << "stats: " << loaded->set.layers() << " layer(s) x " << loaded->set.heads() << " head(s) of the "
        << QString::fromStdString(loaded->kind) << " written to " << QString::fromStdString(printableText(output, 200))
        << "\n";
    return kOk;
}

} // namespace attnscope
