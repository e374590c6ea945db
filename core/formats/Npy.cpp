#include "core/formats/Npy.h"

#include "core/ErrorCode.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");

namespace attnscope {

std::int64_t NpyArray::size() const
{
    std::int64_t n = 1;
    for (auto d : shape)
        n = saturatingMul(n, d);
    return n;
}

std::string npyHeader(const std::vector<std::int64_t> &shape)
{
    std::string dims;
    for (auto d : shape)
        dims += std::to_string(d) + ", ";
    if (shape.size() > 1)
        dims.resize(dims.size() - 1); // "(2, 3)" but "(2,)"
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    // Magic (6) + version (2) + header length (2) + header + '\n' is padded to 64 bytes.
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';

    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char((header.size() >> 8) & 0xff);
    out += header;
    return out;
}

std::string npyBytes(const std::vector<std::int64_t> &shape, const float *data)
{
    std::int64_t count = 1;
    for (auto d : shape)
        count *= d;
    std::string out = npyHeader(shape);
    out.append(reinterpret_cast<const char *>(data), size_t(count) * sizeof(float));
    return out;
}

namespace {

// The value of 'key' in the header's Python dict literal, as text: a tuple with its
// parentheses, a string without its quotes, anything else up to the next ',' or '}'.
std::optional<std::string> headerValue(const std::string &header, const std::string &key)
{
    const auto at = header.find("'" + key + "'");
    if (at == std::string::npos)
        return std::nullopt;
    auto start = header.find(':', at + key.size() + 2);
    if (start == std::string::npos)
        return std::nullopt;
    ++start;
    while (start < header.size() && header[start] == ' ')
        ++start;
    if (start >= header.size())
        return std::nullopt;
    if (header[start] == '(') {
        const auto end = header.find(')', start);
        if (end == std::string::npos)
            return std::nullopt;
        return header.substr(start, end - start + 1);
    }
    if (header[start] == '\'') {
        const auto end = header.find('\'', start + 1);
        if (end == std::string::npos)
            return std::nullopt;
        return header.substr(start + 1, end - start - 1);
    }
    auto end = header.find_first_of(",}", start);
    if (end == std::string::npos)
        return std::nullopt;
    while (end > start && header[end - 1] == ' ')
        --end;
    return header.substr(start, end - start);
}

// "(2, 3)", "(4,)" or "()" into dimensions; every item a non-negative whole number.
Result<std::vector<std::int64_t>> parseShape(const std::string &tuple)
{
    auto bad = [&] { return codedError("npy.shape", {quotedText(tuple, 40)}); };
    if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')')
        return bad();
    std::vector<std::int64_t> shape;
    const std::string_view inner = std::string_view(tuple).substr(1, tuple.size() - 2);
    if (inner.find_first_not_of(' ') == std::string_view::npos)
        return shape; // "()": a scalar
    size_t pos = 0;
    while (pos <= inner.size()) {
        size_t comma = inner.find(',', pos);
        if (comma == std::string_view::npos)
            comma = inner.size();
        std::string_view item = inner.substr(pos, comma - pos);
        while (!item.empty() && item.front() == ' ')
            item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ')
            item.remove_suffix(1);
        const bool last = comma == inner.size();
        if (item.empty()) {
            if (!last || shape.empty()) // only "(4,)"'s trailing comma leaves an empty item
                return bad();
            break;
        }
        std::int64_t d = 0;
        const auto r = std::from_chars(item.data(), item.data() + item.size(), d);
        if (r.ec != std::errc() || r.ptr != item.data() + item.size() || d < 0)
            return bad();
        shape.push_back(d);
        if (shape.size() > 32)
            return codedError("npy.shape.rank", {});
        pos = comma + 1;
    }
    return shape;
}

} // namespace

Result<NpyHeader> parseNpyHeader(std::string_view bytes)
{
    if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6))
        return codedError("npy.magic", {});
    const int major = static_cast<unsigned char>(bytes[6]);
    std::size_t headerLen = 0, offset = 0;
    if (major == 1) {
        headerLen = static_cast<unsigned char>(bytes[8]) | (std::size_t(static_cast<unsigned char>(bytes[9])) << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            return codedError("npy.header.truncated", {});
        for (int i = 0; i < 4; ++i)
            headerLen |= std::size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        offset = 12;
    } else {
        return codedError("npy.version", {std::to_string(major)});
    }
    if (headerLen > bytes.size() - offset)
        return codedError("npy.header.length", {std::to_string(headerLen), std::to_string(bytes.size() - offset)});
    const std::string header(bytes.substr(offset, headerLen));
    NpyHeader out;
    const auto descr = headerValue(header, "descr");
    if (!descr)
        return codedError("npy.header.entry", {"descr"});
    out.descr = *descr;
    const auto order = headerValue(header, "fortran_order");
    if (!order)
        return codedError("npy.header.entry", {"fortran_order"});
    if (*order != "False")
        return codedError("npy.order", {});
    const auto shapeText = headerValue(header, "shape");
    if (!shapeText)
        return codedError("npy.header.entry", {"shape"});
    auto shape = parseShape(*shapeText);
    if (!shape)
        return shape.error();
    out.shape = std::move(*shape);
    out.dataOffset = offset + headerLen;
    return out;
}

