#include "core/formats/TraceExport.h"

#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/TensorExport.h"
#include "core/io/FileIo.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// design.md's compute contract: these seven, under these names.
constexpr std::array<const char *, 7> kContract = {"q", "k", "v", "scores", "weights", "context", "output"};

const char kPartialPrefix[] = ".attnscope-partial-";

// A tensor of the trace as it lies in memory: its per-head matrices (or one matrix) back to
// back, or the uint8 mask, which is converted a row at a time.
struct TensorView {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<const MatrixF *> parts;
    const MaskMatrix *mask = nullptr;
    const float *values = nullptr;    // a flat tensor (NpyFolderTensor::values)
    const std::string *raw = nullptr; // a file that is not a tensor: name is the file name

    std::string fileName() const { return raw ? name : name + ".npy"; }

    std::int64_t count() const
    {
        std::int64_t n = 1;
        for (auto d : shape)
            n *= d;
        return n;
    }

    // emit(const float *values, size_t n) for consecutive blocks of the row-major data.
    template <typename Emit>
    void forEachBlock(Emit &&emit) const
    {
        for (const MatrixF *m : parts)
            emit(m->data(), size_t(m->size()));
        if (values)
            emit(values, size_t(count()));
        if (mask) {
            std::vector<float> row(size_t(mask->cols()));
            for (Eigen::Index r = 0; r < mask->rows(); ++r) {
                for (Eigen::Index c = 0; c < mask->cols(); ++c)
                    row[size_t(c)] = float((*mask)(r, c));
                emit(row.data(), row.size());
            }
        }
    }
};

TensorView stacked(std::string name, const std::vector<MatrixF> &perHead)
{
    TensorView v{std::move(name), {}, {}, nullptr};
    const std::int64_t h = std::int64_t(perHead.size());
    v.shape = {h, h ? perHead[0].rows() : 0, h ? perHead[0].cols() : 0};
    for (const MatrixF &m : perHead)
        v.parts.push_back(&m);
    return v;
}

TensorView flat(std::string name, const MatrixF &m)
{
    return TensorView{std::move(name), {m.rows(), m.cols()}, {&m}, nullptr};
}

// Same names, order and shapes as traceTensors() (core/formats/TensorExport.h).
std::vector<TensorView> traceViews(const AttentionTrace &t)
{
    std::vector<TensorView> views = {stacked("q", t.q),
                                     stacked("k", t.k),
                                     stacked("v", t.v),
                                     stacked("scores", t.scores),
                                     stacked("weights", t.weights),
                                     stacked("headOutputs", t.headOutputs),
                                     flat("context", t.context),
                                     flat("output", t.output)};
    views.push_back(TensorView{"mask", {t.allowed.rows(), t.allowed.cols()}, {}, &t.allowed});
    return views;
}

void writeNpy(const TensorView &v, AtomicFileWriter &out)
{
    out.write(npyHeader(v.shape));
    v.forEachBlock([&](const float *data, size_t n) { out.write(reinterpret_cast<const char *>(data), n * 4); });
}

Status writeContractFiles(const std::vector<TensorView> &views, const fs::path &staging, const fs::path &shownDir)
{
    for (const TensorView &v : views) {
        const std::string file = v.fileName();
        AtomicFileWriter out((staging / file).string(), (shownDir / file).string());
        if (Status s = out.open(); !s)
            return s;
        if (v.raw)
            out.write(*v.raw);
        else
            writeNpy(v, out);
        if (Status s = out.commit(); !s)
            return s;
    }
    return Ok{};
}

Status writeViews(const std::vector<TensorView> &views, const std::string &dirPath);

} // namespace

std::map<std::string, std::string> traceNpyFiles(const AttentionTrace &t)
{
    std::map<std::string, std::string> files;
    for (const auto &tensor : traceTensors(t))
        if (std::find(kContract.begin(), kContract.end(), tensor.name) != kContract.end())
            files[tensor.name + ".npy"] = npyBytes(tensor.shape, tensor.data.data());
    return files;
}

Status writeTraceNpy(const AttentionTrace &trace, const std::string &dirPath)
{
    std::vector<TensorView> views;
    for (TensorView &v : traceViews(trace))
        if (std::find_if(kContract.begin(), kContract.end(), [&](const char *n) { return v.name == n; }) !=
            kContract.end())
            views.push_back(std::move(v));
    return writeViews(views, dirPath);
}

Status writeBatchTraceNpy(const std::vector<AttentionTrace> &traces, const std::string &dirPath)
{
    if (traces.empty())
        return Error{dirPath + ": no sequences to write", ErrorKind::Internal};
    std::vector<std::vector<TensorView>> perSequence;
    for (const AttentionTrace &t : traces)
        perSequence.push_back(traceViews(t));
    std::vector<TensorView> views;
    for (size_t i = 0; i < perSequence.front().size(); ++i) {
        const TensorView &first = perSequence.front()[i];
        if (std::find_if(kContract.begin(), kContract.end(), [&](const char *n) { return first.name == n; }) ==
            kContract.end())
            continue;
        TensorView v{first.name, first.shape, {}, nullptr};
        v.shape.insert(v.shape.begin(), std::int64_t(traces.size()));
        for (const std::vector<TensorView> &sequence : perSequence)
            v.parts.insert(v.parts.end(), sequence[i].parts.begin(), sequence[i].parts.end());
        views.push_back(std::move(v));
    }
    return writeViews(views, dirPath);
}

