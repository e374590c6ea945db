// The Vulkan engine against the CPU engine in one process (not a test: it prints figures), with
// no Qt, so it runs on a machine that has a GPU driver and nothing else of AttnScope's
// dependencies. For every case it runs both engines on the same input, prints the median time of
// each, their ratio, the largest difference between their results (the check that the GPU's
// numbers are right on that driver), the device transfers of the Vulkan forward and the peak
// resident memory so far:
//   attention  compute() with every map kept, d = 512, H = 8 (the inspection size)
//   pooled     computePooled(), d = 512, H = 8, causal, 1024 x 1024 cells (the long path)
//   gpt2       a GPT-2-small-shaped forward, random weights, every attention kept: the Vulkan
//              forward engine (weights loaded once first; the load is a row of its own) and,
//              as "gpt2/loop", the layer loop with only the attention on Vulkan
//   qwen       a Qwen2.5-0.5B-shaped forward (24 layers, 896 wide, 14 heads, 2 key/value heads),
//              the same three ways
//
//   bench_vulkan [attention|pooled|gpt2|qwen ...]   (default: all)
//   ATTNSCOPE_VULKAN_DEVICE=NAME picks the device.

#include "core/attention/CpuBackend.h"
#include "core/attention/RandomProblem.h"
#include "core/io/MemoryLimits.h"
#include "core/models/ForwardEngine.h"
#include "core/models/TransformerModel.h"
#include "gpu/VulkanBackend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace attnscope;

