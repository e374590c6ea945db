#pragma once

#include <QProcessEnvironment>
#include <QString>

#include <cstdint>
#include <vector>

namespace attnscope {

// The models already on this machine in the Hugging Face cache, for File > Open Model.
// The cache holds `models--ORG--NAME/snapshots/REV/` folders whose files are symbolic links into
// the model's `blobs/`, as huggingface_hub writes it.

// The hub cache folder: `$HF_HOME/hub`, else `$HF_HUB_CACHE`, else `~/.cache/huggingface/hub`.
QString hubCacheDir(const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment());

struct CachedModel {
    QString name;           // "ORG/NAME" (or "NAME" for a repository without an organisation)
    QString revision;       // the snapshot folder's name (a commit hash)
    QString path;           // the snapshot folder, what Open Model opens
    QString family;         // config.json's model_type ("qwen2"), empty when there is none
    std::int64_t bytes = 0; // its files on disk, the blobs its links point to counted once
    bool openable = false;  // core's readModelConfig() accepts the folder
    QString whyNot;         // when not: core's one-line error, the snapshot's path left out
};

// Every snapshot under `hubDir`, sorted by name then revision. Reads only directory entries, file
// sizes and each config.json (no weights): cheap, but a large cache on a slow disk still takes a
// moment, so the GUI calls it on a worker thread. A missing folder gives an empty list.
std::vector<CachedModel> scanHubCache(const QString &hubDir);

} // namespace attnscope
