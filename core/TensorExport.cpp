#include "core/TensorExport.h"

#include "core/Npy.h"
#include "core/ProjectFile.h"

#include <array>
#include <charconv>
#include <functional>

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

std::string csvField(const std::string &s)
{
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string quoted = "\"";
    for (char c : s)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::uint32_t crc32(const std::string &bytes)
{
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xffffffffu;
    for (unsigned char b : bytes)
        c = table[(c ^ b) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

void put16(std::string &out, std::uint32_t v)
{
    out += char(v & 0xff);
    out += char((v >> 8) & 0xff);
}

void put32(std::string &out, std::uint32_t v)
{
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}

} // namespace

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

Result<NamedTensor> traceTensor(const AttentionTrace &trace, const std::string &name)
{
    std::string names;
    for (auto &t : traceTensors(trace)) {
        if (t.name == name)
            return std::move(t);
        if (!names.empty())
            names.append(", ");
        names.append(t.name);
    }
    return Error{"tensor \"" + name + "\": expected one of " + names};
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
        out += labelRows ? csvField(t.name) : "";
        for (std::int64_t c = 0; c < cols; ++c) {
            if (c || labelRows)
                out += ',';
            out.append(csvField(colLabels[size_t(c)]));
        }
        out += "\r\n";
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        if (labelRows)
            out += csvField(rowLabels[size_t(r)]);
        for (std::int64_t c = 0; c < cols; ++c) {
            if (c || labelRows)
                out += ',';
            out.append(shortest(data[r * cols + c]));
        }
        out += "\r\n";
    }
    return out;
}

Result<std::string> npzBytes(const std::vector<NamedTensor> &tensors)
{
    std::string zip, directory;
    for (const auto &t : tensors) {
        const std::string name = t.name + ".npy";
        const std::string body = npyBytes(t.shape, t.data.data());
        if (body.size() >= 0xffffffffu || zip.size() + body.size() >= 0xffffffffu)
            return Error{"npz: " + name + " makes the archive larger than 4 GiB (use the .npy files instead)"};
        const std::uint32_t crc = crc32(body), offset = std::uint32_t(zip.size()), size = std::uint32_t(body.size());
        // Stored (method 0), dated 1980-01-01 so the archive is reproducible.
        put32(zip, 0x04034b50);
        put16(zip, 20);
        put16(zip, 0);
        put16(zip, 0);
        put16(zip, 0);
        put16(zip, 0x21);
        put32(zip, crc);
        put32(zip, size);
        put32(zip, size);
        put16(zip, std::uint32_t(name.size()));
        put16(zip, 0);
        zip += name;
        zip += body;

        put32(directory, 0x02014b50);
        put16(directory, 20);
        put16(directory, 20);
        put16(directory, 0);
        put16(directory, 0);
        put16(directory, 0);
        put16(directory, 0x21);
        put32(directory, crc);
        put32(directory, size);
        put32(directory, size);
        put16(directory, std::uint32_t(name.size()));
        put16(directory, 0);
        put16(directory, 0);
        put16(directory, 0);
        put16(directory, 0);
        put32(directory, 0);
        put32(directory, offset);
        directory += name;
    }
    const std::uint32_t directoryOffset = std::uint32_t(zip.size());
    zip += directory;
    put32(zip, 0x06054b50);
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, std::uint32_t(tensors.size()));
    put16(zip, std::uint32_t(tensors.size()));
    put32(zip, std::uint32_t(directory.size()));
    put32(zip, directoryOffset);
    put16(zip, 0);
    return zip;
}

std::string traceJson(const Project &project, const std::vector<NamedTensor> &tensors)
{
    using Json = nlohmann::ordered_json;
    Json root;
    root["format"] = "attnscope-trace";
    root["version"] = 1;
    if (!project.title.empty())
        root["title"] = project.title;
    root["queryTokens"] = project.queryTokens;
    root["keyTokens"] = project.keyLabels();
    Json all = Json::object();
    for (const auto &t : tensors) {
        // Nested lists, innermost the last dimension.
        std::function<Json(size_t, std::int64_t)> nest = [&](size_t dim, std::int64_t offset) {
            Json level = Json::array();
            std::int64_t stride = 1;
            for (size_t d = dim + 1; d < t.shape.size(); ++d)
                stride *= t.shape[d];
            for (std::int64_t i = 0; i < t.shape[dim]; ++i) {
                if (dim + 1 == t.shape.size()) {
                    double d = 0.0;
                    const std::string s = shortest(t.data[size_t(offset + i)]);
                    std::from_chars(s.data(), s.data() + s.size(), d);
                    level.push_back(d);
                } else {
                    level.push_back(nest(dim + 1, offset + i * stride));
                }
            }
            return level;
        };
        all[t.name] = {{"shape", t.shape}, {"data", nest(0, 0)}};
    }
    root["tensors"] = std::move(all);
    return root.dump() + "\n";
}

} // namespace attnscope
