#include "core/analysis/RowSums.h"

#include "core/io/MemoryLimits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace attnscope {

namespace {

std::string shortNumber(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

} // namespace

std::string RowSumCheck::summary() const
{
    std::string text = "row sums " + shortNumber(minSum) + " to " + shortNumber(maxSum);
    std::vector<std::string> parts;
    const std::string of = " of " + std::to_string(rows) + " rows ";
    if (above)
        parts.push_back(std::to_string(above) + of + "above 1");
    if (negative)
        parts.push_back(std::to_string(negative) + " rows with negative values (down to " + shortNumber(minValue) +
                        ")");
    if (zeros)
        parts.push_back(std::to_string(zeros) + of + "all zero (masked)");
    if (below)
        parts.push_back(std::to_string(below) + of + "below 1 (a sink kept out)");
    if (parts.empty())
        return text + ": every row sums to 1";
    text += ": ";
    for (std::size_t i = 0; i < parts.size(); ++i)
        text += (i ? ", " : "") + parts[i];
    return text;
}

double rowSumTolerance(const std::string &dtype, std::int64_t keys)
{
    if (dtype == "float16")
        return 2e-3 + double(keys) * std::ldexp(1.0, -25);
    if (dtype == "bfloat16")
        return 8e-3;
    return 1e-3;
}

RowSumCheck checkRowSums(const AttentionSet &set, double tolerance)
{
    RowSumCheck check;
    check.tolerance = tolerance;
    if (set.isEmpty())
        return check;
    check.minSum = check.minValue = std::numeric_limits<double>::infinity();
    check.maxSum = check.maxValue = -std::numeric_limits<double>::infinity();
    const int maps = set.samples() * set.layers() * set.heads();
    // The maps shared out between the threads (a 12 x 12 x 4096 x 4096 file is read whole), each
    // row read once; the counts are merged at the end.
#pragma omp parallel
    {
        RowSumCheck part = check;
        std::vector<float> row(static_cast<std::size_t>(set.keys()));
#pragma omp for schedule(dynamic)
        for (int m = 0; m < maps; ++m) {
            const int s = m / (set.layers() * set.heads()), l = m / set.heads() % set.layers(), h = m % set.heads();
            for (std::int64_t i = 0; i < set.queries(); ++i) {
                set.row(s, l, h, i, row.data());
                double sum = 0;
                float lo = row[0], hi = row[0];
                bool zero = true;
                for (const float v : row) {
                    sum += v;
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                    zero &= v == 0;
                }
                const bool negative = lo < 0;
                part.minValue = std::min(part.minValue, double(lo));
                part.maxValue = std::max(part.maxValue, double(hi));
                part.minSum = std::min(part.minSum, sum);
                part.maxSum = std::max(part.maxSum, sum);
                ++part.rows;
                if (negative)
                    ++part.negative;
                if (sum > 1 + tolerance)
                    ++part.above;
                else if (zero)
                    ++part.zeros;
                else if (!negative && sum < 1 - tolerance)
                    ++part.below;
                else if (!negative)
                    ++part.ones;
            }
        }
#pragma omp critical
        {
            check.rows += part.rows;
            check.ones += part.ones;
            check.zeros += part.zeros;
            check.below += part.below;
            check.above += part.above;
            check.negative += part.negative;
            check.minSum = std::min(check.minSum, part.minSum);
            check.maxSum = std::max(check.maxSum, part.maxSum);
            check.minValue = std::min(check.minValue, part.minValue);
            check.maxValue = std::max(check.maxValue, part.maxValue);
        }
    }
    return check;
}

Result<AttentionSet> softmaxRows(const AttentionSet &set)
{
    const std::int64_t count = std::int64_t(set.samples()) * set.layers() * set.heads() * set.queries() * set.keys();
    if (Status fits = checkFitsInMemory(count * std::int64_t(sizeof(float)), "the attention values after softmax");
        !fits)
        return fits.error();
    std::vector<float> values(static_cast<std::size_t>(count));
    float *out = values.data();
    const std::size_t tk = static_cast<std::size_t>(set.keys());
    for (int s = 0; s < set.samples(); ++s)
        for (int l = 0; l < set.layers(); ++l)
            for (int h = 0; h < set.heads(); ++h)
                for (std::int64_t i = 0; i < set.queries(); ++i, out += tk) {
                    set.row(s, l, h, i, out);
                    // The largest score taken out first, so that exp never overflows.
                    const float top = *std::max_element(out, out + tk);
                    double sum = 0;
                    for (std::size_t j = 0; j < tk; ++j)
                        sum += double(out[j] = std::exp(out[j] - top));
                    for (std::size_t j = 0; j < tk; ++j)
                        out[j] = float(double(out[j]) / sum);
                }
    auto result = AttentionSet::fromFloats(std::move(values), set.samples(), set.layers(), set.heads(), set.queries(),
                                           set.keys());
    if (!result)
        return result.error();
    result->queryTokens = set.queryTokens;
    result->keyTokens = set.keyTokens;
    result->queryWordOf = set.queryWordOf;
    result->keyWordOf = set.keyWordOf;
    result->queryWords = set.queryWords;
    result->keyWords = set.keyWords;
    result->layerFacts = set.layerFacts;
    return result;
}

} // namespace attnscope
