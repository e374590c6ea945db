#pragma once

#include "core/Result.h"
#include "core/analysis/AttentionSet.h"
#include "core/analysis/RowSums.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// What an attention file held, for titles and `--help`-style summaries.
struct AttentionFileInfo {
    std::string container;           // "npy", "npz" or "safetensors"
    std::string dtype;               // "float16", "bfloat16", "float32" or "float64"
    std::vector<std::int64_t> shape; // as stored: [L,H,Tq,Tk], [H,Tq,Tk] or [Tq,Tk]
    bool mapped = false;             // values read straight from the mapped file (no copy)
    std::string tokensFrom;          // the sidecar or "__metadata__", empty when unlabelled
    // Whether the values are attention (every row a softmax's, within what dtype allows): a file of
    // scores opens too, and whoever shows it says so and offers softmaxRows().
    RowSumCheck rows;
};

// Reads attention weights (design.md, "Contract: real models and imported attention"):
// `.npy`, `.npz` (stored or deflated members; the array named `attentions`, or the only one)
// or `.safetensors` (the tensor `attentions`, or the only one), shaped [L,H,Tq,Tk], [H,Tq,Tk]
// or [Tq,Tk], in float16, bfloat16 (safetensors), float32 or float64. float16 and float32
// stay as stored, mapped from the file where they can; float64 and bfloat16 become float32.
// Token labels come from NAME.tokens.json ({"tokens": [...], "keyTokens": [...]}) beside the
// file or, in safetensors, from the `__metadata__` entries `tokens` / `keyTokens` (JSON lists
// as strings). A corrupt, truncated or inconsistent file is refused with one line naming the
// problem (the offset, the shape, the dtype, the value): never a crash. Every row is read once
// more to fill `info->rows` (checkRowSums with rowSumTolerance of the stored dtype).
Result<AttentionSet> readAttentionFile(const std::string &path, AttentionFileInfo *info = nullptr);

// The same from bytes in memory that keepAlive keeps valid (no sidecar; labels only from
// safetensors metadata): the fuzz target's entry point.
Result<AttentionSet> parseAttentionBytes(std::string_view bytes, std::shared_ptr<const void> keepAlive,
                                         AttentionFileInfo *info = nullptr);

// Whether a path looks like an attention file by its suffix (.npy, .npz, .safetensors).
bool isAttentionFilePath(const std::string &path);

// A Q/K dump (its folder or attnscope-qk.json; core/formats/QkDump.h) opened as the set computed
// from its queries and keys (AttentionSet::fromQk), labelled with its tokens, with what an
// attention file's reader says of itself in `info` when given: container "attnscope-qk", the
// stored dtype of layer 0, the shape [L,H,Tq,Tk] the maps would have, no rows read.
Result<AttentionSet> readQkDumpSet(const std::string &path, AttentionFileInfo *info = nullptr);

} // namespace attnscope