namespace {

// The median wall time of `runs` calls after one warm-up call; false when a call failed.
bool medianMs(int runs, const std::function<bool()> &call, double &median)
{
    std::vector<double> times;
    for (int r = 0; r <= runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        if (!call())
            return false;
        if (r > 0)
            times.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    median = times[times.size() / 2];
    return true;
}

double maxDiff(const float *a, const float *b, std::size_t n)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        worst = std::max(worst, double(std::abs(a[i] - b[i])));
    return worst;
}

std::string transfers(const AttentionBackend &backend, const DeviceTransfers &before)
{
    const auto now = backend.transfers();
    if (!now)
        return "-";
    char text[160];
    std::snprintf(text, sizeof text, "submissions %llu, uploaded %.1f MiB, read back %.1f MiB",
                  (unsigned long long)(now->submissions - before.submissions),
                  double(now->uploaded - before.uploaded) / 1048576.0,
                  double(now->readBack - before.readBack) / 1048576.0);
    return text;
}

void row(const char *name, std::int64_t t, double cpuMs, double vkMs, double diff, const std::string &moved)
{
    std::printf("| %-9s | %6lld | %10.1f | %10.1f | %6.2f | %9.2e | %8.0f | %s |\n", name, (long long)t, cpuMs, vkMs,
                cpuMs / vkMs, diff, peakResidentMiB(), moved.c_str());
    std::fflush(stdout);
}

void fail(const char *what, const std::string &message)
{
    std::printf("| %s | failed: %s |\n", what, message.c_str());
    std::fflush(stdout);
}

void attentionCases(CpuBackend &cpu, VulkanBackend &vk)
{
    for (std::int64_t t : {256, 1024, 4096}) {
        RandomProblemOptions options;
        options.tokens = int(t);
        options.modelDim = 512;
        options.heads = 8;
        const AttentionProblem problem = randomProblem(options);
        Result<AttentionTrace> a = Error{""}, b = Error{""};
        double cpuMs = 0, vkMs = 0;
        const int runs = t <= 1024 ? 5 : 2;
        if (!medianMs(
                runs, [&] { return bool(a = cpu.compute(problem)); }, cpuMs))
            return fail("attention cpu", a.message());
        const DeviceTransfers before = vk.transfers().value_or(DeviceTransfers{});
        if (!medianMs(
                runs, [&] { return bool(b = vk.compute(problem)); }, vkMs))
            return fail("attention vulkan", b.message());
        double diff = maxDiff(a->output.data(), b->output.data(), std::size_t(a->output.size()));
        for (size_t h = 0; h < a->weights.size(); ++h)
            diff =
                std::max(diff, maxDiff(a->weights[h].data(), b->weights[h].data(), std::size_t(a->weights[h].size())));
        row("attention", t, cpuMs, vkMs, diff, transfers(vk, before) + " (" + std::to_string(runs + 1) + " runs)");
    }
}

void pooledCases(CpuBackend &cpu, VulkanBackend &vk)
{
    for (std::int64_t t : {4096, 16384}) {
        RandomProblemOptions options;
        options.tokens = int(t);
        options.modelDim = 512;
        options.heads = 8;
        options.causal = true;
        const AttentionProblem problem = randomProblem(options);
        PoolOptions pool;
        pool.bins = 1024;
        Result<PooledResult> a = Error{""}, b = Error{""};
        double cpuMs = 0, vkMs = 0;
        if (!medianMs(
                1, [&] { return bool(a = cpu.computePooled(problem, pool)); }, cpuMs))
            return fail("pooled cpu", a.message());
        const DeviceTransfers before = vk.transfers().value_or(DeviceTransfers{});
        if (!medianMs(
                1, [&] { return bool(b = vk.computePooled(problem, pool)); }, vkMs))
            return fail("pooled vulkan", b.message());
        double diff = 0;
        for (size_t h = 0; h < a->pooled.size(); ++h)
            diff = std::max(diff, maxDiff(a->pooled[h].data(), b->pooled[h].data(), std::size_t(a->pooled[h].size())));
        row("pooled", t, cpuMs, vkMs, diff, transfers(vk, before) + " (2 runs)");
    }
}

MatrixF randomMatrix(Eigen::Index rows, Eigen::Index cols, float scale)
{
    return MatrixF::Random(rows, cols) * scale;
}

VectorF randomVector(Eigen::Index n, float scale, float offset = 0)
{
    return (VectorF::Random(n) * scale).array() + offset;
}

// Random weights of any decoder shape the config gives (LayerNorm with biases for GPT-2, RMSNorm
// and a gated MLP for Qwen 2).
TransformerWeights randomWeights(const ModelConfig &c)
{
    const bool gpt2 = c.type == ModelType::Gpt2;
    const Eigen::Index d = c.width, inner = c.intermediate, qw = Eigen::Index(c.heads) * c.headDim(),
                       kw = Eigen::Index(c.keyValueHeads()) * c.headDim();
    auto norm = [&]() -> LayerNormWeights {
        return {randomVector(d, 0.1f, 1), gpt2 ? randomVector(d, 0.05f) : VectorF()};
    };
    TransformerWeights w;
    w.tokenEmbedding = randomMatrix(c.vocabSize, d, 0.1f);
    if (gpt2)
        w.positionEmbedding = randomMatrix(c.positions, d, 0.05f);
    w.finalNorm = norm();
    for (int l = 0; l < c.layers; ++l) {
        TransformerLayer layer;
        AttentionWeights &a = layer.attention;
        a.q = randomMatrix(d, qw, 0.1f);
        a.k = randomMatrix(d, kw, 0.1f);
        a.v = randomMatrix(d, kw, 0.05f);
        a.o = randomMatrix(qw, d, 0.05f);
        if (gpt2 || c.qkvBias) {
            a.qBias = randomVector(qw, 0.02f);
            a.kBias = randomVector(kw, 0.02f);
            a.vBias = randomVector(kw, 0.02f);
        }
        if (gpt2)
            a.oBias = randomVector(d, 0.02f);
        layer.norm1 = norm();
        layer.norm2 = norm();
        layer.up = randomMatrix(d, inner, 0.05f);
        if (!gpt2)
            layer.gate = WeightMatrix(randomMatrix(d, inner, 0.05f));
        layer.down = randomMatrix(inner, d, 0.03f);
        if (gpt2) {
            layer.upBias = randomVector(inner, 0.02f);
            layer.downBias = randomVector(d, 0.02f);
        }
        w.layers.push_back(std::move(layer));
    }
    return w;
}

std::string perForward(const DeviceTransfers &before, const VulkanBackend &vk, int calls)
{
    DeviceTransfers per = before;
    if (auto now = vk.transfers()) { // per forward: the calls' total over their count
        per.submissions = (now->submissions - before.submissions) / std::uint64_t(calls);
        per.uploaded = (now->uploaded - before.uploaded) / std::uint64_t(calls);
        per.readBack = (now->readBack - before.readBack) / std::uint64_t(calls);
    }
    char moved[160];
    std::snprintf(moved, sizeof moved, "per forward: submissions %llu, uploaded %.1f MiB, read back %.1f MiB",
                  (unsigned long long)per.submissions, double(per.uploaded) / 1048576.0,
                  double(per.readBack) / 1048576.0);
    return moved;
}

// A model's forward three ways: the CPU engine; the Vulkan forward engine (weights loaded once
// before, row "NAME"); the layer loop with only the attention on Vulkan (row "NAME/loop", what a
// forward was before the engine).
void modelCases(const char *name, const char *configJson, std::vector<std::int64_t> lengths, CpuBackend &cpu,
                VulkanBackend &vk)
{
    auto config = parseModelConfig(configJson, name);
    if (!config)
        return fail(name, config.message());
    auto model = TransformerModel::fromWeights(*config, randomWeights(*config));
    if (!model)
        return fail(name, model.message());
    const DeviceTransfers atLoad = vk.transfers().value_or(DeviceTransfers{});
    const auto start = std::chrono::steady_clock::now();
    if (Status s = vk.forwardEngine()->load(*model); !s)
        return fail(name, s.message());
    const double loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("| %s load | | | %.1f | | | %.0f | %s |\n", name, loadMs, peakResidentMiB(),
                transfers(vk, atLoad).c_str());
    for (std::int64_t t : lengths) {
        std::vector<std::int32_t> ids(static_cast<std::size_t>(t));
        for (std::int64_t i = 0; i < t; ++i)
            ids[std::size_t(i)] = std::int32_t((i * 7919) % config->vocabSize);
        auto input = model->input(ids);
        if (!input)
            return fail(name, input.message());
        const int runs = t <= 256 ? 3 : 1;
        Result<std::shared_ptr<const ModelRun>> a = Error{""}, b = Error{""}, c = Error{""};
        double cpuMs = 0, vkMs = 0, loopMs = 0;
        if (!medianMs(
                runs, [&] { return bool(a = model->forward(*input, cpu)); }, cpuMs))
            return fail(name, a.message());
        DeviceTransfers before = vk.transfers().value_or(DeviceTransfers{});
        if (!medianMs(
                runs, [&] { return bool(b = model->forward(*input, vk)); }, vkMs))
            return fail(name, b.message());
        row(name, t, cpuMs, vkMs, maxDiff((*a)->attentions.data(), (*b)->attentions.data(), (*a)->attentions.size()),
            perForward(before, vk, runs + 1));
        before = vk.transfers().value_or(DeviceTransfers{});
        if (!medianMs(
                runs, [&] { return bool(c = model->forwardLayerByLayer(*input, vk)); }, loopMs))
            return fail(name, c.message());
        const std::string loop = std::string(name) + "/loop";
        row(loop.c_str(), t, cpuMs, loopMs,
            maxDiff((*a)->attentions.data(), (*c)->attentions.data(), (*a)->attentions.size()),
            perForward(before, vk, runs + 1));
    }
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> cases(argv + 1, argv + argc);
    if (cases.empty())
        cases = {"attention", "pooled", "gpt2", "qwen"};
    CpuBackend cpu;
    auto vk = VulkanBackend::create();
    if (!vk) {
        std::fprintf(stderr, "vulkan: %s\n", vk.message().c_str());
        return 1;
    }
    std::printf("cpu: %s\nvulkan: %s\n\n", cpu.deviceName().c_str(), (*vk)->deviceName().c_str());
    std::printf(
        "| case      |      T |     cpu_ms |  vulkan_ms | cpu/vk | max_diff  | rss_mib  | vulkan transfers |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const std::string &c : cases) {
        if (c == "attention")
            attentionCases(cpu, **vk);
        else if (c == "pooled")
            pooledCases(cpu, **vk);
        else if (c == "gpt2")
            modelCases("gpt2", R"({"model_type": "gpt2"})", {256, 1024}, cpu, **vk);
        else if (c == "qwen")
            modelCases("qwen", R"({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24,
                "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
                "vocab_size": 151936, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
                "rms_norm_eps": 1e-6, "tie_word_embeddings": true})",
                       {256, 1024, 4096}, cpu, **vk);
        else {
            std::fprintf(stderr, "unknown case %s (attention, pooled, gpt2, qwen)\n", c.c_str());
            return 2;
        }
    }
    return 0;
}
