#pragma once

#include "core/AttentionSet.h"
#include "core/Result.h"
#include "core/Tensor.h"

#include <QStringList>
#include <QTextStream>

#include <optional>
#include <string>

namespace attnscope {

class AttentionBackend;

// What a command that inspects attention works on, from any input design.md allows: an
// attention file (.npy, .npz, .safetensors), a project, or a model folder run on `text`,
// computed with `backend`. `text` is required for a model folder and refused for anything else.
struct AttentionInput {
    AttentionSet set;
    std::string kind; // "attention file", "project" or "model"
};
Result<AttentionInput> loadAttentionInput(const std::string &path, AttentionBackend &backend,
                                          const std::optional<std::string> &text = std::nullopt);

// `attnscope-cli stats INPUT --out FILE.(json|csv) [--backend ...]`: per (layer, head) entropy,
// distance, confidence, first, self and previous (design.md), 0-based.
int runStatsCommand(const QStringList &args, QTextStream &out, QTextStream &err);

// The statistics as design.md's JSON ({"layers", "heads", "stats": [...]}) and as CSV (one row
// per head, a header row; an empty cell where a statistic does not apply).
std::string statsJson(const AttentionSet &set);
std::string statsCsv(const AttentionSet &set);

// A double matrix as a float32 .npy file [rows, cols], whole or not at all.
Status writeMatrixNpy(const MatrixD &m, const std::string &path);

extern const char *const kStatsUsage;

} // namespace attnscope
