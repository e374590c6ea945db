#include "app/render/ErrorText.h"

#include "core/ErrorCode.h"

#include <QCoreApplication>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace attnscope {

namespace {

struct Entry {
    const char *code;
    const char *english;
};

// The same templates as core/ErrorCode.cpp, for lupdate and the translators; tst_translations
// fails when the two lists differ.
const Entry kEntries[] = {
    {"project.expected", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2, found %3")},
    {"project.missing", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: missing (expected %2)")},
    {"project.format", QT_TRANSLATE_NOOP("attnscope::CoreError", "format: expected \"attnscope\", found %1")},
    {"project.version", QT_TRANSLATE_NOOP("attnscope::CoreError", "version: expected 1, found %1")},
    {"project.version.newer",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "version: expected 1, found %1 (written by a newer AttnScope)")},
    {"project.float32", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a finite float32 number, found %2")},
    {"project.matrix.empty",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected at least one row, found an empty matrix")},
    {"project.row.empty",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected at least one number, found an empty row")},
    {"project.row.length", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 numbers like row 0, found %3")},
    {"project.labels",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 labels (one per row of x), found %3")},
    {"project.mask.binary", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected 0 or 1, found %2")},
    {"value.atLeastOne",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a whole number of at least 1, found %2")},
    {"value.tooLarge", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: %2 is larger than the supported %3")},
    {"value.finite", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a finite number, found %2")},
    {"validation.shape", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 (%3), found %4")},
    {"validation.vector", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 values (%3), found %4")},
    {"validation.input.empty",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected at least one token and one dimension, found %2")},
    {"validation.oBias",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "weights.oBias: given without weights.o (an output bias needs an output projection)")},
    {"validation.keyPadding",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "mask.keyPadding: expected %1 values (one per key token), found %2")},
    {"validation.allowed", QT_TRANSLATE_NOOP("attnscope::CoreError", "mask.allowed: expected only 0 and 1, found %1")},
    {"validation.kvHeads",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "kvHeads: expected a whole number that divides heads (%1), found %2")},
    {"validation.rope.odd",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "rope: needs an even headDimQK (dimension i turns with dimension i + dK/2), found %1")},
    {"validation.rope.base",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "rope.base: expected a number above 0, found %1")},
    {"validation.positions",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 positions (one per row), found %3")},
    {"validation.position",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a whole number of 0 or more, found %2")},
    {"validation.window",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "mask.window: expected a whole number of at least 1, found %1")},
    {"validation.rope.frequencies",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "rope.frequencies: expected %1 values (one per pair of dimensions), found %2")},
    {"validation.rope.frequency",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "rope.frequencies[%1]: expected a number of at least 0, found %2")},
    {"validation.rope.scaling",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "rope.scaling: expected a number above 0, found %1")},
    {"validation.qkNormEps",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "qkNormEps: expected a number above 0 and at most 1, found %1")},
    {"validation.softcap", QT_TRANSLATE_NOOP("attnscope::CoreError", "softcap: expected a number above 0, found %1")},
    {"memory.trace",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "size: this problem needs %1 for its intermediate tensors; this machine allows %2")},
    {"memory.refused",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "size: this problem needs %1 for %2; this machine allows %3")},
    {"rollout.memory",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "rollout: needs %1 of memory (four %2 x %2 matrices of doubles); this machine allows %3")},
    {"rollout.operations",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "rollout: multiplying the %2 x %2 matrices of %1 layers needs about "
                                               "%3 operations, more than the %4 allowed (minutes of work)")},
    {"compare.empty", QT_TRANSLATE_NOOP("attnscope::CoreError", "cannot compare: %1 has no attention maps")},
    {"compare.shape", QT_TRANSLATE_NOOP("attnscope::CoreError",
                                        "cannot compare: A has %1 layers of %2 heads, B has %3 layers of %4 heads")},
    {"compare.samples",
     QT_TRANSLATE_NOOP(
         "attnscope::CoreError",
         "cannot compare: A has %1 samples and B has %2; the two inputs must hold as many sequences to be aligned")},
    {"compare.tokens", QT_TRANSLATE_NOOP("attnscope::CoreError",
                                         "cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to "
                                         "the same number of tokens to be aligned position by position")},
    {"compare.tokens.prefix",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number "
                       "of tokens to be aligned position by position; %3 is %4 followed by %5 more tokens")},
    {"compare.tokens.prefixOne",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "cannot compare: A has %1 tokens and B has %2; the two texts must tokenise to the same number "
                       "of tokens to be aligned position by position; %3 is %4 followed by %5 more token")},
    {"compare.queries",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "cannot compare: A has %1 queries and B has %2; the two inputs must "
                                               "have as many queries to be aligned position by position")},
    {"compare.keys",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "cannot compare: A has %1 keys and B has %2; the two inputs must have "
                                               "as many keys to be aligned position by position")},
    {"compare.qk", QT_TRANSLATE_NOOP("attnscope::CoreError",
                                     "cannot compare: %1 is computed from queries and keys, whose maps would need %2 "
                                     "held as float32; export its weights to an attention file and compare that")},
    {"compare.memory",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "cannot compare: A, B and their difference need %1 (three times %2 maps "
                                               "of %3 x %4 float32 values); this machine allows %5")},
    {"paste.notNumber", QT_TRANSLATE_NOOP("attnscope::CoreError", "line %1, number %2: \"%3\" is not a number")},
    {"paste.float32", QT_TRANSLATE_NOOP("attnscope::CoreError", "line %1, number %2: %3 is beyond float32 (±3.4e38)")},
    {"paste.ragged", QT_TRANSLATE_NOOP("attnscope::CoreError", "line %1 has %2 numbers, line 1 has %3")},
    {"paste.raggedOne", QT_TRANSLATE_NOOP("attnscope::CoreError", "line %1 has 1 number, line 1 has %2")},
    {"paste.empty", QT_TRANSLATE_NOOP("attnscope::CoreError", "no numbers")},
    {"paste.tooMany", QT_TRANSLATE_NOOP("attnscope::CoreError", "more than %1 numbers: too many to paste")},
    {"file.open", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: cannot open the file")},
    {"file.open.reason", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: cannot open the file (%2)")},
    {"file.open.colon", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: cannot open the file: %2")},
    {"file.directory", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: is a directory, not a file")},
    {"file.tooLarge",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: the file is %2; files up to %3 can be read on this machine")},
    {"file.notRegular", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: not a regular file")},
    {"file.notText", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: not a text file (a NUL byte at offset %2)")},
    {"file.changed", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: the file changed on disk; reopen it")},
    {"npy.magic", QT_TRANSLATE_NOOP("attnscope::CoreError", "not a .npy file (missing the \\x93NUMPY magic)")},
    {"npy.header.truncated", QT_TRANSLATE_NOOP("attnscope::CoreError", "truncated .npy header")},
    {"npy.dtype", QT_TRANSLATE_NOOP("attnscope::CoreError", "unsupported .npy dtype %1 (expected '<f4' or '<f8')")},
    {"attention.dtype",
     QT_TRANSLATE_NOOP(
         "attnscope::CoreError",
         "dtype %1 is not an attention dtype (expected '<f2', '<f4' or '<f8': little-endian float16, 32 or 64)")},
    {"attention.noArray", QT_TRANSLATE_NOOP("attnscope::CoreError", "no array named \"attentions\" among %1 (%2)")},
    {"attention.rank",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "shape %1: expected [layers, heads, queries, keys], [heads, queries, keys] or [queries, keys]")},
    {"attention.emptyAxis", QT_TRANSLATE_NOOP("attnscope::CoreError", "shape %1: every size must be at least 1")},
    {"attention.nonFinite",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "value %1 (attention weights must be finite numbers)")},
    {"json.syntax",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "not valid JSON: parse error at line %1, column %2 (offset %3): unexpected '%4'")},
    {"json.syntax.nonNumber",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "not valid JSON: parse error at line %1, column %2 (offset %3): unexpected '%4' (NaN and "
                       "Infinity are not numbers in JSON; every value must be finite)")},
    {"json.syntax.end",
     QT_TRANSLATE_NOOP(
         "attnscope::CoreError",
         "not valid JSON: parse error at line %1, column %2 (offset %3): the text ends before the JSON is complete")},
    {"json.invalid", QT_TRANSLATE_NOOP("attnscope::CoreError", "not valid JSON: %1")},
    {"json.invalid.nonNumber",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "not valid JSON: %1 (NaN and Infinity are not numbers in JSON; every value must be finite)")},
    {"json.invalid.bare", QT_TRANSLATE_NOOP("attnscope::CoreError", "not valid JSON")},
    {"json.binary", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: binary values are not JSON")},
    {"json.duplicateKey",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: given twice (a key may appear only once in an object)")},
    {"json.numberRange",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "%1: the number %2 is out of range (numbers must be finite; float32 holds at most 3.4e38)")},
    {"json.tooManyValues",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "file: more than %1 values, more than this machine can hold parsed")},
    {"json.depth", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: nested %2 levels deep, more than the %3 allowed")},
    {"json.outOfMemory", QT_TRANSLATE_NOOP("attnscope::CoreError", "file: out of memory while reading the JSON")},
    {"npy.version", QT_TRANSLATE_NOOP("attnscope::CoreError", "unsupported .npy version %1")},
    {"npy.header.length",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "truncated .npy header: the header length at offset 8 says %1 bytes, the file has %2")},
    {"npy.header.short",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "truncated .npy header: expected %1 bytes, found %2")},
    {"npy.header.entry", QT_TRANSLATE_NOOP("attnscope::CoreError", "bad .npy header: no '%1' entry")},
    {"npy.header.unreadable", QT_TRANSLATE_NOOP("attnscope::CoreError", "bad .npy header: no readable '%1' entry")},
    {"npy.order", QT_TRANSLATE_NOOP("attnscope::CoreError", "unsupported .npy layout: only C order is read")},
    {"npy.shape", QT_TRANSLATE_NOOP("attnscope::CoreError", "bad .npy shape %1 (expected a tuple of whole numbers)")},
    {"npy.shape.rank", QT_TRANSLATE_NOOP("attnscope::CoreError", "bad .npy shape: more than 32 dimensions")},
    {"npy.dtype.float",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "unsupported .npy dtype %1 (expected '<f2', '<f4' or '<f8': little-endian float16, 32 or 64)")},
    {"npy.data.truncated",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "truncated .npy data: the shape %1 needs %2 bytes, found %3")},
    {"npy.data.short",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "truncated .npy data: the shape needs %1 bytes, found %2")},
    {"zip.tooShort", QT_TRANSLATE_NOOP("attnscope::CoreError", "not a ZIP archive: %1 bytes")},
    {"zip.noDirectory", QT_TRANSLATE_NOOP("attnscope::CoreError", "not a ZIP archive: no end-of-directory record")},
    {"zip.corrupt",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP member %1: corrupt deflate data (%2 of %3 bytes inflated)")},
    {"zip.method", QT_TRANSLATE_NOOP("attnscope::CoreError",
                                     "ZIP member %1: compression method %2 is not supported (stored or deflated)")},
    {"zip.crc", QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP member %1: CRC-32 mismatch (the data is corrupt)")},
    {"safetensors.tooShort",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "not a safetensors file: %1 bytes, shorter than the 8-byte header length")},
    {"safetensors.header.pastEnd",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "header length %1 at offset 0 runs past the end of the file (%2 bytes)")},
    {"safetensors.header.tooLarge",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "header length %1 is larger than the format's 100 MiB limit")},
    {"safetensors.header.notObject",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "not a safetensors file: the header at offset 8 is not a JSON object")},
    {"zip.zip64Record",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP64 end-of-directory record: offset %1 is not one")},
    {"zip.directory.pastEnd",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP directory at offset %1 (%2 bytes) runs past the end of the file")},
    {"zip.directory.count",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP directory: %1 members cannot fit in %2 bytes")},
    {"zip.entry", QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP directory entry %1 at offset %2 is not one")},
    {"zip.entry.pastEnd", QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP directory entry %1 runs past the directory")},
    {"zip.localHeader", QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP member %1: no local header at offset %2")},
    {"zip.member.pastEnd",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "ZIP member %1: its %2 bytes at offset %3 run past the end of the file (%4 bytes)")},
    {"zip.member.tooLarge",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "ZIP member %1: %2 bytes uncompressed, more than the %3 this machine allows")},
    {"zip.member.claims",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "ZIP member %1: claims %2 bytes from %3 compressed, more than deflate can produce")},
    {"zip.member.storedSizes",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "ZIP member %1: stored, but its sizes differ")},
    {"safetensors.header.expectedObject", QT_TRANSLATE_NOOP("attnscope::CoreError", "header: expected a JSON object")},
    {"safetensors.metadata", QT_TRANSLATE_NOOP("attnscope::CoreError", "__metadata__: expected an object of strings")},
    {"safetensors.metadata.value", QT_TRANSLATE_NOOP("attnscope::CoreError", "__metadata__.%1: expected a string")},
    {"safetensors.entry",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": expected {\"dtype\", \"shape\", \"data_offsets\"}")},
    {"safetensors.dtype", QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": dtype is not a string")},
    {"safetensors.shape",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": shape is not an array of at most 8 sizes")},
    {"safetensors.shape.notSize",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": shape holds %2, not a size")},
    {"safetensors.shape.overflow",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": shape has more elements than can be addressed")},
    {"safetensors.offsets",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": data_offsets is not [begin, end] with begin <= end")},
    {"safetensors.offsets.pastEnd",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": data_offsets end %2 is past the %3 bytes of data")},
    {"safetensors.offsets.size",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor \"%1\": %2 %3 values need %4 bytes, data_offsets give %5")},
    {"safetensors.offsets.overlap",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "tensor \"%1\": data_offsets [%2, %3] overlap the tensor before it (which ends at %4)")},
    {"safetensors.data.gap", QT_TRANSLATE_NOOP("attnscope::CoreError", "data: bytes %1 to %2 belong to no tensor")},
    {"safetensors.data.trailing",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "data: %1 bytes after the last tensor belong to none")},
    {"safetensors.noAttentions", QT_TRANSLATE_NOOP("attnscope::CoreError", "no tensor named \"attentions\" among %1")},
    {"safetensors.attentionDtype",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "tensor %1 has dtype %2 (expected F16, BF16, F32 or F64)")},
    {"safetensors.metadata.labels",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "__metadata__.%1: expected a JSON list of strings")},
    // Vulkan's own refusals (gpu/): the driver's words (VkResult names, dlerror()) are arguments.
    {"vulkan.loader.open", QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan loader: cannot open %1")},
    {"vulkan.loader.openReason", QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan loader: cannot open %1 (%2)")},
    {"vulkan.loader.noEntry",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan loader: %1 has no vkGetInstanceProcAddr")},
    {"vulkan.loader.lacks", QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan loader %1 lacks %2")},
    {"vulkan.instance.lacks", QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan instance lacks %1")},
    {"vulkan.device.lacks", QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan device lacks %1")},
    {"vulkan.noDriver",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "no Vulkan driver: vkCreateInstance found no compatible driver (VK_ERROR_INCOMPATIBLE_DRIVER)")},
    {"vulkan.noDriver.enumerate",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan driver: vkEnumeratePhysicalDevices failed with %1")},
    {"vulkan.manifest",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan driver: the loader's manifest %1 is not valid JSON (%2); the "
                                               "loader reports this as VK_ERROR_OUT_OF_HOST_MEMORY")},
    {"vulkan.noDevice.loader",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan device: the loader found no driver with a device (see "
                                               "VK_DRIVER_FILES / VK_ICD_FILENAMES and /usr/share/vulkan/icd.d)")},
    {"vulkan.noDevice", QT_TRANSLATE_NOOP("attnscope::CoreError", "no Vulkan device")},
    {"vulkan.device.index",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan device \"%1\": no device with that index (devices: %2)")},
    {"vulkan.device.name",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan device \"%1\": no device name contains it (devices: %2)")},
    {"vulkan.call", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: %2 (%3)")},
    {"vulkan.timeout", QT_TRANSLATE_NOOP("attnscope::CoreError", "the GPU did not finish within %1 s (VK_TIMEOUT)")},
    {"vulkan.deviceLost", QT_TRANSLATE_NOOP("attnscope::CoreError", "the device stopped answering: %1")},
    {"vulkan.pending", QT_TRANSLATE_NOOP("attnscope::CoreError", "the previous submission never finished")},
    {"vulkan.lostEarlier",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "the device was lost earlier (%1); create a new backend")},
    {"vulkan.tooLarge.allocation",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: needs %2 in one allocation, more than the %3 that %4 allows")},
    {"vulkan.tooLarge.binding",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "%1: needs %2 in one binding, more than the device's maxStorageBufferRange of %3")},
    {"vulkan.plan.rangeTooSmall",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: the device's maxStorageBufferRange is too small")},
    {"vulkan.plan.noWorkgroups",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: the device allows no workgroups along an axis")},
    {"vulkan.device.indexRange", QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan device index %1 is out of range")},
    {"vulkan.device.noComputeQueue",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan device %1 has no compute queue")},
    {"vulkan.device.noMemoryType",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan device %1 has no memory type with the properties needed")},
    {"vulkan.validation.noLayer",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan validation was asked for, but %1 is not installed (Debian: apt "
                                               "install vulkan-validationlayers)")},
    {"vulkan.validation.noDebugUtils",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan validation: VK_EXT_debug_utils is unavailable")},
    {"backend.vulkanUnavailable", QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan backend unavailable: %1")},
    {"backend.startFailed", QT_TRANSLATE_NOOP("attnscope::CoreError", "Vulkan failed to start (%1): using the CPU")},
    {"backend.usingCpu", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: using the CPU")},
    {"backend.onlyCpuDevice",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "the only Vulkan device is %1, slower than the Eigen engine: using the "
                                               "CPU (--backend vulkan or ATTNSCOPE_VULKAN_DEVICE uses it anyway)")},
    {"backend.fallback.always", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: computing on the CPU from now on")},
    {"backend.fallback.once",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "%1: computed on the CPU this time (the GPU is still used for the next problem)")},
};

// The codes whose %1 is another error (core's wrappingError()).
const std::string_view kWrapping[] = {"backend.vulkanUnavailable", "backend.startFailed",   "backend.usingCpu",
                                      "backend.fallback.always",   "backend.fallback.once", "vulkan.deviceLost",
                                      "vulkan.lostEarlier"};

// core's fixed phrases that arrive as arguments: what was expected, what a JSON value was,
// what a memory refusal was for. Listed for lupdate; an argument not listed stays as it is.
[[maybe_unused]] const char *const kTerms[] = {
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a whole number of at least 1"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a number"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a finite number"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix (an array of rows of numbers)"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix (an array of rows of numbers) or {\"npy\": \"file.npy\"}"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a row (an array of numbers)"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "{\"npy\": \"relative/path.npy\"} with nothing else"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array of numbers"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array of strings"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a string"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an object"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an object with \"tokens\" and \"x\""),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an object with q, k, v and o"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "true or false"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array of true/false (true = real token)"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a JSON object with \"format\": \"attnscope\""),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "one label per row of the matrix x"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix with one row per token"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "nothing"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "query tokens x key tokens"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "its inputs and intermediate tensors"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "the attention values as float32"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "the CSV text"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "the pooled computation"),
};

QString translatedArgument(const std::string &arg)
{
    const QString text = QString::fromStdString(arg);
    // typeName()'s two phrases with a value in them.
    for (const char *lead : {"the string ", "the number "}) {
        if (text.startsWith(QLatin1String(lead))) {
            const QString value = text.mid(int(std::char_traits<char>::length(lead)));
            return lead[4] == 's' ? QCoreApplication::translate("attnscope::CoreErrorTerm", "the string %1").arg(value)
                                  : QCoreApplication::translate("attnscope::CoreErrorTerm", "the number %1").arg(value);
        }
    }
    return QCoreApplication::translate("attnscope::CoreErrorTerm", arg.c_str());
}

// %1..%9 replaced in one pass, so an argument holding "%2" stays as it is.
QString fill(const QString &pattern, const QStringList &args)
{
    QString out;
    out.reserve(pattern.size() + 32);
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern[i];
        if (c == QLatin1Char('%') && i + 1 < pattern.size() && pattern[i + 1] >= QLatin1Char('1') &&
            pattern[i + 1] <= QLatin1Char('9')) {
            const qsizetype n = pattern[i + 1].unicode() - '1';
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

} // namespace

QString errorText(const Error &error)
{
    const QString message = QString::fromStdString(error.message);
    if (error.code.empty())
        return message;
    const auto entry =
        std::find_if(std::begin(kEntries), std::end(kEntries), [&](const Entry &e) { return error.code == e.code; });
    const char *coreTemplate = errorTemplate(error.code);
    if (entry == std::end(kEntries) || !coreTemplate)
        return message;
    const std::string english = fillErrorTemplate(coreTemplate, error.args);
    if (error.message.size() < english.size() ||
        error.message.compare(error.message.size() - english.size(), english.size(), english) != 0)
        return message; // changed after it was made: the English text is all there is
    const QString prefix = QString::fromStdString(error.message.substr(0, error.message.size() - english.size()));
    QStringList args;
    for (const std::string &a : error.args)
        args << translatedArgument(a);
    // A notice around another error (core's wrappingError()): that error translated too.
    if (error.args.size() >= 2 &&
        std::find(std::begin(kWrapping), std::end(kWrapping), error.code) != std::end(kWrapping)) {
        Error inner{error.args[0], error.kind, error.args[1],
                    std::vector<std::string>(error.args.begin() + 2, error.args.end())};
        args[0] = errorText(inner);
    }
    return prefix + fill(QCoreApplication::translate("attnscope::CoreError", entry->english), args);
}

QList<ErrorTextTemplate> errorTextTemplates()
{
    QList<ErrorTextTemplate> out;
    for (const Entry &e : kEntries)
        out.append({QString::fromLatin1(e.code), QString::fromUtf8(e.english)});
    return out;
}

} // namespace attnscope
