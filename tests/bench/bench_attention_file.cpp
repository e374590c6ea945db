// Opening a large attention file (not a test: it prints figures). Writes a real-looking
// 12 x 12 x 512 x 512 float16 .npy (72 MiB: causal softmax rows, previous-token, first-token
// and local heads), then times opening it (memory-mapped, values checked), every head's
// statistics and the rollout, and reports the peak resident memory against the file's size.
//
//   bench_attention_file [layers heads tokens]

#include "core/analysis/AttentionStats.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"
#include "core/io/MemoryLimits.h"

#include <Eigen/Core>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace attnscope;

namespace {

double msSince(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Streams the file row by row, so writing it does not raise this process's peak.
std::string writeFile(const std::string &dir, int layers, int heads, int t)
{
    const std::string path = dir + "/attention.npy";
    std::string header = npyHeader({layers, heads, t, t});
    header.replace(header.find("<f4"), 3, "<f2");
    std::ofstream out(path, std::ios::binary);
    out << header;
    std::mt19937 rng(7);
    std::normal_distribution<float> noise(0.0f, 0.7f);
    std::vector<float> logits(static_cast<std::size_t>(t), 0.0f);
    std::vector<Eigen::half> row(static_cast<std::size_t>(t));
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < t; ++i) {
                float max = -1e30f;
                for (int j = 0; j <= i; ++j) {
                    float x = noise(rng);
                    switch ((l * heads + h) % 4) {
                    case 0:
                        x += j == i - 1 ? 6.0f : 0.0f;
                        break;
                    case 1:
                        x += j == 0 ? 5.0f : 0.0f;
                        break;
                    case 2:
                        x -= 0.3f * float(i - j);
                        break;
                    default:
                        break;
                    }
                    logits[std::size_t(j)] = x;
                    max = std::max(max, x);
                }
                float sum = 0.0f;
                for (int j = 0; j <= i; ++j)
                    sum += (logits[std::size_t(j)] = std::exp(logits[std::size_t(j)] - max));
                for (int j = 0; j < t; ++j)
                    row[std::size_t(j)] = Eigen::half(j <= i ? logits[std::size_t(j)] / sum : 0.0f);
                out.write(reinterpret_cast<const char *>(row.data()), std::streamsize(row.size() * 2));
            }
    return path;
}

} // namespace

int main(int argc, char **argv)
{
    const int layers = argc > 3 ? std::atoi(argv[1]) : 12, heads = argc > 3 ? std::atoi(argv[2]) : 12;
    const int tokens = argc > 3 ? std::atoi(argv[3]) : 512;
    const auto dir = std::filesystem::temp_directory_path() / ("attnscope-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = writeFile(dir.string(), layers, heads, tokens);
    const double fileMiB = double(std::filesystem::file_size(path)) / (1 << 20);
    const double baseline = peakResidentMiB();

    auto t0 = std::chrono::steady_clock::now();
    AttentionFileInfo info;
    auto set = readAttentionFile(path, &info);
    if (!set) {
        std::fprintf(stderr, "%s\n", set.message().c_str());
        return 1;
    }
    const double openMs = msSince(t0);
    t0 = std::chrono::steady_clock::now();
    const auto stats = headStatistics(*set);
    const double statsMs = msSince(t0);
    t0 = std::chrono::steady_clock::now();
    auto rollout = attentionRollout(*set);
    const double rolloutMs = msSince(t0);
    const double peak = peakResidentMiB();

    std::printf("file: [%d, %d, %d, %d] %s %s, %.1f MiB%s\n", layers, heads, tokens, tokens, info.dtype.c_str(),
                info.container.c_str(), fileMiB, info.mapped ? " (mapped)" : "");
    std::printf("open (map + check every value): %.1f ms\n", openMs);
    std::printf("statistics of %zu heads: %.1f ms\n", stats.size(), statsMs);
    std::printf("rollout over %d layers: %.1f ms\n", layers, rolloutMs);
    std::printf("peak RSS: %.1f MiB (%.1f MiB before opening), %.2fx the file\n", peak, baseline, peak / fileMiB);
    std::filesystem::remove_all(dir);
    return rollout.ok() ? 0 : 1;
}
