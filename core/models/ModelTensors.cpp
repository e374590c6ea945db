#include "core/models/ModelTensors.h"

#include "core/formats/Npy.h"
#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/JsonDocument.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace attnscope {

namespace {

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    if (shape.empty())
        return "a scalar";
    std::string s;
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? " x " : "") + std::to_string(shape[i]);
    return s;
}

} // namespace

Result<std::map<std::string, std::string>> parseShardIndex(std::string_view json, const std::string &shown)
{
    auto document = parseJsonDocument(json);
    if (!document)
        return Error{shown + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shown + ": expected a JSON object ({...})"};
    const auto map = document->find("weight_map");
    if (map == document->end() || !map->is_object())
        return Error{shown + ": weight_map: expected an object naming each tensor's file"};
    if (map->empty())
        return Error{shown + ": weight_map: names no tensors"};
    std::map<std::string, std::string> out;
    for (const auto &[name, file] : map->items()) {
        const std::string at = shown + ": weight_map." + printableText(name, 120);
        if (!file.is_string())
            return Error{at + ": expected a file name, found " + printableText(file.dump(), 40)};
        const std::string f = file.get<std::string>();
        if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == "." || f == "..")
            return Error{at + ": expected a file name in the model folder, found " + quotedText(f)};
        out.emplace(name, f);
    }
    return out;
}

ModelTensors::ModelTensors(SafetensorsFile file, std::vector<std::string> prefixes, std::string shownFile)
    : m_prefixes(std::move(prefixes)), m_shownWeights(shownFile)
{
    m_files.push_back(std::move(file));
    m_shown.push_back(std::move(shownFile));
    const auto &tensors = m_files.front().tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i)
        m_byName.emplace(tensors[i].name, std::pair{0, int(i)});
}

Result<ModelTensors> ModelTensors::open(const std::string &modelDir, std::vector<std::string> prefixes)
{
    std::error_code ec;
    auto single = modelFolderFile(modelDir, "model.safetensors");
    if (!single)
        return single.error();
    if (std::filesystem::exists(*single, ec)) {
        auto file = SafetensorsFile::open(*single);
        if (!file)
            return Error{printableText(file.message(), 400), file.kind()};
        return ModelTensors(std::move(*file), std::move(prefixes), printableText(*single, 200));
    }
    auto indexPath = modelFolderFile(modelDir, "model.safetensors.index.json");
    if (!indexPath)
        return indexPath.error();
    const std::string shownIndex = printableText(*indexPath, 200);
    if (!std::filesystem::exists(*indexPath, ec))
        return Error{printableText(*single, 200) + ": no such file (a model folder as transformers saves it holds "
                                                   "model.safetensors, or model.safetensors.index.json and its shards)",
                     ErrorKind::Io};
    auto text = readInputFile(*indexPath, std::min<std::int64_t>(maxInputFileBytes(), std::int64_t(64) << 20));
    if (!text)
        return text.error();
    auto index = parseShardIndex(*text, shownIndex);
    if (!index)
        return index.error();
    ModelTensors t;
    t.m_prefixes = std::move(prefixes);
    t.m_shownWeights = shownIndex;
    std::map<std::string, int> fileIndex;
    for (const auto &[name, file] : *index) {
        if (fileIndex.count(file))
            continue;
        auto path = modelFolderFile(modelDir, file);
        if (!path)
            return path.error();
        if (!std::filesystem::exists(*path, ec))
            return Error{printableText(*path, 200) + ": no such file (a shard model.safetensors.index.json names)",
                         ErrorKind::Io};
        auto shard = SafetensorsFile::open(*path);
        if (!shard)
            return Error{printableText(shard.message(), 400), shard.kind()};
        fileIndex.emplace(file, int(t.m_files.size()));
        t.m_files.push_back(std::move(*shard));
        t.m_shown.push_back(printableText(*path, 200));
    }
    for (const auto &[name, file] : *index) {
        const int f = fileIndex.at(file);
        const SafetensorsTensor *found = t.m_files[std::size_t(f)].find(name);
        if (!found)
            return Error{shownIndex + ": " + printableText(name, 120) + ": not in " + printableText(file, 120) +
                         ", the shard the index names"};
        t.m_byName.emplace(name, std::pair{f, int(found - t.m_files[std::size_t(f)].tensors().data())});
    }
    return t;
}

Result<const SafetensorsTensor *> ModelTensors::find(const std::vector<std::string> &names) const
{
    for (const std::string &name : names) {
        auto at = m_byName.find(name);
        for (std::size_t p = 0; at == m_byName.end() && p < m_prefixes.size(); ++p)
            at = m_byName.find(m_prefixes[p] + name);
        if (at != m_byName.end())
            return &m_files[std::size_t(at->second.first)].tensors()[std::size_t(at->second.second)];
    }
    std::string prefixed;
    for (const std::string &p : m_prefixes)
        prefixed += (prefixed.empty() ? "" : ", ") + p + names.front();
    return Error{m_shownWeights + ": no tensor " + names.front() + (prefixed.empty() ? "" : " (nor " + prefixed + ")") +
                 "; the file does not hold this model's weights"};
}

