#include "core/formats/AttentionExport.h"

#include "core/analysis/AttentionStats.h"
#include "core/analysis/Comparison.h"
#include "core/formats/Npy.h"
#include "core/formats/TensorExport.h"
#include "core/formats/TraceDataExport.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <nlohmann/json.hpp>

#include <charconv>

namespace attnscope {

namespace {

// Shortest text that reads back as the same double.
std::string number(double v)
{
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

} // namespace

namespace {

using json = nlohmann::ordered_json;

// One head's statistics under the keys of design.md's stats JSON, added to `row`.
void addStats(json &row, const HeadStats &s)
{
    row["entropy"] = s.entropy;
    row["distance"] = s.distance;
    row["confidence"] = s.confidence;
    row["first"] = s.first;
    row["self"] = s.self ? json(*s.self) : json(nullptr);
    row["previous"] = s.previous ? json(*s.previous) : json(nullptr);
    row["spread"] = s.spread;
    row["induction"] = s.induction ? json(*s.induction) : json(nullptr);
}

} // namespace

std::string statsJson(const AttentionSet &set)
{
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
        addStats(row, s);
        rows.push_back(std::move(row));
    }
    root["stats"] = std::move(rows);
    return root.dump(1) + "\n";
}

std::string comparisonJson(const AttentionComparison &c, const std::vector<HeadDifference> &stats,
                           const std::string &aName, const std::string &bName)
{
    const AttentionSet &d = c.difference;
    json root = json::object();
    root["a"] = aName;
    root["b"] = bName;
    if (d.samples() > 1)
        root["samples"] = d.samples();
    root["layers"] = d.layers();
    root["heads"] = d.heads();
    root["queryLabels"] = c.queryLabels;
    root["keyLabels"] = c.keyLabels;
    json rows = json::array();
    for (const HeadDifference &h : stats) {
        json row = json::object();
        if (d.samples() > 1)
            row["sample"] = h.sample;
        row["layer"] = h.layer;
        row["head"] = h.head;
        json a = json::object(), b = json::object();
        addStats(a, h.a);
        addStats(b, h.b);
        row["a"] = std::move(a);
        row["b"] = std::move(b);
        row["meanAbs"] = h.meanAbs;
        row["maxAbs"] = h.maxAbs;
        row["totalVariation"] = h.totalVariation;
        rows.push_back(std::move(row));
    }
    root["headDifferences"] = std::move(rows);
    // Paths and labels are the user's bytes: whatever is not UTF-8 is replaced, never thrown on.
    return root.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string statsCsv(const AttentionSet &set)
{
    const bool samples = set.samples() > 1;
    std::string csv = samples ? "sample," : "";
    csv += "layer,head,entropy,distance,confidence,first,self,previous,spread,induction\n";
    for (const HeadStats &s : headStatistics(set)) {
        if (samples)
            csv += std::to_string(s.sample) + ",";
        csv += std::to_string(s.layer) + "," + std::to_string(s.head) + "," + number(s.entropy) + "," +
               number(s.distance) + "," + number(s.confidence) + "," + number(s.first) + "," +
               (s.self ? number(*s.self) : "") + "," + (s.previous ? number(*s.previous) : "") + "," +
               number(s.spread) + "," + (s.induction ? number(*s.induction) : "") + "\n";
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

Status checkAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> &layer,
                            std::optional<int> head)
{
    if (tensor != "weights" && tensor != "rollout" && tensor != "mean" && tensor != "stats")
        return Error{"--tensor " + quotedText(tensor, 40) +
                     ": expected weights, rollout, mean or stats for attention maps"};
    if (set.isEmpty())
        return Error{"export: the input has no attention maps"};
    if (tensor == "stats" && (layer || head))
        return Error{"--tensor stats covers every layer and head: leave out --layer and --head"};
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

namespace {

// A [Tq, Tk] matrix as token-labelled CSV (tensorCsv's cells), whole or not at all.
Status writeMatrixCsv(const MatrixD &m, const std::vector<std::string> &rowLabels,
                      const std::vector<std::string> &colLabels, const std::string &path)
{
    NamedTensor tensor{"matrix", {m.rows(), m.cols()}, {}};
    tensor.data.reserve(std::size_t(m.size()));
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            tensor.data.push_back(float(m(i, j)));
    auto csv = tensorCsv(tensor, 0, rowLabels, colLabels);
    if (!csv)
        return csv.error();
    AtomicFileWriter file(path);
    if (Status s = file.open(); !s)
        return s;
    file.write(*csv);
    return file.commit();
}

// Which suffixes each export takes.
Status checkSuffix(const std::string &tensor, bool oneMatrix, const std::string &path)
{
    const auto format = dataFormatFromPath(path);
    if (tensor == "stats") {
        if (format == DataFormat::Csv || format == DataFormat::Json)
            return Ok{};
        return Error{"--tensor stats is written as .csv or .json, found " + quotedText(path, 200)};
    }
    if (format == DataFormat::Npy || (format == DataFormat::Csv && oneMatrix))
        return Ok{};
    return Error{"--tensor " + tensor + " is written as .npy" + (oneMatrix ? " or .csv" : "") +
                 (oneMatrix ? "" : " (.csv holds one matrix: give --layer and --head)") + ", found " +
                 quotedText(path, 200)};
}

} // namespace

Status checkAttentionExport(const AttentionSet &set, const std::string &tensor, std::optional<int> &layer,
                            std::optional<int> head, const std::string &path, const AttentionExportOptions &options)
{
    if (Status s = checkAttentionTensor(set, tensor, layer, head); !s)
        return s;
    if (options.pool < 0)
        return Error{"--pool: expected a cell count of at least 1, found " + std::to_string(options.pool)};
    if (options.pool > 0) {
        if (tensor != "weights" && tensor != "mean")
            return Error{"--pool is for --tensor weights or mean, not " + tensor};
        if (dataFormatFromPath(path) != DataFormat::Npy)
            return Error{"pooled maps are written as .npy, found " + quotedText(path, 200)};
        return Ok{};
    }
    const bool oneMatrix = tensor == "mean" || tensor == "rollout" || (layer && head);
    if (Status s = checkSuffix(tensor, oneMatrix, path); !s)
        return s;
    const std::int64_t budget = options.budget > 0 ? options.budget : memoryBudget();
    const std::int64_t cells = saturatingMul(set.queries(), set.keys());
    std::int64_t bytes = 0;
    std::string what;
    if (tensor == "mean") {
        bytes = saturatingMul(cells, 8);
        what = "the mean over heads of " + std::to_string(set.queries()) + " x " + std::to_string(set.keys()) +
               " tokens needs ";
    } else if (tensor == "weights" && set.isFromQk()) {
        const std::int64_t maps = (layer ? 1 : set.layers()) * (head ? 1 : set.heads());
        bytes = saturatingMul(saturatingMul(cells, maps), 4);
        what = "the weights of " + std::to_string(maps) + " map(s) of " + std::to_string(set.queries()) + " x " +
               std::to_string(set.keys()) + " tokens need ";
    }
    if (bytes > budget)
        return Error{"export: " + what + formatBytes(bytes) + ", more than the " + formatBytes(budget) +
                         " allowed; pool them with --pool N (N x N cells per map)",
                     ErrorKind::TooLarge};
    return Ok{};
}

namespace {

// Maps pooled to at most N x N cells, as float32 .npy: every layer and head, one layer's heads,
// one head, or one layer's mean over heads.
Result<std::string> writePooledTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> layer,
                                      std::optional<int> head, const std::string &path,
                                      const AttentionExportOptions &options)
{
    const bool mean = tensor == "mean";
    const int l0 = layer ? *layer : 0, l1 = layer ? *layer + 1 : set.layers();
    std::vector<float> values;
    std::int64_t nq = 0, nk = 0;
    for (int l = l0; l < l1; ++l) {
        SetPoolOptions pool;
        pool.bins = options.pool;
        pool.mode = options.mode;
        pool.head = head ? *head : -1;
        pool.headMean = mean;
        pool.backend = options.backend;
        auto pooled = poolSetBlock(set, 0, l, SetBlock{0, set.queries(), 0, set.keys()}, pool);
        if (!pooled)
            return pooled.error();
        const std::vector<MatrixF> one = mean ? std::vector<MatrixF>{pooled->headMean} : std::vector<MatrixF>{};
        for (const MatrixF &m : mean ? one : pooled->heads) {
            nq = m.rows(), nk = m.cols();
            values.insert(values.end(), m.data(), m.data() + m.size());
        }
    }
    std::vector<std::int64_t> shape;
    if (!layer)
        shape.push_back(set.layers());
    if (!head && !mean)
        shape.push_back(set.heads());
    shape.push_back(nq);
    shape.push_back(nk);
    AtomicFileWriter file(path);
    if (Status s = file.open(); !s)
        return s.error();
    file.write(npyHeader(shape));
    file.write(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
    if (Status s = file.commit(); !s)
        return s.error();
    std::string what = mean ? "mean over heads" : "weights";
    if (layer)
        what += " of layer " + std::to_string(*layer);
    if (head)
        what += ", head " + std::to_string(*head);
    return what + " pooled (" + std::string(options.mode == PoolMode::Max ? "max" : "mean") + ") " + shapeText(shape);
}

} // namespace

Result<std::string> writeAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> layer,
                                         std::optional<int> head, const std::string &path,
                                         const AttentionExportOptions &options)
{
    if (Status s = checkAttentionExport(set, tensor, layer, head, path, options); !s)
        return s.error();
    if (options.pool > 0)
        return writePooledTensor(set, tensor, layer, head, path, options);
    const bool csv = dataFormatFromPath(path) == DataFormat::Csv;
    if (tensor == "stats") {
        const std::string text = csv ? statsCsv(set) : statsJson(set);
        if (Status s = set.checkSource(); !s)
            return s.error();
        AtomicFileWriter file(path);
        if (Status s = file.open(); !s)
            return s.error();
        file.write(text);
        if (Status s = file.commit(); !s)
            return s.error();
        return "statistics of " + std::to_string(set.layers()) + " layer(s) x " + std::to_string(set.heads()) +
               " head(s)";
    }
    if (tensor == "rollout") {
        auto rollout = attentionRollout(set);
        if (!rollout)
            return rollout.error();
        if (Status s = set.checkSource(); !s)
            return s.error();
        if (Status s =
                csv ? writeMatrixCsv(*rollout, set.queryTokens, set.queryTokens, path) : writeMatrixNpy(*rollout, path);
            !s)
            return s.error();
        return "rollout over " + std::to_string(set.layers()) + " layer(s) " +
               shapeText({rollout->rows(), rollout->cols()});
    }
    if (tensor == "mean") {
        const auto mean = meanOverHeads(set, 0, *layer);
        if (Status s = set.checkSource(); !s)
            return s.error();
        if (Status s = csv ? writeMatrixCsv(mean, set.queryTokens, set.keyTokens, path) : writeMatrixNpy(mean, path);
            !s)
            return s.error();
        return "mean over heads of layer " + std::to_string(*layer) + " " + shapeText({set.queries(), set.keys()});
    }
    if (csv) { // one head: layer and head are given (checkAttentionExport)
        const MatrixD m = set.map(0, *layer, *head).cast<double>();
        if (Status s = set.checkSource(); !s)
            return s.error();
        if (Status s = writeMatrixCsv(m, set.queryTokens, set.keyTokens, path); !s)
            return s.error();
        return "weights of layer " + std::to_string(*layer) + ", head " + std::to_string(*head) + " " +
               shapeText({set.queries(), set.keys()}) + " as CSV";
    }
    // Weights, streamed block of rows by block from the set (a mapped float16 file is never copied whole).
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
    const std::int64_t tk = set.keys();
    const std::int64_t blockRows = std::max<std::int64_t>(1, std::min<std::int64_t>(256, (1 << 20) / tk));
    std::vector<float> rows(static_cast<std::size_t>(blockRows * tk));
    for (int l = l0; l < l1; ++l)
        for (int h = h0; h < h1; ++h)
            for (std::int64_t i0 = 0; i0 < set.queries(); i0 += blockRows) {
                const std::int64_t i1 = std::min(set.queries(), i0 + blockRows);
                set.rowBlock(0, l, h, i0, i1, 0, tk, rows.data());
                file.write(reinterpret_cast<const char *>(rows.data()), std::size_t((i1 - i0) * tk) * sizeof(float));
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

} // namespace attnscope
