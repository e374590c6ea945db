#include "core/attention/AttentionRules.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnscope {

double maskedLogit(MaskFill fill)
{
    return fill == MaskFill::NegInf ? -std::numeric_limits<double>::infinity() : kNegLargeFill;
}

const char *maskFillText(MaskFill fill)
{
    return fill == MaskFill::NegInf ? "-inf" : "-1e9";
}

WeightRule weightRule(MaskFill fill, bool allowed, bool rowEmpty, std::int64_t keys)
{
    WeightRule r;
    r.fill = fill;
    r.maskedLogit = maskedLogit(fill);
    if (rowEmpty) {
        // Every logit of the row is the fill. Under -1e9 the ordinary softmax of equal logits
        // is uniform, which is what code filling with -1e9 really does; under -inf it would
        // be 0/0 (PyTorch: NaN), and AttnScope defines the row as 0 instead.
        if (fill == MaskFill::NegLarge) {
            r.kind = WeightCase::EmptyRowUniform;
            r.weight = keys > 0 ? 1.0 / double(keys) : 0.0;
        } else {
            r.kind = WeightCase::EmptyRowZero;
            r.weight = 0.0;
            r.rowSum = 0.0;
        }
        r.fixed = true;
    } else if (!allowed) {
        // exp(fill - rowMax) with an allowed logit in the row: exactly 0 under -inf, and an
        // underflow to 0 under -1e9.
        r.kind = WeightCase::Masked;
        r.fixed = true;
        r.weight = 0.0;
    }
    return r;
}

SoftmaxRowSteps softmaxRowSteps(const float *scores, const std::uint8_t *allowed, std::int64_t n, MaskFill fill,
                                std::int64_t key, const double *sink)
{
    SoftmaxRowSteps s;
    const bool empty = allowed && std::none_of(allowed, allowed + n, [](std::uint8_t a) { return a != 0; });
    const bool cellAllowed = !allowed || (key >= 0 && key < n && allowed[key] != 0);
    s.rule = weightRule(fill, cellAllowed, empty, n);
    s.exps.assign(size_t(std::max<std::int64_t>(n, 0)), 0.0);
    if (s.rule.kind == WeightCase::EmptyRowZero) {
        s.rowMax = sink ? *sink : -std::numeric_limits<double>::infinity();
        s.sinkExp = s.sum = sink ? 1.0 : 0.0;
        s.sinkShare = sink ? 1.0 : 0.0;
        return s; // every key's exp and weight 0; a sink takes the whole row
    }
    if (sink && s.rule.kind == WeightCase::EmptyRowUniform) {
        // The fill's equal logits compete with the sink: the row is uniform but not 1/Tk.
        s.rule.fixed = false;
    }
    std::vector<double> logits(size_t(std::max<std::int64_t>(n, 0)));
    s.rowMax = sink ? *sink : -std::numeric_limits<double>::infinity();
    for (std::int64_t c = 0; c < n; ++c) {
        logits[size_t(c)] = (!allowed || allowed[c]) ? double(scores[c]) : s.rule.maskedLogit;
        s.rowMax = std::max(s.rowMax, logits[size_t(c)]);
    }
    for (std::int64_t c = 0; c < n; ++c) {
        const double e = std::exp(logits[size_t(c)] - s.rowMax);
        s.exps[size_t(c)] = std::isfinite(e) ? e : 0.0;
        s.sum += s.exps[size_t(c)];
    }
    if (sink) {
        s.sinkExp = std::exp(*sink - s.rowMax);
        s.sum += s.sinkExp;
        s.sinkShare = s.sum > 0 ? s.sinkExp / s.sum : 0.0;
    }
    if (s.rule.fixed)
        s.weight = s.rule.weight;
    else if (key >= 0 && key < n && s.sum > 0)
        s.weight = s.exps[size_t(key)] / s.sum;
    return s;
}

std::string projectionFormula(Projection p, AttentionMode mode, bool bias, bool separateValue)
{
    const bool cross = mode == AttentionMode::Cross;
    switch (p) {
    case Projection::Query:
        return std::string(cross ? "Q = X_q\u00b7W_Q" : "Q = X\u00b7W_Q") + (bias ? " + b_Q" : "");
    case Projection::Key:
        return std::string(cross ? "K = X_kv\u00b7W_K" : "K = X\u00b7W_K") + (bias ? " + b_K" : "");
    case Projection::Value:
        return std::string(cross && separateValue ? "V = X_v\u00b7W_V"
                           : cross                ? "V = X_kv\u00b7W_V"
                                                  : "V = X\u00b7W_V") +
               (bias ? " + b_V" : "");
    case Projection::Output:
        return std::string("output = context\u00b7W_O") + (bias ? " + b_O" : "");
    }
    return {};
}

bool everyRowSumsToOne(MaskFill fill, const std::vector<bool> &emptyRows)
{
    if (fill == MaskFill::NegLarge)
        return true;
    return std::none_of(emptyRows.begin(), emptyRows.end(), [](bool e) { return e; });
}

} // namespace attnscope