bool ModelTensors::contains(const std::string &name) const
{
    return bool(find({name}));
}

std::size_t ModelTensors::fileOf(const SafetensorsTensor &t) const
{
    for (std::size_t f = 0; f < m_files.size(); ++f) {
        const auto &all = m_files[f].tensors();
        if (!all.empty() && &t >= all.data() && &t < all.data() + all.size())
            return f;
    }
    return m_files.size();
}

const std::string &ModelTensors::shownFileOf(const SafetensorsTensor &t) const
{
    const std::size_t f = fileOf(t);
    return f < m_files.size() ? m_shown[f] : m_shownWeights;
}

std::uint64_t ModelTensors::storedBytes() const
{
    std::uint64_t total = 0;
    for (const auto &f : m_files)
        for (const auto &t : f.tensors())
            total += t.end - t.begin;
    return total;
}

Status ModelTensors::checkUnchanged() const
{
    for (const auto &f : m_files)
        if (Status s = f.checkUnchanged(); !s)
            return s;
    return Ok{};
}

Result<std::vector<float>> ModelTensors::values(const SafetensorsTensor &t, const std::vector<std::int64_t> &shape,
                                                const std::string &expected) const
{
    const std::string name = shownFileOf(t) + ": " + printableText(t.name, 120);
    if (t.shape != shape)
        return Error{name + ": expected " + expected + ", found " + shapeText(t.shape)};
    const std::int64_t n = t.elementCount();
    std::vector<float> out(static_cast<std::size_t>(n));
    const unsigned char *p = t.data;
    if (t.dtype == "F32") {
        std::memcpy(out.data(), p, std::size_t(n) * 4);
    } else if (t.dtype == "F16" || t.dtype == "BF16") {
        const bool brain = t.dtype == "BF16";
        for (std::int64_t i = 0; i < n; ++i) {
            const std::uint16_t bits = std::uint16_t(p[2 * i] | (p[2 * i + 1] << 8));
            if (brain) {
                const std::uint32_t wide = std::uint32_t(bits) << 16;
                std::memcpy(&out[std::size_t(i)], &wide, 4);
            } else {
                out[std::size_t(i)] = halfToFloat(bits);
            }
        }
    } else if (t.dtype == "F64") {
        for (std::int64_t i = 0; i < n; ++i) {
            double d;
            std::memcpy(&d, p + 8 * i, 8);
            out[std::size_t(i)] = float(d);
        }
    } else {
        return Error{name + ": dtype " + printableText(t.dtype, 20) + " is not supported (F32, F16 or BF16)"};
    }
    for (std::int64_t i = 0; i < n; ++i)
        if (!std::isfinite(out[std::size_t(i)]))
            return Error{name + ": value " + std::to_string(i) + " is not a finite float32 (" +
                         std::to_string(out[std::size_t(i)]) + ")"};
    return out;
}

Result<MatrixF> ModelTensors::matrix(const std::vector<std::string> &names, std::int64_t rows, std::int64_t cols,
                                     bool transpose) const
{
    auto t = find(names);
    if (!t)
        return t.error();
    const std::int64_t r = transpose ? cols : rows, c = transpose ? rows : cols;
    auto v = values(**t, {r, c}, shapeString(r, c));
    if (!v)
        return v.error();
    const Eigen::Map<const MatrixF> stored(v->data(), r, c);
    if (transpose)
        return MatrixF(stored.transpose());
    return MatrixF(stored);
}

Result<VectorF> ModelTensors::vector(const std::vector<std::string> &names, std::int64_t size) const
{
    auto t = find(names);
    if (!t)
        return t.error();
    auto v = values(**t, {size}, std::to_string(size));
    if (!v)
        return v.error();
    return VectorF(Eigen::Map<const VectorF>(v->data(), size));
}

Result<WeightMatrix> ModelTensors::weight(const std::vector<std::string> &names, std::int64_t rows, std::int64_t cols,
                                          bool transpose) const
{
    auto t = find(names);
    if (!t)
        return t.error();
    const SafetensorsTensor &tensor = **t;
    if (tensor.dtype == "F64") { // rare: converted now, as matrix() does
        auto m = matrix(names, rows, cols, transpose);
        if (!m)
            return m.error();
        return WeightMatrix(std::move(*m));
    }
    const std::int64_t r = transpose ? cols : rows, c = transpose ? rows : cols;
    const std::string name = shownFileOf(tensor) + ": " + printableText(tensor.name, 120);
    if (tensor.shape != std::vector<std::int64_t>{r, c})
        return Error{name + ": expected " + shapeString(r, c) + ", found " + shapeText(tensor.shape)};
    if (tensor.dtype != "F32" && tensor.dtype != "F16" && tensor.dtype != "BF16")
        return Error{name + ": dtype " + printableText(tensor.dtype, 20) + " is not supported (F32, F16 or BF16)"};
    const std::size_t file = fileOf(tensor);
    WeightMatrix w = WeightMatrix::mapped(tensor.data, tensor.dtype, r, c, transpose,
                                          file < m_files.size() ? m_files[file].keepAlive() : nullptr);
    if (Status s = w.checkFinite(); !s)
        return Error{name + ": " + s.message()};
    return w;
}

} // namespace attnscope
