// Fuzz target for pasted blocks of numbers (parseNumberBlock): any text must give a rectangular
// block of finite float32-range numbers, or a one-line error; never a crash or a huge allocation.

#include "core/formats/NumberBlock.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    auto block = parseNumberBlock(std::string_view(reinterpret_cast<const char *>(data), size));
    if (!block) {
        for (unsigned char c : block.message())
            if (c < 0x20 || c == 0x7f) {
                std::fprintf(stderr, "fuzz_numberblock: error message is not one clean line: %s\n",
                             block.message().c_str());
                std::abort();
            }
        return 0;
    }
    if (block->rows <= 0 || block->cols <= 0 ||
        block->values.size() != std::size_t(block->rows) * std::size_t(block->cols) ||
        block->values.size() > kMaxPastedNumbers) {
        std::fprintf(stderr, "fuzz_numberblock: %zu values for %d x %d\n", block->values.size(), block->rows,
                     block->cols);
        std::abort();
    }
    for (double v : block->values)
        if (!std::isfinite(v) || std::abs(v) > double(std::numeric_limits<float>::max())) {
            std::fprintf(stderr, "fuzz_numberblock: %g is no float32 value\n", v);
            std::abort();
        }
    return 0;
}
