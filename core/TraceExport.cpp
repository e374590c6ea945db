#include "core/TraceExport.h"

#include "core/Npy.h"
#include "core/TensorExport.h"

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <system_error>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;

std::map<std::string, std::string> traceNpyFiles(const AttentionTrace &t)
{
    // design.md's compute contract: these seven, under these names.
    static const char *const kContract[] = {"q", "k", "v", "scores", "weights", "context", "output"};
    std::map<std::string, std::string> files;
    for (const auto &tensor : traceTensors(t))
        if (std::find(std::begin(kContract), std::end(kContract), tensor.name) != std::end(kContract))
            files[tensor.name + ".npy"] = npyBytes(tensor.shape, tensor.data.data());
    return files;
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
