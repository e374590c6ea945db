#include "core/io/FolderConfinement.h"

#include "core/io/UserText.h"

#include <deque>
#include <system_error>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// The names of a path's components, root and empty ones left out.
std::vector<std::string> componentsOf(const fs::path &path)
{
    std::vector<std::string> out;
    for (const fs::path &part : path) {
        const std::string name = part.string();
        if (!name.empty() && name != "/")
            out.push_back(name);
    }
    return out;
}

std::optional<std::string> linkTarget(const fs::path &link, std::size_t sizeHint)
{
    std::string target(std::max<std::size_t>(sizeHint, 64) + 1, '\0');
    for (int attempt = 0; attempt < 8; ++attempt) {
        const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
        if (n < 0)
            return std::nullopt;
        if (std::size_t(n) < target.size()) {
            target.resize(std::size_t(n));
            return target;
        }
        target.resize(target.size() * 2); // the link changed since lstat; read it again
    }
    return std::nullopt;
}

} // namespace

std::optional<fs::path> resolvedPath(const fs::path &path)
{
    std::error_code ec;
    fs::path start = path;
    if (!start.is_absolute()) {
        const fs::path here = fs::current_path(ec);
        if (ec)
            return std::nullopt;
        start = here / start;
    }
    const std::vector<std::string> parts = componentsOf(start);
    std::deque<std::string> todo(parts.begin(), parts.end());
    fs::path current = "/";
    bool lexical = false; // past a component that does not exist: the rest is taken as written
    int links = 0;
    while (!todo.empty()) {
        const std::string part = std::move(todo.front());
        todo.pop_front();
        if (part == ".")
            continue;
        if (part == "..") {
            current = current.parent_path();
            continue;
        }
        fs::path next = current / part;
        if (!lexical) {
            struct stat st;
            if (::lstat(next.c_str(), &st) != 0) {
                lexical = true;
            } else if (S_ISLNK(st.st_mode)) {
                if (++links > 40)
                    return std::nullopt;
                const auto target = linkTarget(next, std::size_t(st.st_size));
                if (!target)
                    return std::nullopt;
                const fs::path to(*target);
                const std::vector<std::string> inner = componentsOf(to);
                todo.insert(todo.begin(), inner.begin(), inner.end());
                if (to.is_absolute())
                    current = "/";
                continue;
            }
        }
        current = std::move(next);
    }
    return current;
}

bool isWithinFolder(const fs::path &inner, const fs::path &outer)
{
    const std::vector<std::string> a = componentsOf(inner), b = componentsOf(outer);
    if (a.size() < b.size())
        return false;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (a[i] != b[i])
            return false;
    return true;
}

bool staysInFolder(const std::string &folder, const std::string &relative)
{
    if (folder.empty() || relative.empty() || fs::path(relative).is_absolute())
        return false;
    const auto base = resolvedPath(folder);
    const auto target = resolvedPath(fs::path(folder) / relative);
    return base && target && isWithinFolder(*target, *base);
}

Result<std::string> modelFolderFile(const std::string &modelDir, const std::string &name)
{
    const fs::path path = fs::path(modelDir) / name;
    const auto base = resolvedPath(modelDir);
    const auto target = resolvedPath(path);
    bool inside = base && target && isWithinFolder(*target, *base);
    if (!inside && base && target) {
        // Hugging Face's hub cache: snapshots/REV/NAME -> ../../blobs/HASH, the same repository.
        const fs::path snapshots = base->parent_path(), repository = snapshots.parent_path();
        if (snapshots.filename() == "snapshots" && repository.filename().string().starts_with("models--"))
            inside = isWithinFolder(*target, repository / "blobs");
    }
    if (!inside)
        return Error{printableText(path.string(), 200) +
                     ": refused: the file leads out of the model folder (a model's files must be in its folder)"};
    return path.string();
}

} // namespace attnscope
