#include "app/render/TraceRanges.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// Plain loops: Eigen's maxCoeff() trips GCC 12's maybe-uninitialized warning with AVX-512.
double maxAllowed(const MatrixF &m, const MaskMatrix &allowed)
{
    const bool all = allowed.size() == 0;
    float best = 0.0f;
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            if (all || allowed(r, c))
                best = std::max(best, m(r, c));
    return double(best);
}

double maxAbs(const MatrixF &m)
{
    float best = 0.0f;
    for (Eigen::Index i = 0; i < m.size(); ++i)
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
    TraceRanges r;
    for (const MatrixF &s : trace.scores)
        r.maxAbsScore.push_back(maxAbs(s));
    for (const MatrixF &w : trace.weights)
        r.maxWeight.push_back(maxAllowed(w, trace.allowed));
    if (!trace.weights.empty()) {
        auto mean = std::make_shared<MatrixF>(MatrixF::Zero(trace.weights[0].rows(), trace.weights[0].cols()));
        for (const MatrixF &w : trace.weights)
            *mean += w;
        *mean /= float(trace.weights.size());
        r.meanMaxWeight = maxAllowed(*mean, trace.allowed);
        r.meanWeights = std::move(mean);
    }
    return r;
}

} // namespace attnscope
