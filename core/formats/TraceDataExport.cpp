#include "core/formats/TraceDataExport.h"

#include "core/formats/ProjectFile.h"
#include "core/formats/TensorExport.h"
#include "core/formats/TraceExport.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

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

Status writeTraceData(const TraceLabels &labels, const AttentionTrace &trace, const std::string &path,
                      const std::string &tensorName, int head)
{
    const auto format = dataFormatFromPath(path);
    if (!format)
        return Error{quotedText(path, 200) + ": expected a .csv, .npy, .npz or .json file", ErrorKind::InvalidInput};
    AtomicFileWriter file(path);
    if (*format == DataFormat::Csv) {
        auto tensor = traceTensor(trace, tensorName);
        if (!tensor)
            return Error{tensor.message(), ErrorKind::InvalidInput};
        // One head as text: about 16 bytes per value, built in memory.
        const auto &shape = tensor->shape;
        const std::int64_t values = shape.size() == 3 ? shape[1] * shape[2] : shape[0] * shape[1];
        if (Status s = checkFitsInMemory(saturatingMul(values, 16), "the CSV text"); !s)
            return s;
        // Token labels name the rows and columns where the tensor is indexed by tokens.
        const std::string &name = tensor->name;
        const bool keyRows = name == "k" || name == "v";
        const bool keyCols = name == "scores" || name == "weights" || name == "mask";
        auto csv = tensorCsv(*tensor, head, keyRows ? labels.keyTokens : labels.queryTokens,
                             keyCols ? labels.keyTokens : std::vector<std::string>{});
        if (!csv)
            return Error{csv.message(), ErrorKind::InvalidInput};
        if (Status s = file.open(); !s)
            return s;
        file.write(*csv);
        return file.commit();
    }
    if (*format == DataFormat::Npy && traceTensorShape(trace, tensorName).empty()) {
        const Status unknown = writeTensorNpy(trace, tensorName, file); // the error listing the names
        return Error{unknown.message(), ErrorKind::InvalidInput};
    }
    if (Status s = file.open(); !s)
        return s;
    const Status written = *format == DataFormat::Npy   ? writeTensorNpy(trace, tensorName, file)
                           : *format == DataFormat::Npz ? writeTraceNpz(trace, file)
                                                        : writeTraceJson(labels, trace, file);
    if (!written)
        return written;
    return file.commit();
}

} // namespace attnscope
