#pragma once

#include "core/Result.h"

#include <filesystem>
#include <optional>
#include <string>

namespace attnscope {

// Files that a file names relative to its own folder (a project's `{"npy": ...}` references,
// a model folder's config.json and weights) must stay in that folder: a project or a model
// shared with someone must not pull their other files into what they see and pass on. The
// check is on where a path really leads, every symbolic link followed, and it comes before
// anything is opened or stat-ed, so a file outside is refused alike whether it exists or not.

// Where `path` really leads: absolute, every symbolic link followed and "." and ".." resolved,
// as `realpath -m` does. From the first component that does not exist (or cannot be looked
// at) on, the rest is taken as written and resolved lexically, so a missing file resolves
// where it would be. nullopt for a loop of links (more than 40).
std::optional<std::filesystem::path> resolvedPath(const std::filesystem::path &path);

// True when `inner` is `outer` or lies below it, both resolved paths.
bool isWithinFolder(const std::filesystem::path &inner, const std::filesystem::path &outer);

// True when `relative` (a relative path) leads, links followed, to a place inside `folder`
// or one of its subfolders. Looks only at the folders and links on the way.
bool staysInFolder(const std::string &folder, const std::string &relative);

// The path of the file `name` in model folder `modelDir`, when its real path stays in the
// folder; otherwise an Error (kind InvalidInput) that names the file and says it leads out of
// the model folder, the same for files that exist and files that do not. A folder of
// Hugging Face's hub cache (`.../models--ORG--NAME/snapshots/REV/`, whose files are links to
// `../../blobs/HASH`) may also use the files of that repository's own `blobs` folder.
Result<std::string> modelFolderFile(const std::string &modelDir, const std::string &name);

} // namespace attnscope
