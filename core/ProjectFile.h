#pragma once

#include "core/AttentionProblem.h"
#include "core/Result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

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

    // Labels of the keys: keyTokens in cross-attention, queryTokens in self-attention.
    const std::vector<std::string> &keyLabels() const
    {
        return problem.spec.mode == AttentionMode::Cross ? keyTokens : queryTokens;
    }
};

// Parses and validates a project. Errors are one line naming the field, what was expected
// and what was found ("weights.k: expected 4 x 6 (d_kv x heads*headDimQK), found 4 x 5").
Result<Project> parseProject(std::string_view text);

// Reads a file and parses it; errors start with the path.
Result<Project> readProjectFile(const std::string &path);

// Format 1 JSON for a project, unknown fields of project.extra included. Numbers are written
// in the shortest form that reads back as the same float.
std::string serializeProject(const Project &project);

} // namespace attnscope
