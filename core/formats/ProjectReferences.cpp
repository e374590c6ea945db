#include "core/formats/ProjectReferences.h"

#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/io/FileIo.h"
#include "core/io/FolderConfinement.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

// The bytes of the file a reference names, after every check on the path (see the header).
// `shown` starts each message: "field: path as written: ".
Result<std::string> readReferenceBytes(const std::string &field, const std::string &relativePath,
                                       const std::string &folder, const std::string &shown)
{
    if (relativePath.empty() || relativePath.find('\0') != std::string::npos)
        return Error{field + ".npy: expected a relative path to a .npy file, found " + quotedText(relativePath, 40)};
    if (fs::path(relativePath).is_absolute())
        return Error{shown + "expected a path relative to the project's folder, found an absolute path"};
    if (folder.empty())
        return Error{field + ": a {\"npy\": ...} reference needs the project's folder (open the project from a file)"};
    // Where the path really leads is checked before anything is stat-ed or opened, so a file
    // outside gets this message whether it exists or not.
    if (!staysInFolder(folder, relativePath))
        return Error{shown + "refused: the file is outside the project's folder (a reference must lead to a file in "
                             "that folder or a folder below it)"};
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
    return bytes;
}

// Parses what readReferenceBytes() read; the bytes are released as soon as they are parsed
// unless keepBytes (to copy the file).
Result<ReferencedStack> parseReferencedStack(std::string &bytes, const std::string &shown, bool allow3d,
                                             bool keepBytes = false)
{
    auto array = parseNpyFloat(bytes);
    if (!keepBytes) {
        bytes.clear();
        bytes.shrink_to_fit();
    }
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

} // namespace

Result<ReferencedStack> readReferencedStack(const std::string &field, const std::string &relativePath,
                                            const std::string &folder, bool allow3d)
{
    const std::string shown = field + ": " + printableText(relativePath, 200) + ": ";
    auto bytes = readReferenceBytes(field, relativePath, folder, shown);
    if (!bytes)
        return bytes.error();
    return parseReferencedStack(*bytes, shown, allow3d);
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

SavedReferences::SavedReferences(std::string fromFolder, std::string saveFolder)
    : m_from(std::move(fromFolder)), m_to(std::move(saveFolder))
{
}

std::optional<std::string> SavedReferences::operator()(const std::string &field, const NpyReference &reference)
{
    // Two fields may name one file: it is read and, if need be, copied once; a file that did
    // not keep its values is noted for each field.
    const std::string key =
        reference.path + '\0' + std::to_string(reference.fingerprint) + '\0' + std::to_string(reference.sequences);
    if (const auto it = m_decided.find(key); it != m_decided.end()) {
        if (it->second.note) {
            ReferenceNote note = *it->second.note;
            note.field = field;
            m_notes.push_back(std::move(note));
        }
        return it->second.path;
    }
    const size_t before = m_notes.size();
    Decision decision{decide(field, reference), std::nullopt};
    if (m_notes.size() > before && m_notes.back().kind != ReferenceNote::Kind::Copied)
        decision.note = m_notes.back();
    m_decided.emplace(key, decision);
    return decision.path;
}

std::optional<std::string> SavedReferences::decide(const std::string &field, const NpyReference &reference)
{
    using Kind = ReferenceNote::Kind;
    if (m_from.empty() || m_to.empty())
        return rebasedReferencePath(reference.path, m_from, m_to);
    const std::string shown = field + ": " + printableText(reference.path, 200) + ": ";
    auto bytes = readReferenceBytes(field, reference.path, m_from, shown);
    if (!bytes) {
        m_notes.push_back({Kind::Unreadable, field, reference.path, bytes.message()});
        return std::nullopt;
    }
    auto stack = parseReferencedStack(*bytes, shown, true, true);
    if (!stack) {
        m_notes.push_back({Kind::Unreadable, field, reference.path, stack.message()});
        return std::nullopt;
    }
    if (stack->rows.rows() != reference.rows || stack->rows.cols() != reference.cols ||
        stack->sequences != reference.sequences || matrixFingerprint(stack->rows) != reference.fingerprint) {
        m_notes.push_back({Kind::Changed, field, reference.path, {}});
        return std::nullopt;
    }
    stack->rows.resize(0, 0);
    // Kept: relative to the new folder, if that still leads to this very file inside it (as
    // written, else as its real path: links in the way can make the two differ).
    const std::string rebased = rebasedReferencePath(reference.path, m_from, m_to);
    const auto original = resolvedPath(fs::path(m_from) / reference.path);
    const auto there = resolvedPath(fs::path(m_to) / rebased);
    if (staysInFolder(m_to, rebased) && original && there && *original == *there)
        return rebased;
    if (const auto to = resolvedPath(m_to); original && to && isWithinFolder(*original, *to))
        return original->lexically_relative(*to).generic_string();
    std::string error;
    bool created = false;
    auto copy = copyIntoSaveFolder(*bytes, reference.path, created, error);
    if (!copy) {
        m_notes.push_back({Kind::NotCopied, field, reference.path, error});
        return std::nullopt;
    }
    if (created)
        m_notes.push_back({Kind::Copied, field, reference.path, *copy});
    return copy;
}

std::optional<std::string> SavedReferences::copyIntoSaveFolder(const std::string &bytes, const std::string &path,
                                                               bool &created, std::string &error)
{
    const fs::path name = fs::path(path).filename();
    const std::string stem = name.stem().string(), extension = name.extension().string();
    for (int i = 0; i < 100; ++i) {
        const std::string candidate = i == 0 ? name.string() : stem + "-" + std::to_string(i) + extension;
        const fs::path target = fs::path(m_to) / candidate;
        struct stat st;
        if (::lstat(target.c_str(), &st) == 0) {
            // Taken: the same bytes in a plain file of the folder serve as the copy, anything else
            // (another file, a link) is left alone.
            if (!S_ISREG(st.st_mode) || std::uint64_t(st.st_size) != bytes.size() || !staysInFolder(m_to, candidate))
                continue;
            auto existing = readInputFile(target.string(), std::int64_t(bytes.size()), false);
            if (existing && *existing == bytes)
                return candidate;
            continue;
        }
        if (errno != ENOENT) {
            error = printableText(target.string(), 200) + ": " + std::strerror(errno);
            return std::nullopt;
        }
        AtomicFileWriter file(target.string());
        if (Status s = file.open(); !s) {
            error = s.message();
            return std::nullopt;
        }
        file.write(bytes);
        if (Status s = file.commit(); !s) {
            error = s.message();
            return std::nullopt;
        }
        m_copies.push_back(target.string());
        created = true;
        return candidate;
    }
    error = printableText((fs::path(m_to) / name).string(), 200) + ": every name up to " + stem + "-99" + extension +
            " is taken";
    return std::nullopt;
}

void SavedReferences::discardCopies()
{
    for (const std::string &copy : m_copies)
        ::unlink(copy.c_str());
    m_copies.clear();
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
