#pragma once

#include <QString>
#include <QStringList>

namespace attnscope {

// The built-in example model, a small GPT-2 trained by resources/models/tiny-gpt2/train.py
// (File > Examples > "Example model: tiny GPT-2", `attnscope --example-model`). It is a folder
// of files, not a Qt resource: the model is read memory-mapped, as any model folder is.

// Where it is looked for, in order: $ATTNSCOPE_EXAMPLE_MODEL (alone, when set: for packagers
// and tests), the install prefix (../share/attnscope/models/tiny-gpt2 from the executable's
// folder, where `cmake --install` puts it) and the source tree this program was built from.
QStringList exampleModelCandidates();

// The first candidate that holds a model (config.json and model.safetensors), or empty.
QString exampleModelDir();

} // namespace attnscope
