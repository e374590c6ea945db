// Fuzz target for the attention-file readers (parseAttentionBytes): .npy, .npz (the ZIP
// directory, stored and deflated members) and .safetensors (the header), told apart by their
// first bytes. Any bytes must give an attention set whose every value can be read, or a
// one-line error; never a crash, an exception or an allocation the input does not justify.

#include "core/AttentionFile.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    auto bytes = std::make_shared<const std::string>(reinterpret_cast<const char *>(data), size);
    auto set = parseAttentionBytes(*bytes, bytes);
    if (!set) {
        for (unsigned char c : set.message())
            if (c < 0x20 || c == 0x7f) {
                std::fprintf(stderr, "fuzz_attentionfile: error message is not one clean line: %s\n",
                             set.message().c_str());
                std::abort();
            }
        return 0;
    }
    // Every value must be readable and finite (the reader refuses NaN and Inf).
    float sum = 0.0f;
    for (int l = 0; l < set->layers(); ++l)
        for (int h = 0; h < set->heads(); ++h)
            for (std::int64_t i = 0; i < set->queries(); ++i)
                for (std::int64_t j = 0; j < set->keys(); ++j) {
                    const float v = set->at(0, l, h, i, j);
                    if (!(v == v) || v - v != 0.0f) {
                        std::fprintf(stderr, "fuzz_attentionfile: non-finite value accepted\n");
                        std::abort();
                    }
                    sum += v;
                }
    if (set->valueBytes() > std::int64_t(size) * 4 + 64) {
        std::fprintf(stderr, "fuzz_attentionfile: %lld value bytes from a %zu-byte input\n",
                     (long long)set->valueBytes(), size);
        std::abort();
    }
    return sum == 12345.0f ? 1 : 0;
}
