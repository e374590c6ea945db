// Fuzz target for the .npy reader (parseNpy): any bytes must give an array whose data matches
// its shape, or a one-line error; never a crash, an exception or a huge allocation.

#include "core/formats/Npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    const std::string bytes(reinterpret_cast<const char *>(data), size);
    // The float32 reader of project references (float16 too) holds to the same rules.
    if (auto floats = parseNpyFloat(bytes);
        floats && (std::int64_t(floats->data.size()) != floats->size() || floats->data.size() > size)) {
        std::fprintf(stderr, "fuzz_npy: parseNpyFloat: %zu values for a shape of %lld\n", floats->data.size(),
                     (long long)floats->size());
        std::abort();
    } else if (!floats) {
        for (unsigned char c : floats.message())
            if (c < 0x20 || c == 0x7f) {
                std::fprintf(stderr, "fuzz_npy: error message is not one clean line: %s\n", floats.message().c_str());
                std::abort();
            }
    }
    auto array = parseNpy(bytes);
    if (!array) {
        for (unsigned char c : array.message())
            if (c < 0x20 || c == 0x7f) {
                std::fprintf(stderr, "fuzz_npy: error message is not one clean line: %s\n", array.message().c_str());
                std::abort();
            }
        return 0;
    }
    if (std::int64_t(array->data.size()) != array->size() || array->data.size() > size) {
        std::fprintf(stderr, "fuzz_npy: %zu values for a shape of %lld\n", array->data.size(),
                     (long long)array->size());
        std::abort();
    }
    return 0;
}
