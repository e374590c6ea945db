#pragma once

#include "core/AttentionProblem.h"
#include "core/Result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// A matrix the file holds as `{"npy": "relative/path.npy"}` (design.md, format 1) instead of
// inline numbers: the path as written, and a fingerprint of the matrix as read, so saving can
// tell whether the matrix changed since.
struct NpyReference {
    std::string path; // as written in the file, relative to the project's folder
    Eigen::Index rows = 0, cols = 0;
    std::uint64_t fingerprint = 0;
};

// A project, file format 1 (`*.attnscope.json`, design.md): the problem plus what the math
// does not need (title, token labels) and every field this version does not know, which is
// kept and written back on save.
struct Project {
    std::string title;
    std::vector<std::string> queryTokens; // one label per row of problem.xq
    std::vector<std::string> keyTokens;   // cross-attention only: one per row of problem.xkv
    AttentionProblem problem;
    nlohmann::ordered_json extra =
        nlohmann::ordered_json::object(); // the file as read; known fields are rewritten on save
    // The `{"npy": ...}` references by field ("query.x", "key.x", "weights.q", "weights.k",
    // "weights.v", "weights.o", "mask.allowed"), and the folder they were resolved against.
    std::map<std::string, NpyReference> npyReferences;
    std::string folder;

    // Labels of the keys: keyTokens in cross-attention, queryTokens in self-attention.
    const std::vector<std::string> &keyLabels() const
    {
        return problem.spec.mode == AttentionMode::Cross ? keyTokens : queryTokens;
    }
};

struct ProjectReadOptions {
    // The folder `{"npy": ...}` references are relative to. Empty: a reference is refused
    // ("query.x: a {\"npy\": ...} reference needs the project's folder"), so text that is
    // not a file on disk (the fuzzer, a paste) never reaches the file system.
    std::string folder;
    // false: a problem whose full trace would not fit in memory is still read (for
    // `compute --pool`, which never holds that trace); every other check stays.
    bool checkTraceSize = true;
};

// Parses and validates a project. Errors are one line naming the field, what was expected
// and what was found ("weights.k: expected 4 x 6 (d_kv x heads*headDimQK), found 4 x 5").
// A reference names the field and the file: "weights.q: w/q.npy: expected a 2-D array,
// found shape (4,)". References must be relative paths (they may lead out of the folder) to
// regular files (not /dev/zero, not a FIFO) of float16, float32 or float64, each read within
// the memory budget.
Result<Project> parseProject(std::string_view text, const ProjectReadOptions &options = {});

// Reads a file and parses it, references relative to the file's folder; errors start with the
// path. options.folder is ignored.
Result<Project> readProjectFile(const std::string &path, const ProjectReadOptions &options = {});

// Format 1 JSON for a project, unknown fields of project.extra included. Numbers are written
// in the shortest form that reads back as the same float.
// A matrix read from a `{"npy": ...}` reference is written as that reference again when it is
// unchanged (same shape and values); the .npy file is never rewritten. A matrix that changed
// since is written inline and its reference dropped, so saving never alters a file other than
// the project. saveFolder (when given, and the project has a folder) is where the project is
// being saved: kept references are rewritten relative to it, so "Save As" elsewhere still finds
// them.
std::string serializeProject(const Project &project, const std::string &saveFolder = {});

// The fingerprint NpyReference keeps: shape and every value's bits.
std::uint64_t matrixFingerprint(const MatrixF &matrix);

} // namespace attnscope
