#pragma once

#include "app/engine/BackendChoice.h"

#include <QStringList>
#include <QTextStream>

namespace attnscope {

// `attnscope-cli generate MODEL_DIR (--text T [--chat] | --ids ...) --max-new-tokens N --out DIR
// [--temperature X] [--top-k K] [--top-p P] [--seed S] [--pool N]` (design.md, "Contract:
// generation"): decodes with a key/value cache and writes tokens.json (ids, tokens, promptLength,
// steps) and the final sequence's attentions.npy [L,H,T,T] (or, with --pool, attentions_pooled.npy
// and entropy.npy), whole or not at all.
int runGenerateCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                       const BackendOptions &backendOptions = {});

extern const char *const kGenerateUsage;

} // namespace attnscope
