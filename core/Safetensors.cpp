#include "core/Safetensors.h"

#include "core/ErrorCode.h"
#include "core/JsonDocument.h"
#include "core/UserText.h"

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
    if (!parsed)
        return prefixedError(path + ": ", parsed.error());
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
        return Error{"header: expected a JSON object"};

    const unsigned char *data = bytes + 8 + headerBytes;
    const std::uint64_t dataBytes = size - 8 - headerBytes;
    SafetensorsFile file;
    file.m_keepAlive = std::move(keepAlive);
    for (const auto &[name, entry] : header->items()) {
        const std::string shown = "tensor \"" + printableText(name) + "\"";
        if (name == "__metadata__") {
            if (!entry.is_object())
                return Error{"__metadata__: expected an object of strings"};
            for (const auto &[key, value] : entry.items()) {
                if (!value.is_string())
                    return Error{"__metadata__." + printableText(key) + ": expected a string"};
                file.m_metadata[key] = value.get<std::string>();
            }
            continue;
        }
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
            !entry.contains("data_offsets"))
            return Error{shown + ": expected {\"dtype\", \"shape\", \"data_offsets\"}"};
        SafetensorsTensor t;
        t.name = name;
        if (!entry["dtype"].is_string())
            return Error{shown + ": dtype is not a string"};
        t.dtype = entry["dtype"].get<std::string>();
        t.elementSize = safetensorsElementSize(t.dtype);
        const json &shape = entry["shape"];
        if (!shape.is_array() || shape.size() > 8)
            return Error{shown + ": shape is not an array of at most 8 sizes"};
        std::uint64_t count = 1;
        for (const auto &d : shape) {
            std::uint64_t dim = 0;
            if (!readUnsigned(d, dim) || dim > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                return Error{shown + ": shape holds " + printableText(d.dump(), 24) + ", not a size"};
            if (mulOverflows(count, dim, count))
                return Error{shown + ": shape has more elements than can be addressed"};
            t.shape.push_back(std::int64_t(dim));
        }
        const json &offsets = entry["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2 || !readUnsigned(offsets[0], t.begin) ||
            !readUnsigned(offsets[1], t.end) || t.begin > t.end)
            return Error{shown + ": data_offsets is not [begin, end] with begin <= end"};
        if (t.end > dataBytes)
            return Error{shown + ": data_offsets end " + std::to_string(t.end) + " is past the " +
                         std::to_string(dataBytes) + " bytes of data"};
        std::uint64_t expected = 0;
        if (t.elementSize > 0 &&
            (mulOverflows(count, std::uint64_t(t.elementSize), expected) || expected != t.end - t.begin))
            return Error{shown + ": " + t.dtype + " " + std::to_string(count) + " values need " +
                         std::to_string(count * std::uint64_t(t.elementSize)) + " bytes, data_offsets give " +
                         std::to_string(t.end - t.begin)};
        t.data = data + t.begin;
        file.m_tensors.push_back(std::move(t));
    }
    std::sort(file.m_tensors.begin(), file.m_tensors.end(),
              [](const SafetensorsTensor &a, const SafetensorsTensor &b) { return a.begin < b.begin; });
    std::uint64_t covered = 0;
    for (const auto &t : file.m_tensors) {
        if (t.begin < covered)
            return Error{"tensor \"" + printableText(t.name) + "\": data_offsets [" + std::to_string(t.begin) + ", " +
                         std::to_string(t.end) + "] overlap the tensor before it (which ends at " +
                         std::to_string(covered) + ")"};
        if (t.begin > covered)
            return Error{"data: bytes " + std::to_string(covered) + " to " + std::to_string(t.begin) +
                         " belong to no tensor"};
        covered = t.end;
    }
    if (covered != dataBytes)
        return Error{"data: " + std::to_string(dataBytes - covered) + " bytes after the last tensor belong to none"};
    return file;
}

} // namespace attnscope
