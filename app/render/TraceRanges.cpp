#include "app/render/TraceRanges.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// Plain loops: Eigen's maxCoeff() trips GCC 12's maybe-uninitialized warning with AVX-512.
// Non-finite values are skipped: an overflow must not stretch a range to Inf (its cells have
// colours of their own).
double maxAllowed(const MatrixF &m, const MaskMatrix &allowed)
{
    const bool all = allowed.size() == 0;
    float best = 0.0f;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            if ((all || allowed(r, c)) && std::isfinite(m(r, c)))
                best = std::max(best, m(r, c));
    return double(best);
}

double maxAbs(const MatrixF &m)
{
    float best = 0.0f;
    for (Eigen::Index i = 0; i < m.size(); ++i)
        if (std::isfinite(m.data()[i]))
            best = std::max(best, std::abs(m.data()[i]));
    return double(best);
}

} // namespace

double TraceRanges::maxAbsScoreOverHeads() const
{
    return maxAbsScore.empty() ? 0.0 : *std::max_element(maxAbsScore.begin(), maxAbsScore.end());
}

double TraceRanges::maxWeightOverHeads() const
{
    return maxWeight.empty() ? 0.0 : *std::max_element(maxWeight.begin(), maxWeight.end());
}

TraceRanges TraceRanges::of(const AttentionTrace &trace)
{
    TraceRanges r = ofWeights(trace.weights, trace.allowed);
    for (const MatrixF &s : trace.scores)
        r.maxAbsScore.push_back(maxAbs(s));
    return r;
}

TraceRanges TraceRanges::ofWeights(const std::vector<MatrixF> &weights, const MaskMatrix &allowed)
{
    TraceRanges r;
    for (const MatrixF &w : weights)
        r.maxWeight.push_back(maxAllowed(w, allowed));
    if (!weights.empty()) {
        auto mean = std::make_shared<MatrixF>(MatrixF::Zero(weights[0].rows(), weights[0].cols()));
        for (const MatrixF &w : weights)
            *mean += w;
        *mean /= float(weights.size());
        r.meanMaxWeight = maxAllowed(*mean, allowed);
        r.meanWeights = std::move(mean);
    }
    return r;
}

} // namespace attnscope
