#pragma once

#include "core/AttentionTrace.h"
#include "core/Result.h"

#include <map>
#include <string>

namespace attnscope {

// The tensors `attnscope-cli compute` writes, as design.md defines them: file name to
// .npy bytes (float32, little-endian):
//   q.npy [H,Tq,dK]  k.npy [H,Tk,dK]  v.npy [H,Tk,dV]  scores.npy [H,Tq,Tk] (scaled, before the mask)
//   weights.npy [H,Tq,Tk]  context.npy [Tq,H*dV]  output.npy [Tq,d_out]
std::map<std::string, std::string> traceNpyFiles(const AttentionTrace &trace);

// Writes those files into dir so that nothing is half-written: everything goes to a fresh
// sibling folder first, then moves into dir (created if missing). On failure dir is left
// as it was (or absent), and the error names the path that failed.
Status writeTraceNpy(const AttentionTrace &trace, const std::string &dir);

} // namespace attnscope
