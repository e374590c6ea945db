#pragma once

#include "app/engine/BackendChoice.h"
#include "core/io/FilesRead.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <string>

namespace attnscope {

// `attnscope-cli model MODEL_DIR --text SOURCE [--target TARGET] --out DIR` on a translation
// model folder (model_type "marian"; design.md, "encoder–decoder translation models"):
// teacher-forced on TARGET, or on the greedy translation without it; writes tokens.json
// ({"source": {...}, "target": {...}}), encoder_attentions.npy [L,H,S,S],
// decoder_attentions.npy [L,H,T,T] and cross_attentions.npy [L,H,T,S] into DIR, whole or not
// at all. `parser` has parsed model's options; runModelCommand calls this for such a folder.
int runTranslationModelCommand(const QCommandLineParser &parser, const std::string &modelDir, QTextStream &out,
                               QTextStream &err, const BackendOptions &backendOptions, const FilesRead &read);

} // namespace attnscope
