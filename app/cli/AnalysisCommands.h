#pragma once

#include "app/engine/BackendChoice.h"
#include "core/Result.h"
#include "core/Tensor.h"
#include "core/analysis/AttentionSet.h"
#include "core/formats/AttentionExport.h"

#include <QCommandLineParser>
#include <QStringList>
#include <QTextStream>

#include <optional>
#include <string>

namespace attnscope {

class AttentionBackend;

// What a command that inspects attention works on, from any input design.md allows: an
// attention file (.npy, .npz, .safetensors), a Q/K dump, a model run's output folder, a project,
// or a model folder run on `text`,
// computed with `backend`. `text` is required for a model folder and refused for anything else.
struct AttentionInput {
    AttentionSet set;
    std::string kind; // "attention file", "Q/K dump", "model run", "project" or "model"
    std::string note; // for stderr: what the rows of an attention file were found to be (empty: softmax rows)
};
// `softmax` (--softmax) applies softmax to the rows of an attention file of scores; it is refused
// for anything else, and for a file whose rows already are attention.
Result<AttentionInput> loadAttentionInput(const std::string &path, AttentionBackend &backend,
                                          const std::optional<std::string> &text = std::nullopt, bool softmax = false);

// A model run's output folder (what `model --out DIR` and `generate --out DIR` write): a folder with
// attentions.npy and no config.json. Its maps are read as an attention file (rows checked, as
// readCheckedAttentionFile) and labelled with tokens.json's "tokens" where it is there.
bool isModelRunFolder(const std::string &path);
Result<AttentionSet> readModelRunFolder(const std::string &path, bool softmax, std::string &note);

// An attention file read and its rows checked (checkRowSums): `note` says, for stderr, what was
// found where not every row sums to 1 ("FILE: row sums -3.1 to 8.4: 24 of 24 rows above 1 ...;
// these look like scores before softmax, not attention weights (--softmax applies it)"). With
// `softmax`, a file of scores becomes its softmax and the note says so; a file of attention is
// refused then (InvalidInput), so that softmax is never applied twice.
Result<AttentionSet> readCheckedAttentionFile(const std::string &path, bool softmax, std::string &note);
// --softmax refused for an input that is not an attention file.
Status checkSoftmaxOption(const std::string &path, bool softmax);
// The option every command reading attention files takes.
QCommandLineOption softmaxOption();

// `attnscope-cli stats INPUT --out FILE.(json|csv) [--backend ...]`: per (layer, head) entropy,
// distance, confidence, first, self and previous (design.md), 0-based. Backends start from
// backendOptions.
int runStatsCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                    const BackendOptions &backendOptions = {});

// --layer and --head as given (unset: nullopt), each a whole number from 0.
Status parseLayerAndHead(const QCommandLineParser &parser, std::optional<int> &layer, std::optional<int> &head);

extern const char *const kStatsUsage;

} // namespace attnscope
