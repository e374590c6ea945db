#include "core/analysis/Comparison.h"

#include "core/ErrorCode.h"
#include "core/io/MemoryLimits.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope {

namespace {

const char *const kArrow = "\xE2\x86\x92"; // →

// The label of position i on one side: its token, or t0, t1, ... where the side has none.
std::string sideLabel(const std::vector<std::string> &tokens, std::size_t i)
{
    if (!tokens.empty())
        return tokens[i];
    // Appended, not "t" + to_string(i): GCC 12 at -O3 warns of an overlapping memcpy in that operator+.
    std::string label("t");
    label.append(std::to_string(i));
    return label;
}

// The difference's labels: shared where A and B agree, "a→b" where they differ.
std::vector<std::string> differenceLabels(const std::vector<std::string> &a, const std::vector<std::string> &b,
                                          std::int64_t count)
{
    if (a.empty() && b.empty())
        return {};
    std::vector<std::string> out;
    out.reserve(std::size_t(count));
    for (std::size_t i = 0; i < std::size_t(count); ++i) {
        std::string la = sideLabel(a, i);
        const std::string lb = sideLabel(b, i);
        if (la != lb)
            la.append(kArrow).append(lb);
        out.push_back(std::move(la));
    }
    return out;
}

// Words of the difference: A's and B's where they agree, else one word per token.
void setDifferenceWords(const std::vector<int> &a, const std::vector<int> &b, const std::vector<std::string> &aWords,
                        const std::vector<std::string> &bWords, std::size_t count, std::vector<int> &wordOf,
                        std::vector<std::string> &words)
{
    if (count == 0)
        return;
    if (a == b && a.size() == count) {
        wordOf = a;
        if (aWords == bWords)
            words = aWords;
        return;
    }
    wordOf.resize(count);
    std::iota(wordOf.begin(), wordOf.end(), 0);
}

// Why two token counts cannot be aligned; `noun` is "tokens", "queries" or "keys".
Error countError(const char *noun, std::int64_t na, std::int64_t nb, const std::vector<std::string> &la,
                 const std::vector<std::string> &lb)
{
    const std::string a = std::to_string(na), b = std::to_string(nb);
    const bool tokens = std::string_view(noun) == "tokens";
    // One side's labels begin with all of the other's: a text and the same text continued.
    const bool aShorter = na < nb;
    const auto &shortLabels = aShorter ? la : lb, &longLabels = aShorter ? lb : la;
    const bool prefix =
        tokens && !la.empty() && !lb.empty() && std::equal(shortLabels.begin(), shortLabels.end(), longLabels.begin());
    if (!prefix)
        return codedError(tokens ? "compare.tokens"
                                 : (std::string_view(noun) == "queries" ? "compare.queries" : "compare.keys"),
                          {a, b});
    const std::int64_t more = std::max(na, nb) - std::min(na, nb);
    return codedError(more == 1 ? "compare.tokens.prefixOne" : "compare.tokens.prefix",
                      {a, b, aShorter ? "B" : "A", aShorter ? "A" : "B", std::to_string(more)});
}

// Rows of one map read per block: at most about a million values, as the exporters read them.
std::int64_t blockRows(std::int64_t keys)
{
    return std::max<std::int64_t>(1, std::min<std::int64_t>(256, (1 << 20) / std::max<std::int64_t>(1, keys)));
}

} // namespace

