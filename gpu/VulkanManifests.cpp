#include "gpu/VulkanManifests.h"

#include "core/ErrorCode.h"
#include "core/io/FileIo.h"
#include "core/io/JsonDocument.h"
#include "core/io/UserText.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace attnscope::vk {

namespace {

namespace fs = std::filesystem;

// A manifest is a few hundred bytes; anything far larger is not one the loader could use.
constexpr std::int64_t kMaxManifestBytes = 1 << 20;

std::string env(const char *name)
{
    const char *v = std::getenv(name);
    return v ? v : "";
}

std::vector<std::string> splitPaths(const std::string &list)
{
    std::vector<std::string> out;
    std::stringstream in(list);
    std::string item;
    while (std::getline(in, item, ':'))
        if (!item.empty())
            out.push_back(item);
    return out;
}

// A listed path: a manifest file, or a folder whose *.json files are manifests.
void addPath(const fs::path &path, std::vector<std::string> &out)
{
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        std::vector<std::string> files;
        for (const auto &entry : fs::directory_iterator(path, ec))
            if (entry.path().extension() == ".json" && !entry.is_directory(ec))
                files.push_back(entry.path().string());
        std::sort(files.begin(), files.end());
        out.insert(out.end(), files.begin(), files.end());
    } else if (fs::exists(path, ec)) {
        out.push_back(path.string());
    }
}

// The folders the loader searches for `kind` ("icd.d", "implicit_layer.d") on Linux.
std::vector<fs::path> searchFolders(const char *kind)
{
    const std::string home = env("HOME");
    std::string configHome = env("XDG_CONFIG_HOME"), dataHome = env("XDG_DATA_HOME");
    if (configHome.empty() && !home.empty())
        configHome = home + "/.config";
    if (dataHome.empty() && !home.empty())
        dataHome = home + "/.local/share";
    std::string configDirs = env("XDG_CONFIG_DIRS"), dataDirs = env("XDG_DATA_DIRS");
    if (configDirs.empty())
        configDirs = "/etc/xdg";
    if (dataDirs.empty())
        dataDirs = "/usr/local/share:/usr/share";
    std::vector<fs::path> folders;
    auto add = [&](const std::string &base) {
        if (!base.empty())
            folders.push_back(fs::path(base) / "vulkan" / kind);
    };
    add(configHome);
    for (const std::string &d : splitPaths(configDirs))
        add(d);
    add("/etc");
    add(dataHome);
    for (const std::string &d : splitPaths(dataDirs))
        add(d);
    return folders;
}

} // namespace

std::vector<std::string> loaderManifests()
{
    std::vector<std::string> out;
    std::string drivers = env("VK_DRIVER_FILES");
    if (drivers.empty())
        drivers = env("VK_ICD_FILENAMES");
    if (!drivers.empty()) {
        for (const std::string &p : splitPaths(drivers))
            addPath(p, out);
    } else {
        for (const fs::path &folder : searchFolders("icd.d"))
            addPath(folder, out);
    }
    for (const std::string &p : splitPaths(env("VK_ADD_DRIVER_FILES")))
        addPath(p, out);
    for (const fs::path &folder : searchFolders("implicit_layer.d"))
        addPath(folder, out);
    for (const std::string &p : splitPaths(env("VK_ADD_LAYER_PATH")))
        addPath(p, out);
    return out;
}

Status checkLoaderManifests()
{
    for (const std::string &path : loaderManifests()) {
        auto text = readInputFile(path, kMaxManifestBytes);
        if (!text)
            continue; // unreadable: the loader skips it too
        if (auto json = parseJsonDocument(*text); !json)
            return codedError("vulkan.manifest", {printableText(path, 200), json.message()}, ErrorKind::Unsupported);
    }
    return Ok{};
}

} // namespace attnscope::vk