Status writeNpyFolder(const std::vector<NpyFolderTensor> &tensors, const std::string &dirPath,
                      const std::vector<FolderFile> &files)
{
    std::vector<TensorView> views;
    for (const NpyFolderTensor &t : tensors)
        views.push_back(TensorView{t.name, t.shape, t.parts, nullptr, t.values, nullptr});
    for (const FolderFile &f : files)
        views.push_back(TensorView{f.name, {}, {}, nullptr, nullptr, &f.bytes});
    return writeViews(views, dirPath);
}

namespace {

Status writeViews(const std::vector<TensorView> &views, const std::string &dirPath)
{
    std::error_code ec;
    const fs::path dir = fs::absolute(fs::path(dirPath), ec).lexically_normal();
    const fs::path shownDir = fs::path(dirPath);
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        return Error{dirPath + ": exists and is not a directory", ErrorKind::Io};
    const bool exists = fs::is_directory(dir, ec);
    const fs::path parent = dir.has_filename() ? dir.parent_path() : dir.parent_path().parent_path();
    if (!exists && !fs::is_directory(parent, ec))
        return Error{parent.string() + ": no such directory", ErrorKind::Io};

    // Staging folders are held (flock) by their compute from creation to removal or rename; one
    // nobody holds is a killed run's (FileIo.h).
    removeAbandonedStagingFolders((exists ? dir : parent).string(), kPartialPrefix);
    if (exists && dir != parent)
        removeAbandonedStagingFolders(parent.string(), kPartialPrefix);

    int lockFd = -1;
    auto created = exists ? createStagingFolder(dir.string(), kPartialPrefix, dirPath, lockFd)
                          : createStagingFolder(parent.string(), kPartialPrefix + dir.filename().string() + "-",
                                                parent.string(), lockFd);
    if (!created)
        return created.error();
    struct Unlock {
        int fd;
        ~Unlock() { ::close(fd); } // after the folder is renamed or removed
    } unlock{lockFd};
    // The folder has the umask's mode: it becomes the output folder when there was none.
    const fs::path staging = *created;
    auto fail = [&](Status s) {
        std::error_code ignored;
        fs::remove_all(staging, ignored);
        return s;
    };

    if (Status s = writeContractFiles(views, staging, shownDir); !s)
        return fail(s);

    if (!exists) {
        if (::rename(staging.c_str(), dir.c_str()) != 0)
            return fail(ioError(dirPath, "cannot create", errno));
        return Ok{};
    }

    // dir exists: keep a hard link to each old file, so a failed rename can put it back.
    struct Replaced {
        std::string name;
        bool backedUp;
    };
    std::vector<Replaced> replaced;
    for (const TensorView &view : views) {
        const std::string name = view.fileName();
        const fs::path target = dir / name, backup = staging / (name + ".old");
        bool backedUp = ::link(target.c_str(), backup.c_str()) == 0;
        // A file system without hard links: move the old file aside instead (for the moment
        // until the next rename, the name is absent rather than mixed).
        if (!backedUp && errno != ENOENT)
            backedUp = ::rename(target.c_str(), backup.c_str()) == 0;
        if (::rename((staging / name).c_str(), target.c_str()) != 0) {
            const int err = errno;
            for (auto r = replaced.rbegin(); r != replaced.rend(); ++r) {
                if (r->backedUp)
                    ::rename((staging / (r->name + ".old")).c_str(), (dir / r->name).c_str());
                else
                    ::unlink((dir / r->name).c_str());
            }
            return fail(ioError((shownDir / name).string(), "cannot replace", err));
        }
        replaced.push_back({name, backedUp});
    }
    fs::remove_all(staging, ec);
    return Ok{};
}

} // namespace

std::vector<std::string> traceTensorNames()
{
    return {"q", "k", "v", "scores", "weights", "headOutputs", "context", "output", "mask"};
}

std::vector<std::int64_t> traceTensorShape(const AttentionTrace &trace, const std::string &name)
{
    for (const TensorView &v : traceViews(trace))
        if (v.name == name)
            return v.shape;
    return {};
}

Status writeTensorNpy(const AttentionTrace &trace, const std::string &name, AtomicFileWriter &out)
{
    std::string names;
    for (const TensorView &v : traceViews(trace)) {
        if (v.name == name) {
            writeNpy(v, out);
            return Ok{};
        }
        names.append(names.empty() ? "" : ", ").append(v.name);
    }
    return Error{"tensor \"" + name + "\": expected one of " + names};
}

