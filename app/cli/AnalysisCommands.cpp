#include "app/cli/AnalysisCommands.h"

#include "app/cli/CliSupport.h"
#include "app/engine/BackendChoice.h"
#include "core/analysis/AttentionStats.h"
#include "core/analysis/RowSums.h"
#include "core/attention/TraceCheck.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/io/FileIo.h"
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
      model folder run on TEXT: entropy, distance, confidence, first, self,
      previous (0-based indices). An attention file's rows are checked: where
      they are not softmax rows, a line on stderr names their sums, and
      --softmax applies softmax to a file of scores.
)";

namespace {

using cli::kFailed;
using cli::kOk;
using cli::kUsage;

// Shortest text that reads back as the same double.
std::string number(double v)
{
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

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

Result<AttentionInput> loadAttentionInput(const std::string &path, AttentionBackend &backend,
                                          const std::optional<std::string> &text, bool softmax)
{
    std::error_code ec;
    if (Status s = checkSoftmaxOption(path, softmax); !s)
        return s.error();
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

std::string statsJson(const AttentionSet &set)
{
    using json = nlohmann::ordered_json;
    json root = json::object();
    if (set.samples() > 1)
        root["samples"] = set.samples();
    root["layers"] = set.layers();
    root["heads"] = set.heads();
    json rows = json::array();
    for (const HeadStats &s : headStatistics(set)) {
        json row = json::object();
        if (set.samples() > 1)
            row["sample"] = s.sample;
        row["layer"] = s.layer;
        row["head"] = s.head;
        row["entropy"] = s.entropy;
        row["distance"] = s.distance;
        row["confidence"] = s.confidence;
        row["first"] = s.first;
        row["self"] = s.self ? json(*s.self) : json(nullptr);
        row["previous"] = s.previous ? json(*s.previous) : json(nullptr);
        rows.push_back(std::move(row));
    }
    root["stats"] = std::move(rows);
    return root.dump(1) + "\n";
}

std::string statsCsv(const AttentionSet &set)
{
    const bool samples = set.samples() > 1;
    std::string csv = samples ? "sample," : "";
    csv += "layer,head,entropy,distance,confidence,first,self,previous\n";
    for (const HeadStats &s : headStatistics(set)) {
        if (samples)
            csv += std::to_string(s.sample) + ",";
        csv += std::to_string(s.layer) + "," + std::to_string(s.head) + "," + number(s.entropy) + "," +
               number(s.distance) + "," + number(s.confidence) + "," + number(s.first) + "," +
               (s.self ? number(*s.self) : "") + "," + (s.previous ? number(*s.previous) : "") + "\n";
    }
    return csv;
}

Status writeMatrixNpy(const MatrixD &m, const std::string &path)
{
    AtomicFileWriter file(path);
    if (Status s = file.open(); !s)
        return s;
    file.write(npyHeader({m.rows(), m.cols()}));
    std::vector<float> row(static_cast<std::size_t>(m.cols()));
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            row[std::size_t(j)] = float(m(i, j));
        file.write(reinterpret_cast<const char *>(row.data()), row.size() * sizeof(float));
    }
    return file.commit();
}

namespace {

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

Status checkIndex(const char *what, int index, int count)
{
    if (index >= 0 && index < count)
        return Ok{};
    return Error{std::string("--") + what + " " + std::to_string(index) + ": the input has " + std::to_string(count) +
                 " " + what + "(s), numbered 0 to " + std::to_string(count - 1) + " (0-based)"};
}

} // namespace

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

Status checkAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> &layer,
                            std::optional<int> head)
{
    if (tensor != "weights" && tensor != "rollout" && tensor != "mean")
        return Error{"--tensor " + quotedText(tensor, 40) + ": expected weights, rollout or mean for attention maps"};
    if (set.isEmpty())
        return Error{"export: the input has no attention maps"};
    if (tensor == "rollout" && (layer || head))
        return Error{"--tensor rollout covers every layer and head: leave out --layer and --head"};
    if (tensor == "mean" && head)
        return Error{"--tensor mean is the mean over heads: leave out --head"};
    if ((tensor == "mean" || head) && !layer) {
        if (set.layers() > 1)
            return Error{"--tensor " + tensor + (head ? " with --head" : "") + " needs --layer: the input has " +
                         std::to_string(set.layers()) + " layers, numbered 0 to " + std::to_string(set.layers() - 1)};
        layer = 0;
    }
    if (layer)
        if (Status s = checkIndex("layer", *layer, set.layers()); !s)
            return s;
    if (head)
        if (Status s = checkIndex("head", *head, set.heads()); !s)
            return s;
    return Ok{};
}

Result<std::string> writeAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> layer,
                                         std::optional<int> head, const std::string &path)
{
    if (Status s = checkAttentionTensor(set, tensor, layer, head); !s)
        return s.error();
    if (tensor == "rollout") {
        auto rollout = attentionRollout(set);
        if (!rollout)
            return rollout.error();
        if (Status s = set.checkSource(); !s)
            return s.error();
        if (Status s = writeMatrixNpy(*rollout, path); !s)
            return s.error();
        return "rollout over " + std::to_string(set.layers()) + " layer(s) " +
               shapeText({rollout->rows(), rollout->cols()});
    }
    if (tensor == "mean") {
        const auto mean = meanOverHeads(set, 0, *layer);
        if (Status s = set.checkSource(); !s)
            return s.error();
        if (Status s = writeMatrixNpy(mean, path); !s)
            return s.error();
        return "mean over heads of layer " + std::to_string(*layer) + " " + shapeText({set.queries(), set.keys()});
    }
    // Weights, streamed row by row from the set (a mapped float16 file is never copied whole).
    const int l0 = layer ? *layer : 0, l1 = layer ? *layer + 1 : set.layers();
    const int h0 = head ? *head : 0, h1 = head ? *head + 1 : set.heads();
    std::vector<std::int64_t> shape;
    if (!layer)
        shape.push_back(set.layers());
    if (!head)
        shape.push_back(set.heads());
    shape.push_back(set.queries());
    shape.push_back(set.keys());
    AtomicFileWriter file(path);
    if (Status s = file.open(); !s)
        return s.error();
    file.write(npyHeader(shape));
    std::vector<float> row(static_cast<std::size_t>(set.keys()));
    for (int l = l0; l < l1; ++l)
        for (int h = h0; h < h1; ++h)
            for (std::int64_t i = 0; i < set.queries(); ++i) {
                set.row(0, l, h, i, row.data());
                file.write(reinterpret_cast<const char *>(row.data()), row.size() * sizeof(float));
            }
    // Rows read from a file rewritten meanwhile are not the file's: nothing is written then.
    if (Status s = set.checkSource(); !s)
        return s.error();
    if (Status s = file.commit(); !s)
        return s.error();
    std::string what = "weights";
    if (layer)
        what += " of layer " + std::to_string(*layer);
    if (head)
        what += ", head " + std::to_string(*head);
    return what + " " + shapeText(shape);
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