Result<NpyArray> parseNpy(const std::string &bytes)
{
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
        return codedError("npy.magic", {});
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t headerLen, offset;
    if (major == 1) {
        headerLen = static_cast<unsigned char>(bytes[8]) | (size_t(static_cast<unsigned char>(bytes[9])) << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            return codedError("npy.header.truncated", {});
        headerLen = 0;
        for (int i = 0; i < 4; ++i)
            headerLen |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        offset = 12;
    } else {
        return codedError("npy.version", {std::to_string(major)});
    }
    if (headerLen > bytes.size() - offset)
        return codedError("npy.header.short", {std::to_string(headerLen), std::to_string(bytes.size() - offset)});
    const std::string header = bytes.substr(offset, headerLen);
    const auto descr = headerValue(header, "descr");
    if (!descr)
        return codedError("npy.header.unreadable", {"descr"});
    if (*descr != "<f4" && *descr != "<f8")
        return codedError("npy.dtype", {quotedText(*descr, 20)});
    const auto order = headerValue(header, "fortran_order");
    if (!order)
        return codedError("npy.header.unreadable", {"fortran_order"});
    if (*order != "False")
        return codedError("npy.order", {});
    const auto shapeText = headerValue(header, "shape");
    if (!shapeText)
        return codedError("npy.header.unreadable", {"shape"});
    auto shape = parseShape(*shapeText);
    if (!shape)
        return shape.error();

    NpyArray array;
    array.shape = std::move(*shape);
    const size_t elem = *descr == "<f4" ? 4 : 8;
    const size_t dataAt = offset + headerLen;
    const std::int64_t found = std::int64_t(bytes.size() - dataAt);
    // The product saturates instead of overflowing, and is compared with the data present
    // before anything is allocated, so a shape like (2^32, 2^32, 4) is refused, not wrapped.
    std::int64_t count = 1;
    for (auto d : array.shape)
        count = saturatingMul(count, d);
    const std::int64_t needed = saturatingMul(count, std::int64_t(elem));
    if (needed != found)
        return codedError(
            "npy.data.truncated",
            {printableText(*shapeText, 60),
             needed == std::numeric_limits<std::int64_t>::max() ? std::string("more") : std::to_string(needed),
             std::to_string(found)});
    array.data.resize(size_t(count));
    for (size_t i = 0; i < size_t(count); ++i) {
        if (elem == 4) {
            float f;
            std::memcpy(&f, bytes.data() + dataAt + i * 4, 4);
            array.data[i] = f;
        } else {
            std::memcpy(&array.data[i], bytes.data() + dataAt + i * 8, 8);
        }
    }
    return array;
}

std::int64_t NpyFloatArray::size() const
{
    std::int64_t n = 1;
    for (auto d : shape)
        n = saturatingMul(n, d);
    return n;
}

float halfToFloat(std::uint16_t bits)
{
    const std::uint32_t sign = std::uint32_t(bits & 0x8000) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x03ff;
    std::uint32_t out;
    if (exponent == 0x1f) { // Inf or NaN
        out = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) { // normal
        out = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) { // zero
        out = sign;
    } else { // subnormal: mantissa * 2^-24, exact in float32
        const float value = float(mantissa) * 0x1p-24f;
        std::memcpy(&out, &value, 4);
        out |= sign;
    }
    float f;
    std::memcpy(&f, &out, 4);
    return f;
}

Result<NpyFloatArray> parseNpyFloat(std::string_view bytes)
{
    auto header = parseNpyHeader(bytes);
    if (!header)
        return header.error();
    std::size_t elem = 0;
    if (header->descr == "<f2")
        elem = 2;
    else if (header->descr == "<f4")
        elem = 4;
    else if (header->descr == "<f8")
        elem = 8;
    else
        return codedError("npy.dtype.float", {quotedText(header->descr, 20)});
    NpyFloatArray array;
    array.shape = header->shape;
    const std::int64_t count = array.size();
    const std::int64_t needed = saturatingMul(count, std::int64_t(elem));
    const std::int64_t found = std::int64_t(bytes.size() - header->dataOffset);
    if (needed != found)
        return codedError(
            "npy.data.short",
            {needed == std::numeric_limits<std::int64_t>::max() ? std::string("more") : std::to_string(needed),
             std::to_string(found)});
    array.data.resize(size_t(count));
    const char *data = bytes.data() + header->dataOffset;
    for (size_t i = 0; i < size_t(count); ++i) {
        if (elem == 2) {
            std::uint16_t bits;
            std::memcpy(&bits, data + i * 2, 2);
            array.data[i] = halfToFloat(bits);
        } else if (elem == 4) {
            std::memcpy(&array.data[i], data + i * 4, 4);
        } else {
            double d;
            std::memcpy(&d, data + i * 8, 8);
            array.data[i] = std::abs(d) <= double(std::numeric_limits<float>::max()) || !std::isfinite(d)
                                ? float(d)
                                : std::numeric_limits<float>::infinity(); // reported by the caller
        }
    }
    return array;
}

Result<NpyArray> readNpyFile(const std::string &path)
{
    // The doubles read take at most twice the file: a quarter of the budget keeps room.
    auto bytes = readInputFile(path, memoryBudget() / 4, false);
    if (!bytes)
        return bytes.error();
    auto array = parseNpy(*bytes);
    if (!array)
        return prefixedError(printableText(path, 200) + ": ", array.error());
    return array;
}

} // namespace attnscope
