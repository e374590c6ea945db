#pragma once

#include "app/engine/BackendChoice.h"
#include "core/Result.h"
#include "core/Tensor.h"
#include "core/analysis/AttentionSet.h"

#include <QCommandLineParser>
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
    std::string note; // for stderr: what the rows of an attention file were found to be (empty: softmax rows)
};
// `softmax` (--softmax) applies softmax to the rows of an attention file of scores; it is refused
// for anything else, and for a file whose rows already are attention.
Result<AttentionInput> loadAttentionInput(const std::string &path, AttentionBackend &backend,
                                          const std::optional<std::string> &text = std::nullopt, bool softmax = false);

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

// The statistics as design.md's JSON ({"layers", "heads", "stats": [...]}) and as CSV (one row
// per head, a header row; an empty cell where a statistic does not apply).
std::string statsJson(const AttentionSet &set);
std::string statsCsv(const AttentionSet &set);

// A double matrix as a float32 .npy file [rows, cols], whole or not at all.
Status writeMatrixNpy(const MatrixD &m, const std::string &path);

// `export INPUT --tensor weights|rollout|mean [--layer L] [--head H] --out FILE.npy` of an
// attention set, as float32 .npy, whole or not at all. Layers and heads are 0-based.
//   weights: [L,H,Tq,Tk] (no layer, no head), [H,Tq,Tk] (a layer) or [Tq,Tk] (layer and head;
//            the layer may be left out when there is one);
//   mean:    one layer's mean over heads [Tq,Tk]; rollout: over every layer [T,T].
// A layer or head out of range, or one the tensor has no use for, is an InvalidInput error that
// names the valid range. On success: what was written ("weights of layer 0, head 2 [11, 11]").
// --layer and --head as given (unset: nullopt), each a whole number from 0.
Status parseLayerAndHead(const QCommandLineParser &parser, std::optional<int> &layer, std::optional<int> &head);
// The request alone (the tensor's name, the layer and head): what a user typed wrong. Sets
// `layer` to 0 where the tensor needs one and the set has one layer.
Status checkAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> &layer,
                            std::optional<int> head);
Result<std::string> writeAttentionTensor(const AttentionSet &set, const std::string &tensor, std::optional<int> layer,
                                         std::optional<int> head, const std::string &path);

extern const char *const kStatsUsage;

} // namespace attnscope
