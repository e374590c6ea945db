#pragma once

#include "core/Result.h"
#include "core/attention/AttentionTrace.h"

#include <optional>
#include <string>
#include <string_view>

namespace attnscope {

struct TraceLabels;

// The data formats a trace is exported in, picked by the file name's suffix. One dispatch
// for `attnscope-cli export` and File > Export Data, so the two cannot drift apart.
enum class DataFormat {
    Csv,  // one head of one tensor, token-labelled rows and columns
    Npy,  // one tensor, as `attnscope-cli compute` writes it
    Npz,  // every tensor
    Json, // every tensor and the tokens
};

// The format of "weights.CSV" or of a bare suffix ("npz"), case-insensitive; nullopt for any
// other suffix.
std::optional<DataFormat> dataFormatFromPath(std::string_view pathOrSuffix);

// Writes the export to `path`, its format picked by the suffix: .csv (one head of `tensor`,
// token-labelled), .npy (`tensor`, as `attnscope-cli compute` writes it), .npz or .json (every
// tensor). Tensors are streamed to the file, never copied whole; the file appears whole or
// not at all (AtomicFileWriter). Errors: InvalidInput for a suffix, tensor or head the export
// cannot use, TooLarge for CSV text that would not fit in memory, Io when writing fails (with
// the system's reason). `attnscope-cli export` and File > Export Data both write through here.
Status writeTraceData(const TraceLabels &labels, const AttentionTrace &trace, const std::string &path,
                      const std::string &tensor, int head);

} // namespace attnscope
