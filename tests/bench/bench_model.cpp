// A GPT-2-small-shaped forward (not a test: it prints figures): 12 layers, 768 wide, 12 heads,
// 3072-wide MLP, a 50257-token vocabulary and 1024 positions, random weights made in memory (no
// file), every attention and hidden state kept as `attnscope-cli model` keeps them. Prints the
// median time per forward and the peak resident memory for each sequence length.
// tests/bench/bench_model_torch.py times transformers' GPT2Model on the same shapes.
//
//   bench_model [T ...]   (default: 128 1024)

#include "core/attention/CpuBackend.h"
#include "core/io/MemoryLimits.h"
#include "core/models/TransformerModel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace attnscope;

namespace {

MatrixF randomMatrix(Eigen::Index rows, Eigen::Index cols, float scale)
{
    return MatrixF::Random(rows, cols) * scale;
}

VectorF randomVector(Eigen::Index n, float scale, float offset = 0)
{
    return (VectorF::Random(n) * scale).array() + offset;
}

TransformerWeights gpt2SmallWeights(const ModelConfig &c)
{
    const Eigen::Index d = c.width, inner = c.intermediate;
    TransformerWeights w;
    w.tokenEmbedding = randomMatrix(c.vocabSize, d, 0.1f);
    w.positionEmbedding = randomMatrix(c.positions, d, 0.05f);
    w.finalNorm = {randomVector(d, 0.1f, 1), randomVector(d, 0.05f)};
    for (int l = 0; l < c.layers; ++l) {
        TransformerLayer layer;
        AttentionWeights &a = layer.attention;
        a.q = randomMatrix(d, d, 0.1f);
        a.k = randomMatrix(d, d, 0.1f);
        a.v = randomMatrix(d, d, 0.05f);
        a.o = randomMatrix(d, d, 0.05f);
        a.qBias = randomVector(d, 0.02f);
        a.kBias = randomVector(d, 0.02f);
        a.vBias = randomVector(d, 0.02f);
        a.oBias = randomVector(d, 0.02f);
        layer.norm1 = {randomVector(d, 0.1f, 1), randomVector(d, 0.05f)};
        layer.norm2 = {randomVector(d, 0.1f, 1), randomVector(d, 0.05f)};
        layer.up = randomMatrix(d, inner, 0.05f);
        layer.upBias = randomVector(inner, 0.02f);
        layer.down = randomMatrix(inner, d, 0.03f);
        layer.downBias = randomVector(d, 0.02f);
        w.layers.push_back(std::move(layer));
    }
    return w;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<int> lengths;
    for (int i = 1; i < argc; ++i)
        lengths.push_back(std::atoi(argv[i]));
    if (lengths.empty())
        lengths = {128, 1024};
    auto config = parseModelConfig(R"({"model_type": "gpt2"})", "bench"); // GPT2Config's defaults: GPT-2 small
    if (!config) {
        std::fprintf(stderr, "%s\n", config.message().c_str());
        return 1;
    }
    auto model = TransformerModel::fromWeights(*config, gpt2SmallWeights(*config));
    if (!model) {
        std::fprintf(stderr, "%s\n", model.message().c_str());
        return 1;
    }
    CpuBackend cpu;
    std::printf("model: GPT-2 small shape (12 layers, 768 wide, 12 heads), random weights; backend: %s\n",
                cpu.deviceName().c_str());
    std::printf("weights_peak_rss_mib: %.1f\n", peakResidentMiB());
    for (int t : lengths) {
        if (t < 1 || t > config->positions) {
            std::fprintf(stderr, "T must be from 1 to %d\n", config->positions);
            return 1;
        }
        std::vector<std::int32_t> ids(static_cast<std::size_t>(t));
        for (int i = 0; i < t; ++i)
            ids[std::size_t(i)] = (i * 7919) % config->vocabSize;
        auto input = model->input(ids);
        const int runs = t <= 256 ? 5 : 3;
        std::vector<double> times;
        for (int r = 0; r <= runs; ++r) { // run 0 warms caches and allocators
            const auto start = std::chrono::steady_clock::now();
            auto run = model->forward(*input, cpu);
            const double ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            if (!run) {
                std::fprintf(stderr, "%s\n", run.message().c_str());
                return 1;
            }
            if (r > 0)
                times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        std::printf("T=%d: median_ms %.1f, min_ms %.1f (%d runs), attentions %.1f MiB, peak_rss_mib %.1f\n", t,
                    times[times.size() / 2], times.front(), runs, 12.0 * 12.0 * t * t * 4 / 1048576.0,
                    peakResidentMiB());
        std::fflush(stdout);
    }
    return 0;
}
