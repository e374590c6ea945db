#include "core/ErrorCode.h"

#include <algorithm>
#include <array>

namespace attnscope {

namespace {

// Keep each text identical to what the call site wrote before it had a code: scripts and tests
// read these messages.
constexpr std::array kTemplates = {
    // Project files (core/formats/ProjectFile.cpp) and problem validation (core/attention/Validation.cpp).
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
    ErrorTemplate{"validation.kvHeads", "kvHeads: expected a whole number that divides heads (%1), found %2"},
    ErrorTemplate{"validation.rope.odd",
                  "rope: needs an even headDimQK (dimension i turns with dimension i + dK/2), found %1"},
    ErrorTemplate{"validation.rope.base", "rope.base: expected a number above 0, found %1"},
    ErrorTemplate{"validation.positions", "%1: expected %2 positions (one per row), found %3"},
    ErrorTemplate{"validation.position", "%1: expected a whole number of 0 or more, found %2"},
    ErrorTemplate{"validation.window", "mask.window: expected a whole number of at least 1, found %1"},
    ErrorTemplate{"validation.rope.frequencies",
                  "rope.frequencies: expected %1 values (one per pair of dimensions), found %2"},
    ErrorTemplate{"validation.rope.frequency", "rope.frequencies[%1]: expected a number of at least 0, found %2"},
    ErrorTemplate{"validation.rope.scaling", "rope.scaling: expected a number above 0, found %1"},
    ErrorTemplate{"validation.qkNormEps", "qkNormEps: expected a number above 0 and at most 1, found %1"},
    ErrorTemplate{"validation.softcap", "softcap: expected a number above 0, found %1"},
    // Memory refusals (core/attention/Validation.cpp, core/io/MemoryLimits.cpp).
    ErrorTemplate{"memory.trace", "size: this problem needs %1 for its intermediate tensors; this machine allows %2"},
    ErrorTemplate{"memory.refused", "size: this problem needs %1 for %2; this machine allows %3"},
    // Attention rollout's cost (core/analysis/AttentionStats.cpp).
    ErrorTemplate{"rollout.memory",
                  "rollout: needs %1 of memory (four %2 x %2 matrices of doubles); this machine allows %3"},
    ErrorTemplate{"rollout.operations", "rollout: multiplying the %2 x %2 matrices of %1 layers needs about %3 "
                                        "operations, more than the %4 allowed (minutes of work)"},
    // Comparing two attention sets (core/analysis/Comparison.cpp).
    ErrorTemplate{"compare.empty", "cannot compare: %1 has no attention maps"},
    ErrorTemplate{"compare.shape", "cannot compare: A has %1 layers of %2 heads, B has %3 layers of %4 heads"},
    ErrorTemplate{
        "compare.samples",
        "cannot compare: A has %1 samples and B has %2; the two inputs must hold as many sequences to be aligned"},
    ErrorTemplate{"compare.tokens", "cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the "
                                    "same number of tokens to be aligned position by position"},
    ErrorTemplate{"compare.tokens.prefix",
                  "cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number of "
                  "tokens to be aligned position by position; %3 is %4 followed by %5 more tokens"},
    ErrorTemplate{"compare.tokens.prefixOne",
                  "cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number of "
                  "tokens to be aligned position by position; %3 is %4 followed by %5 more token"},
    ErrorTemplate{"compare.queries", "cannot compare: A has %1 queries and B has %2; the two inputs must have as many "
                                     "queries to be aligned position by position"},
    ErrorTemplate{"compare.keys", "cannot compare: A has %1 keys and B has %2; the two inputs must have as many keys "
                                  "to be aligned position by position"},
    ErrorTemplate{"compare.qk", "cannot compare: %1 is computed from queries and keys, whose maps would need %2 held "
                                "as float32; export its weights to an attention file and compare that"},
    ErrorTemplate{"compare.memory", "cannot compare: A, B and their difference need %1 (three times %2 maps of %3 x %4 "
                                    "float32 values); this machine allows %5"},
    // Pasted blocks of numbers (core/formats/NumberBlock.cpp).
    ErrorTemplate{"paste.notNumber", "line %1, number %2: \"%3\" is not a number"},
    ErrorTemplate{"paste.float32", "line %1, number %2: %3 is beyond float32 (±3.4e38)"},
    ErrorTemplate{"paste.ragged", "line %1 has %2 numbers, line 1 has %3"},
    ErrorTemplate{"paste.raggedOne", "line %1 has 1 number, line 1 has %2"},
    ErrorTemplate{"paste.empty", "no numbers"},
    ErrorTemplate{"paste.tooMany", "more than %1 numbers: too many to paste"},
    // Opening files (core/io/FileIo.cpp, core/io/MappedFile.cpp).
    ErrorTemplate{"file.open", "%1: cannot open the file"},
    ErrorTemplate{"file.open.reason", "%1: cannot open the file (%2)"},
    ErrorTemplate{"file.open.colon", "%1: cannot open the file: %2"},
    ErrorTemplate{"file.directory", "%1: is a directory, not a file"},
    ErrorTemplate{"file.tooLarge", "%1: the file is %2; files up to %3 can be read on this machine"},
    ErrorTemplate{"file.notRegular", "%1: not a regular file"},
    ErrorTemplate{"file.notText", "%1: not a text file (a NUL byte at offset %2)"},
    ErrorTemplate{"file.changed", "%1: the file changed on disk; reopen it"},
    // .npy and attention files (core/formats/Npy.cpp, core/formats/AttentionFile.cpp).
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
    // JSON syntax and limits (core/io/JsonDocument.cpp, core/formats/ProjectFile.cpp).
    ErrorTemplate{"json.syntax", "not valid JSON: parse error at line %1, column %2 (offset %3): unexpected '%4'"},
    ErrorTemplate{"json.syntax.nonNumber",
                  "not valid JSON: parse error at line %1, column %2 (offset %3): unexpected '%4' (NaN and Infinity "
                  "are not numbers in JSON; every value must be finite)"},
    ErrorTemplate{
        "json.syntax.end",
        "not valid JSON: parse error at line %1, column %2 (offset %3): the text ends before the JSON is complete"},
    ErrorTemplate{"json.invalid", "not valid JSON: %1"},
    ErrorTemplate{"json.invalid.nonNumber",
                  "not valid JSON: %1 (NaN and Infinity are not numbers in JSON; every value must be finite)"},
    ErrorTemplate{"json.invalid.bare", "not valid JSON"},
    ErrorTemplate{"json.binary", "%1: binary values are not JSON"},
    ErrorTemplate{"json.duplicateKey", "%1: given twice (a key may appear only once in an object)"},
    ErrorTemplate{"json.numberRange",
                  "%1: the number %2 is out of range (numbers must be finite; float32 holds at most 3.4e38)"},
    ErrorTemplate{"json.tooManyValues", "file: more than %1 values, more than this machine can hold parsed"},
    ErrorTemplate{"json.depth", "%1: nested %2 levels deep, more than the %3 allowed"},
    ErrorTemplate{"json.outOfMemory", "file: out of memory while reading the JSON"},
    // Rarer .npy errors (core/formats/Npy.cpp).
    ErrorTemplate{"npy.version", "unsupported .npy version %1"},
    ErrorTemplate{"npy.header.length",
                  "truncated .npy header: the header length at offset 8 says %1 bytes, the file has %2"},
    ErrorTemplate{"npy.header.short", "truncated .npy header: expected %1 bytes, found %2"},
    ErrorTemplate{"npy.header.entry", "bad .npy header: no '%1' entry"},
    ErrorTemplate{"npy.header.unreadable", "bad .npy header: no readable '%1' entry"},
    ErrorTemplate{"npy.order", "unsupported .npy layout: only C order is read"},
    ErrorTemplate{"npy.shape", "bad .npy shape %1 (expected a tuple of whole numbers)"},
    ErrorTemplate{"npy.shape.rank", "bad .npy shape: more than 32 dimensions"},
    ErrorTemplate{"npy.dtype.float",
                  "unsupported .npy dtype %1 (expected '<f2', '<f4' or '<f8': little-endian float16, 32 or 64)"},
    ErrorTemplate{"npy.data.truncated", "truncated .npy data: the shape %1 needs %2 bytes, found %3"},
    ErrorTemplate{"npy.data.short", "truncated .npy data: the shape needs %1 bytes, found %2"},
    // ZIP archives (.npz; core/formats/ZipReader.cpp) and safetensors files (core/formats/Safetensors.cpp).
    ErrorTemplate{"zip.tooShort", "not a ZIP archive: %1 bytes"},
    ErrorTemplate{"zip.noDirectory", "not a ZIP archive: no end-of-directory record"},
    ErrorTemplate{"zip.corrupt", "ZIP member %1: corrupt deflate data (%2 of %3 bytes inflated)"},
    ErrorTemplate{"zip.method", "ZIP member %1: compression method %2 is not supported (stored or deflated)"},
    ErrorTemplate{"zip.crc", "ZIP member %1: CRC-32 mismatch (the data is corrupt)"},
    ErrorTemplate{"safetensors.tooShort", "not a safetensors file: %1 bytes, shorter than the 8-byte header length"},
    ErrorTemplate{"safetensors.header.pastEnd",
                  "header length %1 at offset 0 runs past the end of the file (%2 bytes)"},
    ErrorTemplate{"safetensors.header.tooLarge", "header length %1 is larger than the format's 100 MiB limit"},
    ErrorTemplate{"safetensors.header.notObject",
                  "not a safetensors file: the header at offset 8 is not a JSON object"},
    ErrorTemplate{"zip.zip64Record", "ZIP64 end-of-directory record: offset %1 is not one"},
    ErrorTemplate{"zip.directory.pastEnd", "ZIP directory at offset %1 (%2 bytes) runs past the end of the file"},
    ErrorTemplate{"zip.directory.count", "ZIP directory: %1 members cannot fit in %2 bytes"},
    ErrorTemplate{"zip.entry", "ZIP directory entry %1 at offset %2 is not one"},
    ErrorTemplate{"zip.entry.pastEnd", "ZIP directory entry %1 runs past the directory"},
    ErrorTemplate{"zip.localHeader", "ZIP member %1: no local header at offset %2"},
    ErrorTemplate{"zip.member.pastEnd",
                  "ZIP member %1: its %2 bytes at offset %3 run past the end of the file (%4 bytes)"},
    ErrorTemplate{"zip.member.tooLarge", "ZIP member %1: %2 bytes uncompressed, more than the %3 this machine allows"},
    ErrorTemplate{"zip.member.claims",
                  "ZIP member %1: claims %2 bytes from %3 compressed, more than deflate can produce"},
    ErrorTemplate{"zip.member.storedSizes", "ZIP member %1: stored, but its sizes differ"},
    ErrorTemplate{"safetensors.header.expectedObject", "header: expected a JSON object"},
    ErrorTemplate{"safetensors.metadata", "__metadata__: expected an object of strings"},
    ErrorTemplate{"safetensors.metadata.value", "__metadata__.%1: expected a string"},
    ErrorTemplate{"safetensors.entry", "tensor \"%1\": expected {\"dtype\", \"shape\", \"data_offsets\"}"},
    ErrorTemplate{"safetensors.dtype", "tensor \"%1\": dtype is not a string"},
    ErrorTemplate{"safetensors.shape", "tensor \"%1\": shape is not an array of at most 8 sizes"},
    ErrorTemplate{"safetensors.shape.notSize", "tensor \"%1\": shape holds %2, not a size"},
    ErrorTemplate{"safetensors.shape.overflow", "tensor \"%1\": shape has more elements than can be addressed"},
    ErrorTemplate{"safetensors.offsets", "tensor \"%1\": data_offsets is not [begin, end] with begin <= end"},
    ErrorTemplate{"safetensors.offsets.pastEnd", "tensor \"%1\": data_offsets end %2 is past the %3 bytes of data"},
    ErrorTemplate{"safetensors.offsets.size", "tensor \"%1\": %2 %3 values need %4 bytes, data_offsets give %5"},
    ErrorTemplate{"safetensors.offsets.overlap",
                  "tensor \"%1\": data_offsets [%2, %3] overlap the tensor before it (which ends at %4)"},
    ErrorTemplate{"safetensors.data.gap", "data: bytes %1 to %2 belong to no tensor"},
    ErrorTemplate{"safetensors.data.trailing", "data: %1 bytes after the last tensor belong to none"},
    // Backend choice and Vulkan fallbacks (app/engine/BackendChoice.cpp): notices and refusals.
    ErrorTemplate{"safetensors.noAttentions", "no tensor named \"attentions\" among %1"},
    ErrorTemplate{"safetensors.attentionDtype", "tensor %1 has dtype %2 (expected F16, BF16, F32 or F64)"},
    ErrorTemplate{"safetensors.metadata.labels", "__metadata__.%1: expected a JSON list of strings"},
    // Vulkan's own refusals (gpu/): the driver's words (VkResult names, dlerror()) are arguments.
    ErrorTemplate{"vulkan.loader.open", "no Vulkan loader: cannot open %1"},
    ErrorTemplate{"vulkan.loader.openReason", "no Vulkan loader: cannot open %1 (%2)"},
    ErrorTemplate{"vulkan.loader.noEntry", "no Vulkan loader: %1 has no vkGetInstanceProcAddr"},
    ErrorTemplate{"vulkan.loader.lacks", "Vulkan loader %1 lacks %2"},
    ErrorTemplate{"vulkan.instance.lacks", "Vulkan instance lacks %1"},
    ErrorTemplate{"vulkan.device.lacks", "Vulkan device lacks %1"},
    ErrorTemplate{"vulkan.noDriver",
                  "no Vulkan driver: vkCreateInstance found no compatible driver (VK_ERROR_INCOMPATIBLE_DRIVER)"},
    ErrorTemplate{"vulkan.noDriver.enumerate", "no Vulkan driver: vkEnumeratePhysicalDevices failed with %1"},
    ErrorTemplate{"vulkan.manifest", "no Vulkan driver: the loader's manifest %1 is not valid JSON (%2); the loader "
                                     "reports this as VK_ERROR_OUT_OF_HOST_MEMORY"},
    ErrorTemplate{"vulkan.noDevice.loader", "no Vulkan device: the loader found no driver with a device (see "
                                            "VK_DRIVER_FILES / VK_ICD_FILENAMES and /usr/share/vulkan/icd.d)"},
    ErrorTemplate{"vulkan.noDevice", "no Vulkan device"},
    ErrorTemplate{"vulkan.device.index", "Vulkan device \"%1\": no device with that index (devices: %2)"},
    ErrorTemplate{"vulkan.device.name", "Vulkan device \"%1\": no device name contains it (devices: %2)"},
    ErrorTemplate{"vulkan.call", "%1: %2 (%3)"},
    ErrorTemplate{"vulkan.timeout", "the GPU did not finish within %1 s (VK_TIMEOUT)"},
    ErrorTemplate{"vulkan.deviceLost", "the device stopped answering: %1"},
    ErrorTemplate{"vulkan.pending", "the previous submission never finished"},
    ErrorTemplate{"vulkan.lostEarlier", "the device was lost earlier (%1); create a new backend"},
    ErrorTemplate{"vulkan.tooLarge.allocation", "%1: needs %2 in one allocation, more than the %3 that %4 allows"},
    ErrorTemplate{"vulkan.tooLarge.binding",
                  "%1: needs %2 in one binding, more than the device's maxStorageBufferRange of %3"},
    ErrorTemplate{"vulkan.plan.rangeTooSmall", "%1: the device's maxStorageBufferRange is too small"},
    ErrorTemplate{"vulkan.plan.noWorkgroups", "%1: the device allows no workgroups along an axis"},
    ErrorTemplate{"vulkan.device.indexRange", "Vulkan device index %1 is out of range"},
    ErrorTemplate{"vulkan.device.noComputeQueue", "Vulkan device %1 has no compute queue"},
    ErrorTemplate{"vulkan.device.noMemoryType", "Vulkan device %1 has no memory type with the properties needed"},
    ErrorTemplate{
        "vulkan.validation.noLayer",
        "Vulkan validation was asked for, but %1 is not installed (Debian: apt install vulkan-validationlayers)"},
    ErrorTemplate{"vulkan.validation.noDebugUtils", "Vulkan validation: VK_EXT_debug_utils is unavailable"},
    ErrorTemplate{"backend.vulkanUnavailable", "Vulkan backend unavailable: %1"},
    ErrorTemplate{"backend.startFailed", "Vulkan failed to start (%1): using the CPU"},
    ErrorTemplate{"backend.usingCpu", "%1: using the CPU"},
    ErrorTemplate{"backend.onlyCpuDevice", "the only Vulkan device is %1, slower than the Eigen engine: using the CPU "
                                           "(--backend vulkan or ATTNSCOPE_VULKAN_DEVICE uses it anyway)"},
    ErrorTemplate{"backend.fallback.always", "%1: computing on the CPU from now on"},
    ErrorTemplate{"backend.fallback.once",
                  "%1: computed on the CPU this time (the GPU is still used for the next problem)"},
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

Error wrappingError(const char *code, const Error &inner, ErrorKind kind)
{
    std::vector<std::string> args{inner.message};
    if (!inner.code.empty()) {
        args.push_back(inner.code);
        args.insert(args.end(), inner.args.begin(), inner.args.end());
    }
    return codedError(code, std::move(args), kind);
}

Error prefixedError(const std::string &prefix, Error e)
{
    e.message.insert(0, prefix);
    return e;
}

} // namespace attnscope
