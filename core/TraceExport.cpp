#include "core/TraceExport.h"

#include "core/Npy.h"

#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// Stacks H equally shaped matrices into one [H, rows, cols] float buffer.
std::string stacked(const std::vector<MatrixF> &perHead)
{
    const std::int64_t h = std::int64_t(perHead.size());
    const std::int64_t rows = h ? perHead[0].rows() : 0, cols = h ? perHead[0].cols() : 0;
    std::vector<float> data(size_t(h * rows * cols));
    for (std::int64_t i = 0; i < h; ++i)
        std::copy_n(perHead[size_t(i)].data(), rows * cols, data.begin() + i * rows * cols);
    return npyBytes({h, rows, cols}, data.data());
}

std::string matrix(const MatrixF &m)
{
    return npyBytes({m.rows(), m.cols()}, m.data());
}

} // namespace

std::map<std::string, std::string> traceNpyFiles(const AttentionTrace &t)
{
    return {
        {"q.npy", stacked(t.q)},
        {"k.npy", stacked(t.k)},
        {"v.npy", stacked(t.v)},
        {"scores.npy", stacked(t.scores)},
        {"weights.npy", stacked(t.weights)},
        {"context.npy", matrix(t.context)},
        {"output.npy", matrix(t.output)},
    };
}

Status writeTraceNpy(const AttentionTrace &trace, const std::string &dirPath)
{
    const fs::path dir = fs::absolute(fs::path(dirPath)).lexically_normal();
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        return Error{dirPath + ": exists and is not a directory"};
    const fs::path parent = dir.has_filename() ? dir.parent_path() : dir.parent_path().parent_path();
    if (!fs::is_directory(parent, ec))
        return Error{parent.string() + ": no such directory"};

    const fs::path staging =
        parent / (".attnscope-partial-" + std::to_string(::getpid()) + "-" + dir.filename().string());
    fs::remove_all(staging, ec);
    if (!fs::create_directory(staging, ec))
        return Error{staging.string() + ": cannot create (" + ec.message() + ")"};
    auto fail = [&](const std::string &message) {
        std::error_code ignored;
        fs::remove_all(staging, ignored);
        return Status(Error{message});
    };

    const auto files = traceNpyFiles(trace);
    for (const auto &[name, bytes] : files) {
        std::ofstream out(staging / name, std::ios::binary);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        out.close();
        if (!out)
            return fail((dir / name).string() + ": write failed");
    }

    if (!fs::exists(dir, ec)) {
        fs::rename(staging, dir, ec);
        if (ec)
            return fail(dir.string() + ": cannot create (" + ec.message() + ")");
        return Ok{};
    }
    // dir already exists: each file replaces its old version in one rename.
    for (const auto &entry : files) {
        fs::rename(staging / entry.first, dir / entry.first, ec);
        if (ec)
            return fail((dir / entry.first).string() + ": cannot replace (" + ec.message() + ")");
    }
    fs::remove_all(staging, ec);
    return Ok{};
}

} // namespace attnscope
