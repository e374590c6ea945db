// Fuzz target for a model folder's JSON: config.json (every model type of the architecture
// table, transformers 4's rope_scaling and 5's rope_parameters, layer_types, text_config) and
// model.safetensors.index.json. The input is split at its first NUL byte into the config and
// the index. Each parses or gives a one-line error; a parsed config is consistent (heads divide,
// one window per layer, rope frequencies finite and one per pair). Never a crash, an exception
// or a hang.

#include "core/models/ModelConfig.h"
#include "core/models/ModelTensors.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void require(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_modelconfig: %s\n", what);
        std::abort();
    }
}

void checkMessage(const std::string &message)
{
    for (unsigned char c : message)
        require(c >= 0x20 && c != 0x7f, "an error message is not one clean line");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view config = input.substr(0, nul);
    const std::string_view index = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);

    auto c = parseModelConfig(config, "m/config.json");
    if (!c) {
        checkMessage(c.message());
    } else {
        require(c->layers > 0 && c->heads > 0 && c->width > 0 && c->headDim() > 0, "a size is not positive");
        require(c->heads % c->keyValueHeads() == 0, "key/value heads do not divide the heads");
        require(c->windows.empty() || std::int64_t(c->windows.size()) == c->layers, "not one window per layer");
        if (c->headDim() <= 4096)
            for (int layer : {0, c->layers - 1}) {
                const auto rope = c->rope(layer, 3 * std::int64_t(c->positions) + 1);
                if (!rope)
                    continue;
                require(rope->frequencies.empty() || rope->frequencies.size() == std::size_t(c->headDim() / 2),
                        "not one rope frequency per pair");
                for (double f : rope->frequencies)
                    require(!std::isnan(f), "a rope frequency is NaN");
            }
    }
    if (!index.empty()) {
        auto map = parseShardIndex(index, "m/model.safetensors.index.json");
        if (!map)
            checkMessage(map.message());
        else
            for (const auto &[name, file] : *map)
                require(!file.empty() && file.find('/') == std::string::npos, "a shard leads out of the folder");
    }
    return 0;
}
