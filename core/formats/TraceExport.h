#pragma once

#include "core/Result.h"
#include "core/attention/AttentionTrace.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnscope {

struct Project;
class AtomicFileWriter;

// What an export labels a trace's tensors with: a project's title and tokens, or an attention
// set's (one layer of a file or a model run exported as its weights).
struct TraceLabels {
    std::string title;
    std::vector<std::string> queryTokens; // one per query, or none
    std::vector<std::string> keyTokens;   // one per key, or none
    static TraceLabels of(const Project &project);
};

// The tensors `attnscope-cli compute` writes, as design.md defines them: file name to
// .npy bytes (float32, little-endian):
//   q.npy [H,Tq,dK]  k.npy [H,Tk,dK]  v.npy [H,Tk,dV]  scores.npy [H,Tq,Tk] (scaled, before the mask)
//   weights.npy [H,Tq,Tk]  context.npy [Tq,H*dV]  output.npy [Tq,d_out]
// Builds every file in memory: for tests and small traces; writeTraceNpy() streams instead.
std::map<std::string, std::string> traceNpyFiles(const AttentionTrace &trace);

// Writes those files into dir, whole or not at all, streaming each tensor from the trace (no
// copy of it is made):
//   - dir absent: the files are written into a fresh staging folder beside it, which is then
//     renamed to dir in one step, so dir appears complete or not at all;
//   - dir present: the files are written into a staging folder inside dir (so a read-only
//     parent or a mount point does not matter), then each replaces its old version by a
//     rename; if one rename fails, the files already replaced get their old versions back.
//     Only a kill during those seven renames (microseconds) can leave a mix of old and new.
// Other files in dir are untouched. On failure nothing of the new output remains, and the
// error names the path and the system's reason (kind Io: "No space left on device").
// Staging folders that a killed earlier run left (.attnscope-partial-PID-*, PID no longer
// running) in dir or beside it are removed first.
Status writeTraceNpy(const AttentionTrace &trace, const std::string &dir);

// The same files for a batch (design.md, "A batch"): one trace per sequence, every tensor with
// a leading B axis (weights.npy [B,H,Tq,Tk], context.npy [B,Tq,H*dV], ...). The traces must have
// equal shapes (the sequences of one BatchedProject do).
Status writeBatchTraceNpy(const std::vector<AttentionTrace> &traces, const std::string &dir);

// Any set of float32 tensors as NAME.npy files in dir, with the same all-or-nothing staging as
// writeTraceNpy() (`compute --pool` writes weights_pooled, entropy and output this way). Each
// tensor is its parts (row-major matrices) back to back, of the given shape.
struct NpyFolderTensor {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<const MatrixF *> parts;
    const float *values = nullptr; // instead of parts: the values back to back, row-major
};
// A file other than a tensor written with them (`model` writes tokens.json beside its .npy files).
struct FolderFile {
    std::string name; // file name, with its suffix
    std::string bytes;
};
Status writeNpyFolder(const std::vector<NpyFolderTensor> &tensors, const std::string &dir,
                      const std::vector<FolderFile> &files = {});

// Streamed forms of the `export` bundles (core/formats/TensorExport.h builds the same bytes in memory):
// every tensor of traceTensors() as an uncompressed .npz, or as the trace JSON document.
Status writeTraceNpz(const AttentionTrace &trace, AtomicFileWriter &out);
Status writeTraceJson(const TraceLabels &labels, const AttentionTrace &trace, AtomicFileWriter &out);
// One tensor as .npy; an Error listing the names when `name` is not one.
Status writeTensorNpy(const AttentionTrace &trace, const std::string &name, AtomicFileWriter &out);

// The names of the trace's tensors in export order, and each one's shape.
std::vector<std::string> traceTensorNames();
std::vector<std::int64_t> traceTensorShape(const AttentionTrace &trace, const std::string &name);

} // namespace attnscope
