#pragma once

// Small projects the render, rules and non-finite suites share, written as project files so
// they go through the same parser as a user's file, and computed on the real CPU engine.

#include "core/attention/CpuBackend.h"
#include "core/formats/ProjectFile.h"

#include <QByteArray>
#include <QString>
#include <QtGlobal>

#include <string>

namespace attnscope::test {

struct ComputedProject {
    Project project;
    AttentionTrace trace;
};

inline ComputedProject computeJson(const std::string &json)
{
    auto project = parseProject(json);
    if (!project)
        qFatal("test project: %s", project.message().c_str());
    auto trace = CpuBackend().compute(project->problem);
    if (!trace)
        qFatal("test project: %s", trace.message().c_str());
    return {std::move(*project), std::move(*trace)};
}

// Finite inputs whose Q·Kᵀ overflows float32: 3e38 · 3e38 is Inf, and the softmax of a row
// holding Inf is NaN. Row 1 ("b") stays finite.
inline std::string overflowProjectJson()
{
    return R"({"format": "attnscope", "version": 1, "title": "Overflow", "mode": "self",
  "heads": 1, "headDimQK": 2, "headDimV": 2, "scale": "none",
  "query": {"tokens": ["a", "b", "c"], "x": [[3e38, 3e38], [0.5, -0.25], [1, 2]]},
  "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]}})";
}

// Row 0 has no allowed key; fill and heads as given. With biases on every projection.
inline std::string emptyRowProjectJson(const char *fill, int heads = 1)
{
    const std::string h = std::to_string(heads);
    std::string w = "[[1, 0.5], [0.25, -1]]", wide = w, bias = "[0.1, -0.2]";
    if (heads == 2) {
        wide = "[[1, 0.5, 0.3, -0.7], [0.25, -1, 0.9, 0.2]]";
        bias = "[0.1, -0.2, 0.3, 0.05]";
    }
    const std::string o = heads == 2 ? "[[1, 0], [0, 1], [0.5, 0.5], [-1, 1]]" : "[[1, 0], [0, 1]]";
    return R"({"format": "attnscope", "version": 1, "title": "Empty row", "mode": "self",
  "heads": )" +
           h + R"(, "headDimQK": 2, "headDimV": 2, "maskFill": ")" + fill + R"(",
  "query": {"tokens": ["x", "y", "z"], "x": [[0.3, -1.2], [2.0, 0.7], [-0.4, 1.1]]},
  "weights": {"q": )" +
           wide + R"(, "k": )" + wide + R"(, "v": )" + wide + R"(, "o": )" + o + R"(, "qBias": )" + bias +
           R"(, "kBias": )" + bias + R"(, "vBias": )" + bias + R"(, "oBias": [0.5, -0.5]},
  "mask": {"allowed": [[0, 0, 0], [1, 1, 0], [1, 1, 1]]}})";
}

} // namespace attnscope::test
