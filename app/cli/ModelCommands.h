#pragma once

#include "app/engine/BackendChoice.h"
#include "core/Result.h"
#include "core/tokenizers/Tokenizer.h"

#include <QCommandLineParser>

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

// The helpers model and generate share: "1, 2,3" as ids (an error naming the first item that is
// not a whole number); --chat's encoding of text as one user turn of the folder's chat preset;
// the usage error of --chat or --no-think given without what they need.
Result<std::vector<std::int32_t>> parseIds(const std::string &text);
Result<Encoding> chatEncoding(const std::string &modelDir, const Tokenizer &tokenizer, const std::string &text,
                              bool thinking);
std::optional<std::string> chatUsageError(const QCommandLineParser &parser, const char *command);

extern const char *const kTokenizeUsage;
extern const char *const kModelBenchUsage;
extern const char *const kModelUsage;

} // namespace attnscope
