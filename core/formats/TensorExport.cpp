#include "core/formats/TensorExport.h"

#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"

#include <array>
#include <charconv>
#include <functional>
#include <string_view>

namespace attnscope {

namespace {

NamedTensor stacked(std::string name, const std::vector<MatrixF> &perHead)
{
    NamedTensor t{std::move(name), {}, {}};
    const std::int64_t h = std::int64_t(perHead.size());
    const std::int64_t rows = h ? perHead[0].rows() : 0, cols = h ? perHead[0].cols() : 0;
    t.shape = {h, rows, cols};
    t.data.resize(size_t(h * rows * cols));
    for (std::int64_t i = 0; i < h; ++i)
        std::copy_n(perHead[size_t(i)].data(), rows * cols, t.data.begin() + i * rows * cols);
    return t;
}

template <typename M>
NamedTensor flat(std::string name, const M &m)
{
    NamedTensor t{std::move(name), {m.rows(), m.cols()}, {}};
    t.data.resize(size_t(m.size()));
    for (Eigen::Index i = 0; i < m.size(); ++i)
        t.data[size_t(i)] = float(m.data()[i]);
    return t;
}

std::string shortest(float f)
{
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, f);
    return std::string(buf, r.ptr);
}

} // namespace

std::string csvTextField(const std::string &text)
{
    // A spreadsheet reads a cell that starts with = + - @, a tab or a carriage return as a
    // formula (=HYPERLINK(...), =cmd|...): a quote first makes it text, as OWASP advises.
    const bool formula = !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
    const std::string s = formula ? "'" + text : text;
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string quoted = "\"";
    for (char c : s)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::vector<NamedTensor> traceTensors(const AttentionTrace &t)
{
    return {stacked("q", t.q),
            stacked("k", t.k),
            stacked("v", t.v),
            stacked("scores", t.scores),
            stacked("weights", t.weights),
            stacked("headOutputs", t.headOutputs),
            flat("context", t.context),
            flat("output", t.output),
            flat("mask", t.allowed)};
}

Result<NamedTensor> traceTensor(const AttentionTrace &t, const std::string &name)
{
    // Only the tensor asked for is copied.
    const std::pair<const char *, const std::vector<MatrixF> *> perHead[] = {{"q", &t.q},
                                                                             {"k", &t.k},
                                                                             {"v", &t.v},
                                                                             {"scores", &t.scores},
                                                                             {"weights", &t.weights},
                                                                             {"headOutputs", &t.headOutputs}};
    for (const auto &[n, tensors] : perHead)
        if (name == n)
            return stacked(n, *tensors);
    if (name == "context")
        return flat("context", t.context);
    if (name == "output")
        return flat("output", t.output);
    if (name == "mask")
        return flat("mask", t.allowed);
    return Error{"tensor \"" + name +
                 "\": expected one of q, k, v, scores, weights, headOutputs, context, output, mask"};
}

Result<std::string> tensorCsv(const NamedTensor &t, int head, const std::vector<std::string> &rowLabels,
                              const std::vector<std::string> &colLabels)
{
    const bool perHead = t.shape.size() == 3;
    if (perHead && (head < 0 || head >= t.shape[0]))
        return Error{t.name + ": head " + std::to_string(head) + " does not exist (expected 0 to " +
                     std::to_string(t.shape[0] - 1) + ")"};
    const std::int64_t rows = t.shape[perHead ? 1 : 0], cols = t.shape[perHead ? 2 : 1];
    const float *data = t.data.data() + (perHead ? std::int64_t(head) * rows * cols : 0);
    const bool labelRows = std::int64_t(rowLabels.size()) == rows;
    const bool labelCols = std::int64_t(colLabels.size()) == cols;
    std::string out;
    if (labelCols) {
        out += labelRows ? csvTextField(t.name) : "";
        for (std::int64_t c = 0; c < cols; ++c) {
            if (c || labelRows)
                out += ',';
            out.append(csvTextField(colLabels[size_t(c)]));
        }
        out += "\r\n";
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        if (labelRows)
            out += csvTextField(rowLabels[size_t(r)]);
        for (std::int64_t c = 0; c < cols; ++c) {
            if (c || labelRows)
                out += ',';
            out.append(shortest(data[r * cols + c]));
        }
        out += "\r\n";
    }
    return out;
}

} // namespace attnscope
