#pragma once

#include "core/AttentionTrace.h"
#include "core/Result.h"

#include <optional>
#include <string>
#include <string_view>

namespace attnscope {

struct Project;

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

// The bytes of the export. tensor and head are used by Csv (both) and Npy (tensor); an
// unknown tensor or a head out of range is an Error of kind InvalidInput naming it.
Result<std::string> traceDataBytes(const Project &project, const AttentionTrace &trace, DataFormat format,
                                   const std::string &tensor, int head);

} // namespace attnscope
