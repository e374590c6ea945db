#pragma once

#include <QStringList>
#include <QTextStream>

namespace attnscope {

// `attnscope-cli tokenize MODEL_DIR --text TEXT`: the ids and tokens that the model folder's
// tokenizer gives for TEXT, as one line of JSON: {"ids": [...], "tokens": [...]} (design.md).
int runTokenizeCommand(const QStringList &args, QTextStream &out, QTextStream &err);

extern const char *const kTokenizeUsage;

} // namespace attnscope
