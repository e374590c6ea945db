#pragma once

#include "core/Result.h"
#include "core/attention/AttentionProblem.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
    // A batched input given as a 3-D [B, T, d] array: B (rows is then B*T, and the fingerprint
    // is of the B matrices one under another); 0 for a 2-D matrix.
    Eigen::Index sequences = 0;
};

// One sequence of a batched project (design.md, "A batch"): its own inputs, key padding and
// labels; the weights, the spec and the other mask parts are the project's.
struct SequenceInputs {
    MatrixF xq;
    MatrixF xkv;                  // cross-attention only
    std::optional<MatrixF> xv;    // cross-attention with a separate value input only
    std::vector<bool> keyPadding; // empty, or one per key
    std::vector<std::string> queryTokens;
    std::vector<std::string> keyTokens; // cross-attention only
};

// The B sequences of a project whose query.x is B x Tq x d_q. Read and written by
// core/formats/BatchedProject.cpp; compute them through BatchedProject.
struct ProjectBatch {
    std::vector<SequenceInputs> sequences; // B >= 1 entries, all of the same shapes
    bool tokensPerSequence = false;        // query.tokens was B lists (else one list for all)
    bool keyTokensPerSequence = false;     // key.tokens was B lists
    bool paddingPerSequence = false;       // the file gave mask.keyPadding as B rows
    // The sequence Project::problem holds (the one the GUI shows and edits); its entry in
    // sequences is stale while it is shown. See withSequenceShown() in core/formats/BatchedProject.h.
    int shown = 0;
};

// A project, file format 1 (`*.attnscope.json`, design.md): the problem plus what the math
// does not need (title, token labels) and every field this version does not know, which is
// kept and written back on save.
struct Project {
    std::string title;
    std::vector<std::string> queryTokens; // one label per row of problem.xq
    std::vector<std::string> keyTokens;   // cross-attention only: one per row of problem.xkv
    // For a batched project: sequence batch->shown (0 after reading), the one the GUI shows
    // and edits; it is always taken from here, so its edits are computed and saved.
    AttentionProblem problem;
    // Set when the file gave a batch (a 3-D query.x), even of one sequence; absent: 2-D inputs.
    std::optional<ProjectBatch> batch;
    nlohmann::ordered_json extra =
        nlohmann::ordered_json::object(); // the file as read; known fields are rewritten on save
    // The `{"npy": ...}` references by field ("query.x", "key.x", "weights.q", "weights.k",
    // "weights.v", "weights.o", "mask.allowed", "value.x"), and the folder they were resolved against.
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
// found shape (4,)". References must be relative paths that stay in the project's folder (or
// a folder below it; links followed, see core/io/FolderConfinement.h) to
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

// What a reference whose matrix still equals what it held becomes in the saved file: the path
// to write (relative to the folder the project is saved in), or nullopt to write the matrix
// inline. Called once per such field, in the file's order.
using ReferenceWriter =
    std::function<std::optional<std::string>(const std::string &field, const NpyReference &reference)>;
// serializeProject() with that choice made by writeReference (core/formats/ProjectReferences.h's
// SavedReferences checks each file again before a save; a recovery copy writes every matrix
// inline).
std::string serializeProject(const Project &project, const ReferenceWriter &writeReference);

// The fingerprint NpyReference keeps: shape and every value's bits.
std::uint64_t matrixFingerprint(const MatrixF &matrix);

} // namespace attnscope
