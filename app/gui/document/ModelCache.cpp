#include "app/gui/document/ModelCache.h"

#include "core/models/ModelConfig.h"

#include <QDir>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace attnscope {

namespace fs = std::filesystem;

QString hubCacheDir(const QProcessEnvironment &environment)
{
    if (const QString home = environment.value(QStringLiteral("HF_HOME")); !home.isEmpty())
        return QDir(home).filePath(QStringLiteral("hub"));
    if (const QString hub = environment.value(QStringLiteral("HF_HUB_CACHE")); !hub.isEmpty())
        return hub;
    return QDir::home().filePath(QStringLiteral(".cache/huggingface/hub"));
}

namespace {

// "models--Qwen--Qwen2.5-0.5B" -> "Qwen/Qwen2.5-0.5B" (the hub writes "/" as "--").
QString repoName(const QString &folder)
{
    QString rest = folder.mid(int(std::string_view("models--").size()));
    return rest.replace(QStringLiteral("--"), QStringLiteral("/"));
}

// The files of a snapshot, links followed, each blob counted once.
std::int64_t snapshotBytes(const fs::path &snapshot)
{
    std::error_code ec;
    std::set<fs::path> seen;
    std::int64_t total = 0;
    for (fs::recursive_directory_iterator it(snapshot, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
        std::error_code e;
        if (!it->is_regular_file(e)) // follows the link; a dangling one is skipped
            continue;
        const fs::path target = fs::canonical(it->path(), e);
        if (e || !seen.insert(target).second)
            continue;
        const auto size = fs::file_size(target, e);
        if (!e)
            total += std::int64_t(size);
    }
    return total;
}

QString modelType(const fs::path &snapshot)
{
    std::ifstream in(snapshot / "config.json", std::ios::binary);
    if (!in)
        return {};
    const auto json = nlohmann::json::parse(in, nullptr, false);
    if (!json.is_object())
        return {};
    const auto type = json.find("model_type");
    return type != json.end() && type->is_string() ? QString::fromStdString(type->get<std::string>()) : QString();
}

} // namespace

std::vector<CachedModel> scanHubCache(const QString &hubDir)
{
    std::vector<CachedModel> out;
    std::error_code ec;
    const fs::path root = hubDir.toStdString();
    for (fs::directory_iterator repo(root, ec), end; !ec && repo != end; repo.increment(ec)) {
        const QString folder = QString::fromStdString(repo->path().filename().string());
        if (!folder.startsWith(QStringLiteral("models--")) || !repo->is_directory())
            continue;
        std::error_code e;
        for (fs::directory_iterator snap(repo->path() / "snapshots", e), last; !e && snap != last; snap.increment(e)) {
            if (!snap->is_directory())
                continue;
            CachedModel m;
            m.name = repoName(folder);
            m.revision = QString::fromStdString(snap->path().filename().string());
            m.path = QString::fromStdString(snap->path().string());
            m.family = modelType(snap->path());
            m.bytes = snapshotBytes(snap->path());
            // A translation model (Marian) has a config of its own; either kind opens.
            const bool translation = m.family == QLatin1String("marian");
            std::optional<Error> refused;
            if (translation) {
                if (auto c = readTranslationConfig(snap->path().string()); !c)
                    refused = c.error();
            } else if (auto c = readModelConfig(snap->path().string()); !c) {
                refused = c.error();
            }
            m.openable = !refused;
            if (refused) {
                // core names the file by its whole path; within the list the snapshot is known,
                // so the line starts where the reason does ("config.json: model_type ...").
                m.whyNot = QString::fromStdString(refused->message);
                const QString prefix = m.path + QLatin1Char('/');
                if (m.whyNot.startsWith(prefix))
                    m.whyNot = m.whyNot.mid(prefix.size());
            }
            out.push_back(std::move(m));
        }
    }
    std::sort(out.begin(), out.end(), [](const CachedModel &a, const CachedModel &b) {
        return std::pair(a.name.toLower(), a.revision) < std::pair(b.name.toLower(), b.revision);
    });
    return out;
}

} // namespace attnscope
