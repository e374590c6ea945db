#pragma once

// Comparison as its own source (issue 26): two runs (two texts on one model, one text on two
// models of the same shape, a project before and after edits, two attention files) aligned by
// token position and subtracted, B − A, with the statistics of both and of their difference.

#include "core/Result.h"
#include "core/analysis/AttentionSet.h"
#include "core/analysis/AttentionStats.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

// Two attention sets compared cell by cell: B − A, signed.
struct AttentionComparison {
    AttentionSet a, b; // as given (labels kept)
    // [samples, L, H, Tq, Tk] float32, b − a, computed cell by cell in double then rounded to float;
    // isSigned(). Labels: queryLabels and keyLabels (below); word boundaries those of A and B where
    // they agree, else one word per token.
    AttentionSet difference;
    // The difference's labels: the shared token where A and B agree at a position, "A→B" ("cat→dog")
    // where they differ (an unlabelled side reads t0, t1, ...); empty when neither side has labels.
    std::vector<std::string> queryLabels, keyLabels;
    // The difference's values back to back, [samples, L, H, Tq, Tk] row-major (what `difference`
    // reads): an exporter writes them as they are.
    std::shared_ptr<const std::vector<float>> differenceValues;
};

// Aligns A and B by token position and subtracts. Refused with one line giving the reason where
// they cannot be aligned (ErrorKind::InvalidInput):
//  - different layer or head counts: "cannot compare: A has 12 layers of 12 heads, B has 2 layers
//    of 4 heads";
//  - different token counts: "cannot compare: A has 7 tokens and B has 9; the two texts must
//    tokenise to the same number of tokens to be aligned position by position", and when one's
//    labels begin with all of the other's, "...; B is A followed by 2 more tokens" (queries and keys
//    are named apart where either set is not square: "A has 5 keys and B has 6; ...");
//  - different sample counts, or a set with no maps.
// A set computed from queries and keys (isFromQk), or two sets whose whole maps exceed `budget`
// bytes three times over (A, B and the difference, as float32), are refused with what they would
// need (ErrorKind::TooLarge). Tokens that differ at a position are allowed (two wordings of one
// prompt): the labels say so. budget: 0 for memoryBudget().
Result<AttentionComparison> compareSets(const AttentionSet &a, const AttentionSet &b, std::int64_t budget = 0);

// Per (sample, layer, head): the statistics of A and of B (headStatistics) and of the difference.
struct HeadDifference {
    int sample = 0, layer = 0, head = 0;
    HeadStats a, b;
    double meanAbs = 0;        // mean over all cells of |b − a|
    double maxAbs = 0;         // max |b − a|
    double totalVariation = 0; // mean over rows of 0.5 Σ_j |b_ij − a_ij| (0: same rows; 1: disjoint)
};

// One HeadDifference per (sample, layer, head), in that order; the differences summed in double
// from A's and B's values (not from the rounded difference).
std::vector<HeadDifference> comparisonStatistics(const AttentionComparison &c);

} // namespace attnscope
