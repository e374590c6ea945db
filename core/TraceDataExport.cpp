#include "core/TraceDataExport.h"

#include "core/Npy.h"
#include "core/ProjectFile.h"
#include "core/TensorExport.h"

#include <algorithm>
#include <cctype>

namespace attnscope {

std::optional<DataFormat> dataFormatFromPath(std::string_view pathOrSuffix)
{
    std::string_view suffix = pathOrSuffix;
    const size_t slash = suffix.find_last_of("/\\");
    if (slash != std::string_view::npos)
        suffix.remove_prefix(slash + 1);
    if (const size_t dot = suffix.find_last_of('.'); dot != std::string_view::npos)
        suffix.remove_prefix(dot + 1);
    else if (pathOrSuffix.find_first_of("/\\") != std::string_view::npos)
        return std::nullopt; // a path without a suffix
    std::string s(suffix);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (s == "csv")
        return DataFormat::Csv;
    if (s == "npy")
        return DataFormat::Npy;
    if (s == "npz")
        return DataFormat::Npz;
    if (s == "json")
        return DataFormat::Json;
    return std::nullopt;
}

Result<std::string> traceDataBytes(const Project &project, const AttentionTrace &trace, DataFormat format,
                                   const std::string &tensorName, int head)
{
    if (format == DataFormat::Npz || format == DataFormat::Json) {
        const auto tensors = traceTensors(trace);
        if (format == DataFormat::Json)
            return traceJson(project, tensors);
        return npzBytes(tensors);
    }
    auto tensor = traceTensor(trace, tensorName);
    if (!tensor)
        return Error{tensor.message(), ErrorKind::InvalidInput};
    if (format == DataFormat::Npy)
        return npyBytes(tensor->shape, tensor->data.data());
    // Token labels name the rows and columns where the tensor is indexed by tokens.
    const std::string &name = tensor->name;
    const bool keyRows = name == "k" || name == "v";
    const bool keyCols = name == "scores" || name == "weights" || name == "mask";
    auto csv = tensorCsv(*tensor, head, keyRows ? project.keyLabels() : project.queryTokens,
                         keyCols ? project.keyLabels() : std::vector<std::string>{});
    if (!csv)
        return Error{csv.message(), ErrorKind::InvalidInput};
    return std::move(csv.value());
}

} // namespace attnscope
