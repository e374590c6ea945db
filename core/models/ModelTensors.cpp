#include "core/models/ModelTensors.h"

#include "core/formats/Npy.h"
#include "core/io/UserText.h"

#include <cmath>
#include <cstring>

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

ModelTensors::ModelTensors(const SafetensorsFile &file, std::string prefix, std::string shownFile)
    : m_file(file), m_prefix(std::move(prefix)), m_shown(std::move(shownFile))
{
}

Result<const SafetensorsTensor *> ModelTensors::find(const std::vector<std::string> &names) const
{
    for (const std::string &name : names) {
        if (const SafetensorsTensor *t = m_file.find(name))
            return t;
        if (const SafetensorsTensor *t = m_file.find(m_prefix + name))
            return t;
    }
    return Error{m_shown + ": no tensor " + names.front() + " (nor " + m_prefix + names.front() +
                 "); the file does not hold this model's weights"};
}

Result<std::vector<float>> ModelTensors::values(const SafetensorsTensor &t, const std::vector<std::int64_t> &shape,
                                                const std::string &expected) const
{
    const std::string name = m_shown + ": " + printableText(t.name, 120);
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

} // namespace attnscope
