#include "core/attention/RandomProblem.h"

#include "core/formats/ProjectFile.h"

#include <cmath>
#include <numbers>

namespace attnscope {

namespace {

// SplitMix64: tiny, fast, and the same numbers everywhere.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next()
    {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; } // [0, 1)
    double normal()
    {
        // Box-Muller; 1 - uniform() is in (0, 1], so the log is finite.
        const double u = 1.0 - uniform(), v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
    }
};

} // namespace

MatrixF initMatrix(Eigen::Index rows, Eigen::Index cols, InitKind kind, std::uint64_t seed, double stddev)
{
    MatrixF m(rows, cols);
    SplitMix64 rng{seed};
    for (Eigen::Index i = 0; i < m.size(); ++i) {
        double x = 0.0;
        switch (kind) {
        case InitKind::Xavier:
            x = (2.0 * rng.uniform() - 1.0) * std::sqrt(6.0 / double(rows + cols));
            break;
        case InitKind::Kaiming:
            x = rng.normal() * std::sqrt(2.0 / double(std::max<Eigen::Index>(rows, 1)));
            break;
        case InitKind::Gaussian:
            x = rng.normal() * stddev;
            break;
        case InitKind::Zeros:
            break;
        }
        m.data()[i] = float(x);
    }
    return m;
}

AttentionProblem randomProblem(const RandomProblemOptions &o)
{
    AttentionProblem p;
    p.spec.heads = o.heads;
    p.spec.headDimQK = p.spec.headDimV = int(std::max<Eigen::Index>(1, o.modelDim / o.heads));
    const Eigen::Index width = Eigen::Index(o.heads) * p.spec.headDimQK;
    p.xq = initMatrix(o.tokens, o.modelDim, InitKind::Gaussian, o.seed);
    p.weights.q = initMatrix(o.modelDim, width, InitKind::Xavier, o.seed + 1);
    p.weights.k = initMatrix(o.modelDim, width, InitKind::Xavier, o.seed + 2);
    p.weights.v = initMatrix(o.modelDim, width, InitKind::Xavier, o.seed + 3);
    if (o.outputProjection)
        p.weights.o = initMatrix(width, o.modelDim, InitKind::Xavier, o.seed + 4);
    if (o.biases) {
        p.weights.qBias = initMatrix(1, width, InitKind::Gaussian, o.seed + 5, 0.1);
        p.weights.kBias = initMatrix(1, width, InitKind::Gaussian, o.seed + 6, 0.1);
        p.weights.vBias = initMatrix(1, width, InitKind::Gaussian, o.seed + 7, 0.1);
        if (o.outputProjection)
            p.weights.oBias = initMatrix(1, o.modelDim, InitKind::Gaussian, o.seed + 8, 0.1);
    }
    p.mask.causal = o.causal;
    return p;
}

std::vector<std::string> numberedTokens(Eigen::Index count)
{
    std::vector<std::string> labels;
    labels.reserve(size_t(count));
    for (Eigen::Index i = 0; i < count; ++i)
        labels.push_back(std::string("t").append(std::to_string(i)));
    return labels;
}

Project randomProject(const RandomProblemOptions &options)
{
    Project project;
    project.problem = randomProblem(options);
    project.queryTokens = numberedTokens(options.tokens);
    return project;
}

} // namespace attnscope
