#pragma once

#include "app/engine/BackendChoice.h"
#include "core/Result.h"
#include "core/tokenizers/Tokenizer.h"

#include <QCommandLineParser>

#include "core/models/TransformerModel.h"

#include <QStringList>
#include <QTextStream>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// `attnscope-cli tokenize MODEL_DIR --text TEXT`: the ids and tokens that the model folder's
// tokenizer gives for TEXT, as one line of JSON: {"ids": [...], "tokens": [...]} (design.md).
int runTokenizeCommand(const QStringList &args, QTextStream &out, QTextStream &err);

// `attnscope-cli model MODEL_DIR (--text TEXT | --ids 1,2,3) --out DIR [--backend ...]`: runs the
// model folder's forward pass and writes tokens.json, attentions.npy float32 [L,H,T,T] and
// hidden_states.npy float32 [L+1,T,d] into DIR, whole or not at all (design.md). Backends start
// from backendOptions.
int runModelCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                    const BackendOptions &backendOptions = {});

// `attnscope-cli bench --model MODEL_DIR --tokens T [--repeat N] [--backend ...]`: times the
// forward on T ids with everything kept in memory and prints `median_ms M` and `peak_rss_mib R`
// (design.md).
int runModelBenchCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                         const BackendOptions &backendOptions = {});

// What model and generate share: the usage error of --chat or --no-think given without what they
// need; and the model folder loaded with what it reads: --text tokenized, --chat's text as one
// user turn of the folder's chat preset, or --ids ("1, 2,3") used as given. A failure is one line
// with its exit code in `code`: 2 for --ids that are not whole numbers, 1 for the rest.
std::optional<std::string> chatUsageError(const QCommandLineParser &parser, const char *command);
struct ModelInput {
    TransformerModel model;
    Encoding input;
};
Result<ModelInput> loadModelInput(const QCommandLineParser &parser, const std::string &modelDir, int &code);

extern const char *const kTokenizeUsage;
extern const char *const kModelBenchUsage;
extern const char *const kModelUsage;

} // namespace attnscope
