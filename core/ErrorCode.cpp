#include "core/ErrorCode.h"

#include <algorithm>
#include <array>

namespace attnscope {

namespace {

// Keep each text identical to what the call site wrote before it had a code: scripts and tests
// read these messages.
constexpr std::array kTemplates = {
    // Project files (core/ProjectFile.cpp) and problem validation (core/Validation.cpp).
    ErrorTemplate{"project.expected", "%1: expected %2, found %3"},
    ErrorTemplate{"project.missing", "%1: missing (expected %2)"},
    ErrorTemplate{"project.format", "format: expected \"attnscope\", found %1"},
    ErrorTemplate{"project.version", "version: expected 1, found %1"},
    ErrorTemplate{"project.version.newer", "version: expected 1, found %1 (written by a newer AttnScope)"},
    ErrorTemplate{"project.float32", "%1: expected a finite float32 number, found %2"},
    ErrorTemplate{"project.matrix.empty", "%1: expected at least one row, found an empty matrix"},
    ErrorTemplate{"project.row.empty", "%1: expected at least one number, found an empty row"},
    ErrorTemplate{"project.row.length", "%1: expected %2 numbers like row 0, found %3"},
    ErrorTemplate{"project.labels", "%1: expected %2 labels (one per row of x), found %3"},
    ErrorTemplate{"project.mask.binary", "%1: expected 0 or 1, found %2"},
    ErrorTemplate{"value.atLeastOne", "%1: expected a whole number of at least 1, found %2"},
    ErrorTemplate{"value.tooLarge", "%1: %2 is larger than the supported %3"},
    ErrorTemplate{"value.finite", "%1: expected a finite number, found %2"},
    ErrorTemplate{"validation.shape", "%1: expected %2 (%3), found %4"},
    ErrorTemplate{"validation.vector", "%1: expected %2 values (%3), found %4"},
    ErrorTemplate{"validation.input.empty", "%1: expected at least one token and one dimension, found %2"},
    ErrorTemplate{"validation.oBias",
                  "weights.oBias: given without weights.o (an output bias needs an output projection)"},
    ErrorTemplate{"validation.keyPadding", "mask.keyPadding: expected %1 values (one per key token), found %2"},
    ErrorTemplate{"validation.allowed", "mask.allowed: expected only 0 and 1, found %1"},
    // Memory refusals (core/Validation.cpp, core/MemoryLimits.cpp).
    ErrorTemplate{"memory.trace", "size: this problem needs %1 for its intermediate tensors; this machine allows %2"},
    ErrorTemplate{"memory.refused", "size: this problem needs %1 for %2; this machine allows %3"},
    // Opening files (core/FileIo.cpp, core/MappedFile.cpp).
    ErrorTemplate{"file.open", "%1: cannot open the file"},
    ErrorTemplate{"file.open.reason", "%1: cannot open the file (%2)"},
    ErrorTemplate{"file.open.colon", "%1: cannot open the file: %2"},
    ErrorTemplate{"file.directory", "%1: is a directory, not a file"},
    ErrorTemplate{"file.tooLarge", "%1: the file is %2; files up to %3 can be read on this machine"},
    ErrorTemplate{"file.notRegular", "%1: not a regular file"},
    ErrorTemplate{"file.notText", "%1: not a text file (a NUL byte at offset %2)"},
    // .npy and attention files (core/Npy.cpp, core/AttentionFile.cpp).
    ErrorTemplate{"npy.magic", "not a .npy file (missing the \\x93NUMPY magic)"},
    ErrorTemplate{"npy.header.truncated", "truncated .npy header"},
    ErrorTemplate{"npy.dtype", "unsupported .npy dtype %1 (expected '<f4' or '<f8')"},
    ErrorTemplate{
        "attention.dtype",
        "dtype %1 is not an attention dtype (expected '<f2', '<f4' or '<f8': little-endian float16, 32 or 64)"},
    ErrorTemplate{"attention.noArray", "no array named \"attentions\" among %1 (%2)"},
    ErrorTemplate{"attention.rank",
                  "shape %1: expected [layers, heads, queries, keys], [heads, queries, keys] or [queries, keys]"},
    ErrorTemplate{"attention.emptyAxis", "shape %1: every size must be at least 1"},
    ErrorTemplate{"attention.nonFinite", "value %1 (attention weights must be finite numbers)"},
};

} // namespace

std::span<const ErrorTemplate> errorTemplates()
{
    return kTemplates;
}

const char *errorTemplate(std::string_view code)
{
    const auto it =
        std::find_if(kTemplates.begin(), kTemplates.end(), [&](const ErrorTemplate &t) { return code == t.code; });
    return it == kTemplates.end() ? nullptr : it->english;
}

std::string fillErrorTemplate(std::string_view english, const std::vector<std::string> &args)
{
    std::string out;
    out.reserve(english.size() + 32);
    for (std::size_t i = 0; i < english.size(); ++i) {
        const char c = english[i];
        if (c == '%' && i + 1 < english.size() && english[i + 1] >= '1' && english[i + 1] <= '9') {
            const std::size_t n = std::size_t(english[i + 1] - '1');
            if (n < args.size()) {
                out += args[n];
                ++i;
                continue;
            }
        }
        out += c;
    }
    return out;
}

Error codedError(const char *code, std::vector<std::string> args, ErrorKind kind)
{
    const char *english = errorTemplate(code);
    Error e{english ? fillErrorTemplate(english, args) : std::string(code), kind};
    e.code = code;
    e.args = std::move(args);
    return e;
}

Error prefixedError(const std::string &prefix, Error e)
{
    e.message.insert(0, prefix);
    return e;
}

} // namespace attnscope