Result<AttentionComparison> compareSets(const AttentionSet &a, const AttentionSet &b, std::int64_t budget)
{
    for (const auto &[set, name] : {std::pair{&a, "A"}, std::pair{&b, "B"}})
        if (set->isEmpty())
            return codedError("compare.empty", {name});
    if (a.layers() != b.layers() || a.heads() != b.heads())
        return codedError("compare.shape", {std::to_string(a.layers()), std::to_string(a.heads()),
                                            std::to_string(b.layers()), std::to_string(b.heads())});
    if (a.samples() != b.samples())
        return codedError("compare.samples", {std::to_string(a.samples()), std::to_string(b.samples())});
    const bool square = a.queries() == a.keys() && b.queries() == b.keys();
    if (square && a.queries() != b.queries())
        return countError("tokens", a.queries(), b.queries(), a.queryTokens, b.queryTokens);
    if (a.queries() != b.queries())
        return countError("queries", a.queries(), b.queries(), a.queryTokens, b.queryTokens);
    if (a.keys() != b.keys())
        return countError("keys", a.keys(), b.keys(), a.keyTokens, b.keyTokens);

    const std::int64_t tq = a.queries(), tk = a.keys();
    const std::int64_t maps = std::int64_t(a.samples()) * a.layers() * a.heads();
    const std::int64_t mapsBytes = saturatingMul(saturatingMul(saturatingMul(maps, tq), tk), 4);
    for (const auto &[set, name] : {std::pair{&a, "A"}, std::pair{&b, "B"}})
        if (set->isFromQk())
            return codedError("compare.qk", {name, formatBytes(mapsBytes)}, ErrorKind::TooLarge);
    const std::int64_t allowed = budget > 0 ? budget : memoryBudget();
    const std::int64_t need = saturatingMul(mapsBytes, 3);
    if (need > allowed)
        return codedError(
            "compare.memory",
            {formatBytes(need), std::to_string(maps), std::to_string(tq), std::to_string(tk), formatBytes(allowed)},
            ErrorKind::TooLarge);

    auto values = std::make_shared<std::vector<float>>(std::size_t(maps * tq * tk));
    const std::int64_t rows = blockRows(tk);
    std::vector<float> ra(std::size_t(rows * tk)), rb(std::size_t(rows * tk));
    float *out = values->data();
    for (int s = 0; s < a.samples(); ++s)
        for (int l = 0; l < a.layers(); ++l)
            for (int h = 0; h < a.heads(); ++h)
                for (std::int64_t i0 = 0; i0 < tq; i0 += rows) {
                    const std::int64_t i1 = std::min(tq, i0 + rows), n = (i1 - i0) * tk;
                    a.rowBlock(s, l, h, i0, i1, 0, tk, ra.data());
                    b.rowBlock(s, l, h, i0, i1, 0, tk, rb.data());
                    for (std::int64_t c = 0; c < n; ++c)
                        *out++ = float(double(rb[std::size_t(c)]) - double(ra[std::size_t(c)]));
                }
    // Values read from a file rewritten meanwhile are not the file's.
    if (Status s = a.checkSource(); !s)
        return s.error();
    if (Status s = b.checkSource(); !s)
        return s.error();

    AttentionComparison c;
    c.a = a;
    c.b = b;
    const void *data = values->data();
    auto difference = AttentionSet::fromContiguous(values, data, AttentionStorage::Float32, a.samples(), a.layers(),
                                                   a.heads(), tq, tk);
    if (!difference)
        return difference.error();
    c.difference = std::move(*difference);
    c.difference.setSigned(true);
    c.queryLabels = differenceLabels(a.queryTokens, b.queryTokens, tq);
    c.keyLabels = differenceLabels(a.keyTokens, b.keyTokens, tk);
    // Set as they are: the labels are decoded already, and "→" must not split them into words.
    c.difference.queryTokens = c.queryLabels;
    c.difference.keyTokens = c.keyLabels;
    setDifferenceWords(a.queryWordOf, b.queryWordOf, a.queryWords, b.queryWords, c.queryLabels.size(),
                       c.difference.queryWordOf, c.difference.queryWords);
    setDifferenceWords(a.keyWordOf, b.keyWordOf, a.keyWords, b.keyWords, c.keyLabels.size(), c.difference.keyWordOf,
                       c.difference.keyWords);
    if (a.queryPositions == b.queryPositions && a.keyPositions == b.keyPositions) {
        c.difference.queryPositions = a.queryPositions;
        c.difference.keyPositions = a.keyPositions;
    }
    if (a.layerFacts == b.layerFacts)
        c.difference.layerFacts = a.layerFacts;
    c.differenceValues = std::move(values);
    return c;
}

std::vector<HeadDifference> comparisonStatistics(const AttentionComparison &c)
{
    const AttentionSet &a = c.a, &b = c.b;
    std::vector<HeadDifference> out;
    if (a.isEmpty() || b.isEmpty())
        return out;
    const std::int64_t tq = a.queries(), tk = a.keys();
    const std::int64_t rows = blockRows(tk);
    std::vector<float> ra(std::size_t(rows * tk)), rb(std::size_t(rows * tk));
    out.reserve(std::size_t(a.samples()) * std::size_t(a.layers()) * std::size_t(a.heads()));
    for (int s = 0; s < a.samples(); ++s)
        for (int l = 0; l < a.layers(); ++l)
            for (int h = 0; h < a.heads(); ++h) {
                HeadDifference d;
                d.sample = s, d.layer = l, d.head = h;
                // Statistics of attention mean nothing for a signed set (a difference compared again):
                // its side keeps only its indices.
                HeadStats unsignedOnly;
                unsignedOnly.sample = s, unsignedOnly.layer = l, unsignedOnly.head = h;
                d.a = a.isSigned() ? unsignedOnly : headStatistics(a, s, l, h);
                d.b = b.isSigned() ? unsignedOnly : headStatistics(b, s, l, h);
                double sumAbs = 0, maxAbs = 0, variation = 0;
                for (std::int64_t i0 = 0; i0 < tq; i0 += rows) {
                    const std::int64_t i1 = std::min(tq, i0 + rows);
                    a.rowBlock(s, l, h, i0, i1, 0, tk, ra.data());
                    b.rowBlock(s, l, h, i0, i1, 0, tk, rb.data());
                    for (std::int64_t i = 0; i < i1 - i0; ++i) {
                        double row = 0;
                        for (std::int64_t j = 0; j < tk; ++j) {
                            const std::size_t n = std::size_t(i * tk + j);
                            const double diff = std::abs(double(rb[n]) - double(ra[n]));
                            row += diff;
                            maxAbs = std::max(maxAbs, diff);
                        }
                        sumAbs += row;
                        variation += 0.5 * row;
                    }
                }
                d.meanAbs = sumAbs / (double(tq) * double(tk));
                d.maxAbs = maxAbs;
                d.totalVariation = variation / double(tq);
                out.push_back(std::move(d));
            }
    return out;
}

} // namespace attnscope
