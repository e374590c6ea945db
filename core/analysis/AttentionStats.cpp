#include "core/analysis/AttentionStats.h"

#include "core/ErrorCode.h"
#include "core/io/MemoryLimits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

namespace attnscope {

namespace {

// Where each query's token occurred before, for the induction score: for query i, the key
// positions j < i whose label equals query i's label (ascending); the targets are j + 1. Held as
// one list of positions per distinct label, so memory stays O(T) on any text. Empty when the
// set has no labels or is not square.
struct InductionIndex {
    std::vector<int> labelOf;                         // per query: its label's list, or -1
    std::vector<std::vector<std::int64_t>> positions; // per label: key positions, ascending

    bool empty() const { return labelOf.empty(); }
};

InductionIndex inductionIndex(const AttentionSet &set)
{
    const std::int64_t t = set.queries();
    if (t != set.keys() || std::int64_t(set.queryTokens.size()) != t || std::int64_t(set.keyTokens.size()) != t)
        return {};
    InductionIndex index;
    std::unordered_map<std::string, int> ids;
    for (std::int64_t j = 0; j < t; ++j) {
        const auto [it, added] = ids.try_emplace(set.keyTokens[std::size_t(j)], int(index.positions.size()));
        if (added)
            index.positions.emplace_back();
        index.positions[std::size_t(it->second)].push_back(j);
    }
    index.labelOf.resize(std::size_t(t), -1);
    for (std::int64_t i = 0; i < t; ++i)
        if (const auto it = ids.find(set.queryTokens[std::size_t(i)]); it != ids.end())
            index.labelOf[std::size_t(i)] = it->second;
    return index;
}

// Rows read at a time: about 4 MiB of floats, so a set from queries and keys computes them as one
// product and a stored set is read as before.
std::int64_t rowsPerBlock(std::int64_t keys)
{
    return std::max<std::int64_t>(
        1, std::min<std::int64_t>(256, (std::int64_t(1) << 20) / std::max<std::int64_t>(keys, 1)));
}

// Where positions are given (a dump of a long context's last rows), the key at each position.
struct KeyAt {
    bool byIndex = true;
    std::unordered_map<std::int64_t, std::int64_t> key; // position -> key index

