#pragma once

#include "core/attention/AttentionProblem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

// The softmax and mask rules of design.md ("Semantics"), written once. Everything that
// explains a weight (the heatmap's hover text, the step-by-step view, `attnscope-cli show`)
// asks here and only phrases the answer, so the explanations cannot drift from each other
// or from what the backends compute.

// Why a softmax weight has its value.
enum class WeightCase {
    Softmax,         // an allowed key of a row with allowed keys: exp(s - rowMax) / row sum
    Masked,          // a forbidden key of a row with allowed keys: exactly 0
    EmptyRowZero,    // no key of the row is allowed, fill -inf: 0 (PyTorch gives NaN); output row 0
    EmptyRowUniform, // no key of the row is allowed, fill -1e9: every logit is the fill, so 1 / Tk
};

struct WeightRule {
    WeightCase kind = WeightCase::Softmax;
    MaskFill fill = MaskFill::NegInf;
    double maskedLogit = 0.0; // what a forbidden cell's logit becomes: -inf or -1e9
    bool fixed = false;       // the rule alone gives the weight, without the row's scores
    double weight = 0.0;      // that weight when fixed: 0 or 1 / keys
    double rowSum = 1.0;      // what the row's weights add up to: 1, or 0 (empty row under -inf)
};

// The rule for one cell: the mask fill, whether the cell is allowed, whether its row has no
// allowed key at all, and the number of keys Tk of the row.
WeightRule weightRule(MaskFill fill, bool allowed, bool rowEmpty, std::int64_t keys);

// The logit a masked cell gets: -infinity or kNegLargeFill.
double maskedLogit(MaskFill fill);
// As written in a project file and in formulas: "-inf" or "-1e9".
const char *maskFillText(MaskFill fill);

// One row's softmax worked through in double precision, as the step view prints it.
struct SoftmaxRowSteps {
    WeightRule rule;          // of the cell asked about
    double rowMax = 0.0;      // the largest masked logit, the sink's included (-inf when nothing is allowed under -inf)
    std::vector<double> exps; // [Tk] exp(logit - rowMax); 0 where the rule says so
    double sinkExp = 0.0;     // exp(sink - rowMax) where the head has a sink, else 0
    double sum = 0.0;         // sum of exps and sinkExp, as computed (not rounded to 1)
    double weight = 0.0;      // the cell's weight: exps[key] / sum, or the rule's fixed weight
    double sinkShare = 0.0;   // the sink's share of the row, sinkExp / sum (what the row lacks of 1)
};

// scores: the Tk scaled (and soft-capped) scores of the row; allowed: its Tk mask entries (null:
// all allowed); key: the cell explained, in [0, n); sink: the head's sink logit, or null. A sink
// joins the max and the sum, never masked, and its share is dropped from the row.
SoftmaxRowSteps softmaxRowSteps(const float *scores, const std::uint8_t *allowed, std::int64_t n, MaskFill fill,
                                std::int64_t key, const double *sink = nullptr);

// Which projection a formula is for.
enum class Projection { Query, Key, Value, Output };

// The formula of a projection exactly as computed, bias included when there is one:
// "Q = X·W_Q + b_Q", "K = X_kv·W_K" (cross-attention), "output = context·W_O + b_O". UTF-8.
// separateValue: a cross-attention problem with its own value input, "V = X_v·W_V".
std::string projectionFormula(Projection p, AttentionMode mode, bool bias, bool separateValue = false);

// What the rows of the weights add up to, as a sentence-free fact: true when every row sums
// to 1, false when some rows (empty rows under -inf) sum to 0.
bool everyRowSumsToOne(MaskFill fill, const std::vector<bool> &emptyRows);

} // namespace attnscope
