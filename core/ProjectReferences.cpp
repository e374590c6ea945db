#include "core/ProjectReferences.h"

#include "core/FileIo.h"
#include "core/MemoryLimits.h"
#include "core/Npy.h"
#include "core/ProjectFile.h"
#include "core/UserText.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string text = "(";
    for (size_t i = 0; i < shape.size(); ++i)
        text += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
    return text + ")";
}

} // namespace

Result<MatrixF> readReferencedMatrix(const std::string &field, const std::string &relativePath,
                                     const std::string &folder)
{
    auto stack = readReferencedStack(field, relativePath, folder, false);
    if (!stack)
        return stack.error();
    return std::move(stack->rows);
}

Result<ReferencedStack> readReferencedStack(const std::string &field, const std::string &relativePath,
                                            const std::string &folder, bool allow3d)
{
    const std::string shown = field + ": " + printableText(relativePath, 200) + ": ";
    if (relativePath.empty() || relativePath.find('\0') != std::string::npos)
        return Error{field + ".npy: expected a relative path to a .npy file, found " + quotedText(relativePath, 40)};
    if (fs::path(relativePath).is_absolute())
        return Error{shown + "expected a path relative to the project's folder, found an absolute path"};
    if (folder.empty())
        return Error{field + ": a {\"npy\": ...} reference needs the project's folder (open the project from a file)"};
    const fs::path resolved = fs::path(folder) / relativePath;
    // Only regular files: /dev/zero would read without end, a FIFO would block in open().
    struct stat st;
    if (::stat(resolved.c_str(), &st) != 0)
        return Error{shown + "cannot read the file (" + std::string(std::strerror(errno)) + ")", ErrorKind::Io};
    if (!S_ISREG(st.st_mode))
        return Error{shown + "not a regular file"};
    auto bytes = readInputFile(resolved.string(), memoryBudget() / 4, false);
    if (!bytes) {
        // readInputFile's message starts with the resolved path; name the field and the path as written.
        std::string reason = bytes.message();
        const std::string prefix = printableText(resolved.string(), 200) + ": ";
        if (reason.starts_with(prefix))
            reason.erase(0, prefix.size());
        return Error{shown + reason, bytes.kind()};
    }
    auto array = parseNpyFloat(*bytes);
    bytes->clear();
    bytes->shrink_to_fit();
    if (!array)
        return Error{shown + array.message()};
    const auto &shape = array->shape;
    if (shape.size() != 2 && !(allow3d && shape.size() == 3))
        return Error{
            shown +
            (allow3d ? "expected a 2-D or (batched) 3-D array, found shape " : "expected a 2-D array, found shape ") +
            shapeText(shape)};
    for (const std::int64_t extent : shape)
        if (extent < 1)
            return Error{shown + "expected at least one row and one column, found shape " + shapeText(shape)};
    ReferencedStack stack;
    stack.sequences = shape.size() == 3 ? shape[0] : 0;
    // [B, T, d] in C order is the (B*T) x d row-major matrix of the B matrices one under another.
    const std::int64_t rows = shape.size() == 3 ? shape[0] * shape[1] : shape[0], cols = shape.back();
    MatrixF &m = stack.rows;
    m.resize(rows, cols);
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        const float v = array->data[size_t(i)];
        if (!std::isfinite(v))
            return Error{shown + "[" + std::to_string(i / cols) + "][" + std::to_string(i % cols) +
                         "]: expected a finite float32 number, found " +
                         (std::isnan(v) ? "NaN"
                          : v > 0       ? "Infinity"
                                        : "-Infinity")};
        m.data()[i] = v;
    }
    return stack;
}

std::string rebasedReferencePath(const std::string &path, const std::string &fromFolder, const std::string &toFolder)
{
    if (fromFolder.empty() || toFolder.empty())
        return path;
    std::error_code ec;
    const fs::path target = fs::absolute(fs::path(fromFolder) / path, ec).lexically_normal();
    const fs::path base = fs::absolute(fs::path(toFolder), ec).lexically_normal();
    if (ec)
        return path;
    const fs::path relative = target.lexically_relative(base);
    return relative.empty() ? path : relative.generic_string();
}

std::uint64_t matrixFingerprint(const MatrixF &m)
{
    // FNV-1a over the shape and the values' bytes.
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](const void *data, size_t n) {
        const auto *p = static_cast<const unsigned char *>(data);
        for (size_t i = 0; i < n; ++i)
            h = (h ^ p[i]) * 1099511628211ull;
    };
    const std::int64_t shape[2] = {m.rows(), m.cols()};
    mix(shape, sizeof shape);
    mix(m.data(), size_t(m.size()) * sizeof(float));
    return h;
}

} // namespace attnscope
