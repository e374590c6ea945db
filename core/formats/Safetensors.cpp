#include "core/formats/Safetensors.h"

#include "core/ErrorCode.h"
#include "core/io/JsonDocument.h"
#include "core/io/UserText.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace attnscope {

namespace {

using json = nlohmann::ordered_json;

// The format's own bound on the header (the reference implementation refuses larger ones).
constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;

bool mulOverflows(std::uint64_t a, std::uint64_t b, std::uint64_t &out)
{
    if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
        return true;
    out = a * b;
    return false;
}

bool readUnsigned(const json &v, std::uint64_t &out)
{
    if (v.is_number_unsigned()) {
        out = v.get<std::uint64_t>();
        return true;
    }
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
        out = std::uint64_t(v.get<std::int64_t>());
        return true;
    }
    return false;
}

} // namespace

int safetensorsElementSize(const std::string &dtype)
{
    static const std::pair<const char *, int> sizes[] = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
        {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
    for (const auto &[name, size] : sizes)
        if (dtype == name)
            return size;
    return 0;
}

std::int64_t SafetensorsTensor::elementCount() const
{
    std::int64_t n = 1;
    for (auto d : shape)
        n *= d;
    return n;
}

const SafetensorsTensor *SafetensorsFile::find(const std::string &name) const
{
    for (const auto &t : m_tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string &path)
{
    auto file = MappedFile::open(path);
    if (!file)
        return file.error();
    const auto &mapped = *file;
    auto parsed = parse(mapped->data(), mapped->size(), mapped);
    if (Status s = mapped->checkUnchanged(); !s)
        return s.error();
    if (!parsed)
        return prefixedError(path + ": ", parsed.error());
    parsed->m_file = mapped;
    return parsed;
}

Result<SafetensorsFile> SafetensorsFile::parse(const unsigned char *bytes, std::uint64_t size,
                                               std::shared_ptr<const void> keepAlive)
{
    if (size < 8)
        return codedError("safetensors.tooShort", {std::to_string(size)});
    std::uint64_t headerBytes = 0;
    for (int i = 0; i < 8; ++i)
        headerBytes |= std::uint64_t(bytes[i]) << (8 * i);
    if (headerBytes > size - 8)
        return codedError("safetensors.header.pastEnd", {std::to_string(headerBytes), std::to_string(size)});
    if (headerBytes > kMaxHeaderBytes)
        return codedError("safetensors.header.tooLarge", {std::to_string(headerBytes)});
    if (headerBytes < 2 || bytes[8] != '{')
        return codedError("safetensors.header.notObject", {});

    const std::string_view headerText(reinterpret_cast<const char *>(bytes + 8), std::size_t(headerBytes));
    JsonLimits limits;
    limits.maxDepth = 8;
    auto header = parseJsonDocument(headerText, limits);
    if (!header)
        return prefixedError("header: ", header.error());
    if (!header->is_object())
        return codedError("safetensors.header.expectedObject", {});

    const unsigned char *data = bytes + 8 + headerBytes;
    const std::uint64_t dataBytes = size - 8 - headerBytes;
    SafetensorsFile file;
    file.m_keepAlive = std::move(keepAlive);
    for (const auto &[name, entry] : header->items()) {
        const std::string tensorName = printableText(name); // "tensor \"%1\"" in the templates
        if (name == "__metadata__") {
            if (!entry.is_object())
                return codedError("safetensors.metadata", {});
            for (const auto &[key, value] : entry.items()) {
                if (!value.is_string())
                    return codedError("safetensors.metadata.value", {printableText(key)});
                file.m_metadata[key] = value.get<std::string>();
            }
            continue;
        }
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets"))
            return codedError("safetensors.entry", {tensorName});
        SafetensorsTensor t;
        t.name = name;
        if (!entry["dtype"].is_string())
            return codedError("safetensors.dtype", {tensorName});
        t.dtype = entry["dtype"].get<std::string>();
        t.elementSize = safetensorsElementSize(t.dtype);
        const json &shape = entry["shape"];
        if (!shape.is_array() || shape.size() > 8)
            return codedError("safetensors.shape", {tensorName});
        std::uint64_t count = 1;
        for (const auto &d : shape) {
            std::uint64_t dim = 0;
            if (!readUnsigned(d, dim) || dim > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                return codedError("safetensors.shape.notSize", {tensorName, printableText(d.dump(), 24)});
            if (mulOverflows(count, dim, count))
                return codedError("safetensors.shape.overflow", {tensorName});
            t.shape.push_back(std::int64_t(dim));
        }
        const json &offsets = entry["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2 || !readUnsigned(offsets[0], t.begin) ||
            !readUnsigned(offsets[1], t.end) || t.begin > t.end)
            return codedError("safetensors.offsets", {tensorName});
        if (t.end > dataBytes)
            return codedError("safetensors.offsets.pastEnd",
                              {tensorName, std::to_string(t.end), std::to_string(dataBytes)});
        std::uint64_t expected = 0;
        if (t.elementSize > 0 &&
            (mulOverflows(count, std::uint64_t(t.elementSize), expected) || expected != t.end - t.begin))
            return codedError("safetensors.offsets.size",
                              {tensorName, printableText(t.dtype, 20), std::to_string(count),
                               std::to_string(count * std::uint64_t(t.elementSize)), std::to_string(t.end - t.begin)});
        t.data = data + t.begin;
        file.m_tensors.push_back(std::move(t));
    }
    std::sort(file.m_tensors.begin(), file.m_tensors.end(),
              [](const SafetensorsTensor &a, const SafetensorsTensor &b) { return a.begin < b.begin; });
    std::uint64_t covered = 0;
    for (const auto &t : file.m_tensors) {
        if (t.begin < covered)
            return codedError("safetensors.offsets.overlap", {printableText(t.name), std::to_string(t.begin),
                                                              std::to_string(t.end), std::to_string(covered)});
        if (t.begin > covered)
            return codedError("safetensors.data.gap", {std::to_string(covered), std::to_string(t.begin)});
        covered = t.end;
    }
    if (covered != dataBytes)
        return codedError("safetensors.data.trailing", {std::to_string(dataBytes - covered)});
    return file;
}

} // namespace attnscope
