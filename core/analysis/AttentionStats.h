#pragma once

#include "core/Result.h"
#include "core/Tensor.h"
#include "core/analysis/AttentionSet.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope {

// Per-head statistics of one attention map (design.md, "Contract: real models and imported
// attention"). Sums run in double whatever the storage. Rows are query tokens.
struct HeadStats {
    int sample = 0, layer = 0, head = 0;
    double entropy = 0.0;           // mean over non-empty rows of -sum_j w log w (natural log)
    double distance = 0.0;          // mean over rows of sum_j w_ij |i - j|
    double confidence = 0.0;        // mean over rows of max_j w_ij
    double first = 0.0;             // mean over rows of w_i0: the "sink mass" on the first token
    std::optional<double> self;     // mean of w_ii; square maps only
    std::optional<double> previous; // mean of w_i,i-1 over i >= 1; absent when Tq = 1
    // The spread of |i - j|: mean over non-empty rows of the weighted standard deviation
    // sqrt(sum_j p_ij (|i-j| - m_i)^2) with p_ij = w_ij / sum_j w_ij and m_i = sum_j p_ij |i-j|.
    // 0 for a head that looks at one distance only (all on itself, all on the previous token).
    double spread = 0.0;
    // Induction score (Olsson et al. 2022) on a text that repeats: for each query i whose token
    // label occurred earlier as a key label at some j < i, the weight w_i,j+1 summed over the
    // distinct positions j+1 that followed such an earlier occurrence; the mean over those
    // queries. Needs square maps with token labels (keyTokens compared to queryTokens[i]);
    // absent when no token repeats, or without labels.
    std::optional<double> induction;
};

// The metrics "find heads like this" compares, in the order of HeadStats: entropy, distance,
// spread, confidence, first, self, previous, induction.
inline constexpr int kHeadMetricCount = 8;

// How unlike `reference` every head is: the Euclidean distance between their metric vectors
// after standardising each metric over all heads (z-scores: minus its mean, divided by its
// standard deviation; a metric with no spread or absent for either head counts 0). One value
// per entry of `stats`, 0 for the reference itself; sorting ascending gives the most similar
// heads first.
std::vector<double> headDistances(const std::vector<HeadStats> &stats, std::size_t reference);

// One HeadStats per (sample, layer, head), in that order.
std::vector<HeadStats> headStatistics(const AttentionSet &set);
HeadStats headStatistics(const AttentionSet &set, int sample, int layer, int head);

// The mean over heads of one layer, Tq by Tk.
MatrixD meanOverHeads(const AttentionSet &set, int sample, int layer);

// What attention rollout of T x T maps costs: the bytes it holds at its peak (four T x T
// matrices of doubles, saturating) and the operations of its matrix products (2·T³ per layer).
std::int64_t rolloutBytes(std::int64_t tokens);
double rolloutOperations(std::int64_t tokens, int layers);
// The most operations a rollout may take: about a minute of one core's work, past which the GUI's
// worker and `attnscope-cli export --tensor rollout` would run on for minutes or hours.
inline constexpr double kRolloutMaxOperations = 4e12;

// The one check of a rollout's cost, before anything is allocated: Ok, or an Error of kind
// TooLarge naming what it would need, "rollout: needs 11.9 GiB of memory (four 20000 x 20000
// matrices of doubles); this machine allows 3.2 GiB" or "rollout: 24 products of 8192 x 8192
// matrices (one per layer) need about 2.6e13 operations, more than the 4.0e12 allowed (minutes
// of work)". budget: the bytes allowed (core's memoryBudget() unless the caller keeps its own).
Status checkRolloutCost(std::int64_t tokens, int layers, std::int64_t budget);

struct RolloutLimits {
    std::int64_t memoryBudget = 0;             // 0: memoryBudget()
    const std::atomic<bool> *cancel = nullptr; // set: stop with Cancelled within a block of rows
};

// Attention rollout (Abnar & Zuidema 2020): per layer the mean over heads A, A' = 0.5 A +
// 0.5 I with rows renormalised, rollout = A'_L ... A'_1 (T by T, double). Needs square maps,
// and is refused by checkRolloutCost() before anything is allocated when it costs too much.
Result<MatrixD> attentionRollout(const AttentionSet &set, int sample = 0, const RolloutLimits &limits = {});

// Word-level attention from sub-word pieces (Clark et al. 2019): a key word's weight is the
// sum over its pieces, a query word's row the mean over its pieces, so rows still sum to 1.
// queryWordOf / keyWordOf map each token to its word (see wordsFromTokens).
MatrixD mergeWords(const MatrixD &map, const std::vector<int> &queryWordOf, const std::vector<int> &keyWordOf);

// Labels of merged words: the pieces joined, "##" dropped and GPT-2's "Ġ" marker removed.
std::vector<std::string> mergedWordLabels(const std::vector<std::string> &tokens, const std::vector<int> &wordOf);

} // namespace attnscope