    explicit KeyAt(const AttentionSet &set)
    {
        if (set.queryPositions.empty() && set.keyPositions.empty())
            return;
        byIndex = false;
        for (std::int64_t j = set.keys() - 1; j >= 0; --j)
            key[set.keyPositions.empty() ? j : set.keyPositions[std::size_t(j)]] = j;
    }
    std::int64_t find(std::int64_t position, std::int64_t keys) const
    {
        if (byIndex)
            return position >= 0 && position < keys ? position : -1;
        const auto it = key.find(position);
        return it == key.end() ? -1 : it->second;
    }
};

HeadStats statisticsOf(const AttentionSet &set, int sample, int layer, int head, const InductionIndex &index)
{
    const std::int64_t tq = set.queries(), tk = set.keys();
    const std::int64_t blockRows = rowsPerBlock(tk);
    std::vector<float> block(static_cast<std::size_t>(blockRows * tk));
    const KeyAt keyAt(set);
    auto qp = [&](std::int64_t i) { return set.queryPositions.empty() ? i : set.queryPositions[std::size_t(i)]; };
    auto kp = [&](std::int64_t j) { return set.keyPositions.empty() ? j : set.keyPositions[std::size_t(j)]; };
    double entropy = 0.0, distance = 0.0, confidence = 0.0, first = 0.0, self = 0.0, previous = 0.0;
    double spread = 0.0, induction = 0.0;
    std::int64_t nonEmpty = 0, repeated = 0, selfRows = 0, previousRows = 0;
    for (std::int64_t i0 = 0; i0 < tq; i0 += blockRows) {
        const std::int64_t i1 = std::min(tq, i0 + blockRows);
        set.rowBlock(sample, layer, head, i0, i1, 0, tk, block.data());
        for (std::int64_t i = i0; i < i1; ++i) {
            const float *w = block.data() + (i - i0) * tk;
            const std::int64_t position = qp(i);
            double h = 0.0, d = 0.0, d2 = 0.0, sum = 0.0, max = 0.0;
            for (std::int64_t j = 0; j < tk; ++j) {
                const double x = w[j];
                const double gap = double(std::llabs(position - kp(j)));
                sum += x;
                max = std::max(max, x);
                if (x > 0.0)
                    h -= x * std::log(x);
                d += x * gap;
                d2 += x * gap * gap;
            }
            if (sum > 0.0) {
                entropy += h;
                ++nonEmpty;
                const double mean = d / sum;
                spread += std::sqrt(std::max(0.0, d2 / sum - mean * mean));
            }
            if (!index.empty() && index.labelOf[std::size_t(i)] >= 0) {
                bool earlier = false;
                for (std::int64_t j : index.positions[std::size_t(index.labelOf[std::size_t(i)])]) {
                    if (j >= i)
                        break;
                    induction += w[j + 1]; // j + 1 <= i: a key of row i
                    earlier = true;
                }
                repeated += earlier ? 1 : 0;
            }
            distance += d;
            confidence += max;
            first += w[0];
            if (const std::int64_t j = keyAt.find(position, tk); j >= 0) {
                self += w[j];
                ++selfRows;
            }
            if (const std::int64_t j = keyAt.find(position - 1, tk); j >= 0) {
                previous += w[j];
                ++previousRows;
            }
        }
    }
    HeadStats s;
    s.sample = sample;
    s.layer = layer;
    s.head = head;
    s.entropy = nonEmpty > 0 ? entropy / double(nonEmpty) : 0.0;
    s.distance = distance / double(tq);
    s.confidence = confidence / double(tq);
    s.first = first / double(tq);
    // Without positions: self on square maps, previous over rows i >= 1 (as before); with them,
    // over the rows that have a key at their own (previous) position.
    if (keyAt.byIndex ? tq == tk : selfRows > 0)
        s.self = self / double(keyAt.byIndex ? tq : selfRows);
    if (keyAt.byIndex ? tq > 1 : previousRows > 0)
        s.previous = previous / double(keyAt.byIndex ? tq - 1 : previousRows);
    s.spread = nonEmpty > 0 ? spread / double(nonEmpty) : 0.0;
    if (repeated > 0)
        s.induction = induction / double(repeated);
    return s;
}

} // namespace

HeadStats headStatistics(const AttentionSet &set, int sample, int layer, int head)
{
    return statisticsOf(set, sample, layer, head, inductionIndex(set));
}

std::vector<double> headDistances(const std::vector<HeadStats> &stats, std::size_t reference)
{
    std::vector<double> out(stats.size(), 0.0);
    if (reference >= stats.size())
        return out;
    const auto metric = [](const HeadStats &s, int k) -> std::optional<double> {
        switch (k) {
        case 0:
            return s.entropy;
        case 1:
            return s.distance;
        case 2:
            return s.spread;
        case 3:
            return s.confidence;
        case 4:
            return s.first;
        case 5:
            return s.self;
        case 6:
            return s.previous;
        default:
            return s.induction;
        }
    };
    for (int k = 0; k < kHeadMetricCount; ++k) {
        double sum = 0.0, sum2 = 0.0;
        std::size_t n = 0;
        for (const HeadStats &s : stats)
            if (const auto v = metric(s, k)) {
                sum += *v;
                sum2 += *v * *v;
                ++n;
            }
        if (n == 0)
            continue;
        const double mean = sum / double(n);
        const double sd = std::sqrt(std::max(0.0, sum2 / double(n) - mean * mean));
        const auto ref = metric(stats[reference], k);
        if (!ref || !(sd > 1e-12))
            continue;
        for (std::size_t i = 0; i < stats.size(); ++i)
            if (const auto v = metric(stats[i], k)) {
                const double z = (*v - *ref) / sd;
                out[i] += z * z;
            }
    }
    for (double &d : out)
        d = std::sqrt(d);
    return out;
}

std::vector<HeadStats> headStatistics(const AttentionSet &set)
{
    std::vector<HeadStats> all;
    all.reserve(std::size_t(set.samples()) * std::size_t(set.layers()) * std::size_t(set.heads()));
    const InductionIndex index = inductionIndex(set);
    for (int s = 0; s < set.samples(); ++s)
        for (int l = 0; l < set.layers(); ++l)
            for (int h = 0; h < set.heads(); ++h)
                all.push_back(statisticsOf(set, s, l, h, index));
    return all;
}

MatrixD meanOverHeads(const AttentionSet &set, int sample, int layer)
{
    const std::int64_t tq = set.queries(), tk = set.keys();
    MatrixD mean = MatrixD::Zero(tq, tk);
    const std::int64_t blockRows = rowsPerBlock(tk);
    std::vector<float> w(static_cast<std::size_t>(blockRows * tk));
    for (int h = 0; h < set.heads(); ++h)
        for (std::int64_t i0 = 0; i0 < tq; i0 += blockRows) {
            const std::int64_t i1 = std::min(tq, i0 + blockRows);
            set.rowBlock(sample, layer, h, i0, i1, 0, tk, w.data());
            for (std::int64_t i = i0; i < i1; ++i)
                for (std::int64_t j = 0; j < tk; ++j)
                    mean(i, j) += w[std::size_t((i - i0) * tk + j)];
        }
    return mean / double(set.heads());
}

std::int64_t rolloutBytes(std::int64_t tokens)
{
    return saturatingMul(saturatingMul(saturatingMul(tokens, tokens), 8), 4);
}

double rolloutOperations(std::int64_t tokens, int layers)
{
    // The first layer's matrix is the rollout of one layer: each further layer costs one product.
    const double t = double(tokens);
    return 2.0 * t * t * t * double(std::max(0, layers - 1));
}

Status checkRolloutCost(std::int64_t tokens, int layers, std::int64_t budget)
{
    const std::string t = std::to_string(tokens);
    if (const std::int64_t need = rolloutBytes(tokens); need > budget)
        return codedError("rollout.memory", {formatBytes(need), t, formatBytes(budget)}, ErrorKind::TooLarge);
    if (const double operations = rolloutOperations(tokens, layers); operations > kRolloutMaxOperations) {
        char need[32], allowed[32];
        std::snprintf(need, sizeof need, "%.1e", operations);
        std::snprintf(allowed, sizeof allowed, "%.1e", kRolloutMaxOperations);
        return codedError("rollout.operations", {std::to_string(layers), t, need, allowed}, ErrorKind::TooLarge);
    }
    return Ok{};
}

Result<MatrixD> attentionRollout(const AttentionSet &set, int sample, const RolloutLimits &limits)
{
    if (set.queries() != set.keys())
        return Error{"rollout: needs square attention maps (self-attention), found " +
                     shapeString(set.queries(), set.keys())};
    const std::int64_t t = set.queries();
    if (Status s = checkRolloutCost(t, set.layers(), limits.memoryBudget > 0 ? limits.memoryBudget : memoryBudget());
        !s)
        return s.error();
    // The products in blocks of rows, so that a cancel (a newer request, a closed window)
    // stops the work within one block.
    constexpr Eigen::Index kBlock = 256;
    MatrixD rollout = MatrixD::Identity(t, t), next(t, t);
    for (int l = 0; l < set.layers(); ++l) {
        if (limits.cancel && limits.cancel->load(std::memory_order_relaxed))
            return Error{"cancelled", ErrorKind::Cancelled};
        MatrixD a = meanOverHeads(set, sample, l);
        for (Eigen::Index i = 0; i < t; ++i) {
            double *row = a.data() + i * t; // row-major: row i is contiguous
            double sum = 0.0;
            for (Eigen::Index j = 0; j < t; ++j) {
                row[j] = 0.5 * row[j] + (i == j ? 0.5 : 0.0);
                sum += row[j];
            }
            if (sum > 0.0)
                for (Eigen::Index j = 0; j < t; ++j)
                    row[j] /= sum;
        }
        if (l == 0) {
            rollout.swap(a); // A'_1: one layer needs no product
            continue;
        }
        for (Eigen::Index i = 0; i < t; i += kBlock) {
            if (limits.cancel && limits.cancel->load(std::memory_order_relaxed))
                return Error{"cancelled", ErrorKind::Cancelled};
            const Eigen::Index n = std::min<Eigen::Index>(kBlock, t - i);
            next.middleRows(i, n).noalias() = a.middleRows(i, n) * rollout; // A'_l ... A'_1
        }
        rollout.swap(next);
    }
    return rollout;
}

MatrixD mergeWords(const MatrixD &map, const std::vector<int> &queryWordOf, const std::vector<int> &keyWordOf)
{
    const int queryWords = queryWordOf.empty() ? 0 : queryWordOf.back() + 1;
    const int keyWords = keyWordOf.empty() ? 0 : keyWordOf.back() + 1;
    MatrixD keysMerged = MatrixD::Zero(map.rows(), keyWords);
    for (Eigen::Index j = 0; j < map.cols(); ++j)
        keysMerged.col(keyWordOf[std::size_t(j)]) += map.col(j);
    MatrixD merged = MatrixD::Zero(queryWords, keyWords);
    std::vector<int> pieces(std::size_t(queryWords), 0);
    for (Eigen::Index i = 0; i < map.rows(); ++i) {
        merged.row(queryWordOf[std::size_t(i)]) += keysMerged.row(i);
        ++pieces[std::size_t(queryWordOf[std::size_t(i)])];
    }
    for (int w = 0; w < queryWords; ++w)
        merged.row(w) /= double(std::max(1, pieces[std::size_t(w)]));
    return merged;
}

std::vector<std::string> mergedWordLabels(const std::vector<std::string> &tokens, const std::vector<int> &wordOf)
{
    std::vector<std::string> words(wordOf.empty() ? 0 : std::size_t(wordOf.back() + 1));
    for (std::size_t i = 0; i < tokens.size() && i < wordOf.size(); ++i) {
        std::string piece = tokens[i];
        if (piece.rfind("##", 0) == 0)
            piece.erase(0, 2);
        else if (piece.rfind("\xC4\xA0", 0) == 0 || piece.rfind("\xE2\x96\x81", 0) == 0)
            piece.erase(0, piece[0] == '\xC4' ? 2 : 3);
        words[std::size_t(wordOf[i])] += piece;
    }
    return words;
}

} // namespace attnscope
