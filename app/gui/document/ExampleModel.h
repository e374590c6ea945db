#pragma once

#include <QString>
#include <QStringList>

#include <optional>

namespace attnscope {

// The built-in example models, in the order File > Examples lists them:
// - TinyGpt2, a small GPT-2 trained by resources/models/tiny-gpt2/train.py on English text
//   (File > Examples > "Example model: tiny GPT-2", `attnscope --example-model`);
// - TinyQwen3, a small Qwen3 with Qwen's real tokenizer trained by
//   scripts/train_example_model.py on Chinese poems and English text (File > Examples >
//   "Example model: tiny Qwen3 (Chinese and English)");
// - TinyMarianEnZh, a small Marian translation model (English to Chinese) trained by
//   resources/models/tiny-marian-en-zh/train.py on generated sentence pairs (File > Examples >
//   "Example model: tiny translation, English to Chinese").
// Each is a folder of files, not a Qt resource: the model is read memory-mapped, as any model
// folder is.
enum class ExampleModelId { TinyGpt2, TinyQwen3, TinyMarianEnZh };

// Where one is looked for, in order: its environment variable ($ATTNSCOPE_EXAMPLE_MODEL for
// tiny-gpt2, $ATTNSCOPE_EXAMPLE_MODEL_QWEN3 for tiny-qwen3, $ATTNSCOPE_EXAMPLE_MODEL_MARIAN for
// tiny-marian-en-zh; alone, when set: for packagers and
// tests), the install prefix (../share/attnscope/models/NAME from the executable's folder, where
// `cmake --install` puts it) and the source tree this program was built from.
QStringList exampleModelCandidates(ExampleModelId which = ExampleModelId::TinyGpt2);

// The first candidate that holds a model (config.json and model.safetensors), or empty.
QString exampleModelDir(ExampleModelId which = ExampleModelId::TinyGpt2);

// Which built-in example the folder `dir` is (the same folder as exampleModelDir() finds), if any.
std::optional<ExampleModelId> exampleModelAt(const QString &dir);

} // namespace attnscope
