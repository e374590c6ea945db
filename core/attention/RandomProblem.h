#pragma once

#include "core/attention/AttentionProblem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

struct Project;

// How a new or re-initialised matrix is filled.
enum class InitKind {
    Xavier,   // uniform in ±sqrt(6 / (rows + cols))
    Kaiming,  // normal with stddev sqrt(2 / rows)
    Gaussian, // normal with the given stddev
    Zeros,
};

// Deterministic for a given seed on every platform (no std::*_distribution, whose output
// differs between standard libraries).
MatrixF initMatrix(Eigen::Index rows, Eigen::Index cols, InitKind kind, std::uint64_t seed, double stddev = 1.0);

struct RandomProblemOptions {
    Eigen::Index tokens = 16;   // Tq (and Tk in self-attention)
    Eigen::Index modelDim = 64; // d_q = d_kv = d_out
    int heads = 4;              // headDimQK = headDimV = modelDim / heads
    bool causal = false;
    bool outputProjection = true;
    bool biases = true;
    std::uint64_t seed = 1;
};

// A self-attention problem of the given size with Xavier weights and Gaussian inputs,
// shaped like nn.MultiheadAttention (for benchmarks and tests).
AttentionProblem randomProblem(const RandomProblemOptions &options);

// Labels "t0", "t1", ... for tokens that have no words (random and benchmark problems).
std::vector<std::string> numberedTokens(Eigen::Index count);

// randomProblem() as a project, its tokens labelled by numberedTokens().
Project randomProject(const RandomProblemOptions &options);

} // namespace attnscope