namespace {

std::uint32_t crc32Update(std::uint32_t crc, const unsigned char *bytes, size_t n)
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
    std::uint32_t c = crc ^ 0xffffffffu;
    for (size_t i = 0; i < n; ++i)
        c = table[(c ^ bytes[i]) & 0xff] ^ (c >> 8);
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

// Shortest text that reads back as the same float, as a JSON number ("3.0", "0.1", "1e-07").
void appendNumber(std::string &out, float f)
{
    if (!std::isfinite(f)) {
        out += "null";
        return;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    const std::string_view text(buf, size_t(r.ptr - buf));
    out += text;
    if (text.find_first_of(".e") == std::string_view::npos)
        out += ".0";
}

std::string jsonString(const std::string &s)
{
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

Status writeTraceNpz(const AttentionTrace &trace, AtomicFileWriter &out)
{
    const auto views = traceViews(trace);
    // ZIP without the 64-bit extension: every size and offset must stay below 4 GiB.
    std::uint64_t total = 0;
    for (const TensorView &v : views) {
        const std::string name = v.name + ".npy";
        const std::uint64_t body = npyHeader(v.shape).size() + std::uint64_t(v.count()) * 4;
        total += 30 + name.size() + body;
        if (body >= 0xffffffffu || total >= 0xffffffffu)
            return Error{"npz: " + name + " makes the archive larger than 4 GiB (use the .npy files instead)",
                         ErrorKind::TooLarge};
    }
    std::string directory;
    std::uint32_t offset = 0;
    for (const TensorView &v : views) {
        const std::string name = v.name + ".npy";
        const std::string header = npyHeader(v.shape);
        std::uint32_t crc = crc32Update(0, reinterpret_cast<const unsigned char *>(header.data()), header.size());
        v.forEachBlock([&](const float *data, size_t n) {
            crc = crc32Update(crc, reinterpret_cast<const unsigned char *>(data), n * 4);
        });
        const std::uint32_t size = std::uint32_t(header.size() + std::uint64_t(v.count()) * 4);
        // Stored (method 0), dated 1980-01-01 so the archive is reproducible.
        std::string local;
        put32(local, 0x04034b50);
        put16(local, 20);
        put16(local, 0);
        put16(local, 0);
        put16(local, 0);
        put16(local, 0x21);
        put32(local, crc);
        put32(local, size);
        put32(local, size);
        put16(local, std::uint32_t(name.size()));
        put16(local, 0);
        local += name;
        out.write(local);
        out.write(header);
        v.forEachBlock([&](const float *data, size_t n) { out.write(reinterpret_cast<const char *>(data), n * 4); });

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
        offset += std::uint32_t(local.size()) + size;
    }
    std::string end = directory;
    put32(end, 0x06054b50);
    put16(end, 0);
    put16(end, 0);
    put16(end, std::uint32_t(views.size()));
    put16(end, std::uint32_t(views.size()));
    put32(end, std::uint32_t(directory.size()));
    put32(end, offset);
    put16(end, 0);
    out.write(end);
    return Ok{};
}

TraceLabels TraceLabels::of(const Project &project)
{
    return {project.title, project.queryTokens, project.keyLabels()};
}

Status writeTraceJson(const TraceLabels &labels, const AttentionTrace &trace, AtomicFileWriter &out)
{
    std::string text = "{\"format\":\"attnscope-trace\",\"version\":1";
    if (!labels.title.empty())
        text += ",\"title\":" + jsonString(labels.title);
    auto list = [&](const char *key, const std::vector<std::string> &tokens) {
        text += std::string(",\"") + key + "\":[";
        for (size_t i = 0; i < tokens.size(); ++i)
            text.append(i ? "," : "").append(jsonString(tokens[i]));
        text += "]";
    };
    list("queryTokens", labels.queryTokens);
    list("keyTokens", labels.keyTokens);
    text += ",\"tensors\":{";
    out.write(text);

    bool firstTensor = true;
    for (const TensorView &v : traceViews(trace)) {
        text = firstTensor ? "" : ",";
        firstTensor = false;
        text += "\"" + v.name + "\":{\"shape\":[";
        for (size_t d = 0; d < v.shape.size(); ++d)
            text.append(d ? "," : "").append(std::to_string(v.shape[d]));
        text += "],\"data\":";
        const size_t dims = v.shape.size();
        text.append(dims, '[');
        // Nested lists, innermost the last dimension: before value i, close and reopen as many
        // levels as i completes.
        std::int64_t index = 0;
        v.forEachBlock([&](const float *data, size_t n) {
            for (size_t k = 0; k < n; ++k, ++index) {
                if (index > 0) {
                    size_t levels = 0;
                    std::int64_t stride = 1;
                    for (size_t d = dims; d-- > 1;) {
                        stride *= v.shape[d];
                        if (index % stride != 0)
                            break;
                        ++levels;
                    }
                    text.append(levels, ']');
                    text += ',';
                    text.append(levels, '[');
                }
                appendNumber(text, data[k]);
                if (text.size() > (1 << 16)) {
                    out.write(text);
                    text.clear();
                }
            }
        });
        text.append(dims, ']');
        text += "}";
        out.write(text);
    }
    out.write("}}\n");
    return Ok{};
}

} // namespace attnscope
