#pragma once

#include "app/engine/BackendChoice.h"

#include <QStringList>
#include <QTextStream>

namespace attnscope {

// `attnscope-cli compare A B --out DIR [--text TEXT] [--text-a TEXT] [--text-b TEXT] [--backend ...]`
// (issue 26): two inputs of any kind `stats` reads, aligned by token position (compareSets), written
// whole or not at all as DIR/difference.npy (B − A, float32 [L,H,Tq,Tk], a leading S axis where the
// inputs hold more than one sample) and DIR/comparison.json (comparisonJson); the heads that changed
// most are printed. A refusal is one line on stderr, and nothing is written.
int runCompareCommand(const QStringList &args, QTextStream &out, QTextStream &err,
                      const BackendOptions &backendOptions = {});

extern const char *const kCompareUsage;

} // namespace attnscope
