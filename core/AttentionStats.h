#pragma once

#include "core/AttentionSet.h"
#include "core/Result.h"
#include "core/Tensor.h"

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
    double first = 0.0;             // mean over rows of w_i0
    std::optional<double> self;     // mean of w_ii; square maps only
    std::optional<double> previous; // mean of w_i,i-1 over i >= 1; absent when Tq = 1
};

// One HeadStats per (sample, layer, head), in that order.
std::vector<HeadStats> headStatistics(const AttentionSet &set);
HeadStats headStatistics(const AttentionSet &set, int sample, int layer, int head);

// The mean over heads of one layer, Tq by Tk.
MatrixD meanOverHeads(const AttentionSet &set, int sample, int layer);

// Attention rollout (Abnar & Zuidema 2020): per layer the mean over heads A, A' = 0.5 A +
// 0.5 I with rows renormalised, rollout = A'_L ... A'_1 (T by T, double). Needs square maps.
Result<MatrixD> attentionRollout(const AttentionSet &set, int sample = 0);

// Word-level attention from sub-word pieces (Clark et al. 2019): a key word's weight is the
// sum over its pieces, a query word's row the mean over its pieces, so rows still sum to 1.
// queryWordOf / keyWordOf map each token to its word (see wordsFromTokens).
MatrixD mergeWords(const MatrixD &map, const std::vector<int> &queryWordOf, const std::vector<int> &keyWordOf);

// Labels of merged words: the pieces joined, "##" dropped and GPT-2's "Ġ" marker removed.
std::vector<std::string> mergedWordLabels(const std::vector<std::string> &tokens, const std::vector<int> &wordOf);

} // namespace attnscope
