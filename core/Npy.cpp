#include "core/Npy.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");

namespace attnscope {

std::int64_t NpyArray::size() const
{
    std::int64_t n = 1;
    for (auto d : shape)
        n *= d;
    return n;
}

std::string npyBytes(const std::vector<std::int64_t> &shape, const float *data)
{
    std::string dims;
    std::int64_t count = 1;
    for (auto d : shape) {
        dims += std::to_string(d) + ", ";
        count *= d;
    }
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
    out.append(reinterpret_cast<const char *>(data), size_t(count) * sizeof(float));
    return out;
}

namespace {

std::string headerValue(const std::string &header, const std::string &key)
{
    const auto at = header.find("'" + key + "'");
    if (at == std::string::npos)
        return {};
    auto start = header.find(':', at);
    if (start == std::string::npos)
        return {};
    ++start;
    while (start < header.size() && header[start] == ' ')
        ++start;
    if (header[start] == '(')
        return header.substr(start, header.find(')', start) - start + 1);
    if (header[start] == '\'')
        return header.substr(start + 1, header.find('\'', start + 1) - start - 1);
    auto end = header.find_first_of(",}", start);
    return header.substr(start, end - start);
}

} // namespace

Result<NpyArray> parseNpy(const std::string &bytes)
{
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
        return Error{"not a .npy file (missing the \\x93NUMPY magic)"};
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t headerLen, offset;
    if (major == 1) {
        headerLen = static_cast<unsigned char>(bytes[8]) | (size_t(static_cast<unsigned char>(bytes[9])) << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12)
            return Error{"truncated .npy header"};
        headerLen = 0;
        for (int i = 0; i < 4; ++i)
            headerLen |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        offset = 12;
    } else {
        return Error{"unsupported .npy version " + std::to_string(major)};
    }
    if (bytes.size() < offset + headerLen)
        return Error{"truncated .npy header"};
    const std::string header = bytes.substr(offset, headerLen);
    const std::string descr = headerValue(header, "descr");
    if (descr != "<f4" && descr != "<f8")
        return Error{"unsupported .npy dtype '" + descr + "' (expected '<f4' or '<f8')"};
    if (headerValue(header, "fortran_order") != "False")
        return Error{"unsupported .npy layout: only C order is read"};

    NpyArray array;
    std::string shape = headerValue(header, "shape");
    std::istringstream dims(shape.size() >= 2 ? shape.substr(1, shape.size() - 2) : "");
    std::string item;
    while (std::getline(dims, item, ',')) {
        if (item.find_first_not_of(' ') == std::string::npos)
            continue;
        array.shape.push_back(std::stoll(item));
    }
    const size_t elem = descr == "<f4" ? 4 : 8;
    const size_t count = size_t(array.size());
    const size_t dataAt = offset + headerLen;
    if (bytes.size() - dataAt != count * elem)
        return Error{"truncated .npy data: expected " + std::to_string(count * elem) + " bytes, found " +
                     std::to_string(bytes.size() - dataAt)};
    array.data.resize(count);
    for (size_t i = 0; i < count; ++i) {
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

Result<NpyArray> readNpyFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error{"cannot open " + path};
    std::ostringstream s;
    s << in.rdbuf();
    auto array = parseNpy(s.str());
    if (!array)
        return Error{path + ": " + array.message()};
    return array;
}

} // namespace attnscope
