#include "app/gui/document/AttentionJobs.h"

#include "app/gui/document/MemoryBudget.h"
#include "core/analysis/Pooling.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

QStringList toLabels(const std::vector<std::string> &tokens)
{
    QStringList out;
    out.reserve(qsizetype(tokens.size()));
    for (const std::string &t : tokens)
        out << QString::fromStdString(t);
    return out;
}

// A map max-pooled into at most `size` by `size` cells (core's pooling: a spike in a long
// sequence stays visible) and its largest finite cell.
struct Pooled {
    MatrixF cells;
    float max = 0.0f;
};

// Counts rows done and tells `percent` when the whole percentage changes.
struct RowProgress {
    std::int64_t done = 0, total = 1;
    int last = -1;
    const std::function<void(int)> *percent = nullptr;
    void step()
    {
        ++done;
        const int now = int(100 * done / std::max<std::int64_t>(total, 1));
        if (percent && *percent && now != last) {
            last = now;
            (*percent)(now);
        }
    }
};

Pooled pool(const AttentionSource &source, int layer, int head, int size, RowProgress &progress)
{
    const AttentionSet &set = source.set;
    Pooled p;
    if (source.merges()) {
        p.cells = poolMatrix(source.shownMap(layer, head), size, PoolMode::Max).cast<float>();
        progress.done += set.queries() - 1;
        progress.step();
    } else {
        SetPoolOptions options;
        options.bins = size;
        options.head = head;
        options.rowRead = [&progress] { progress.step(); };
        // The whole map of a layer and head of the set: no error but a changed source file,
        // which the caller's view reports on its own.
        auto pooled = poolSetBlock(set, 0, layer, SetBlock{0, set.queries(), 0, set.keys()}, options);
        if (pooled)
            p.cells = std::move(pooled->heads.front());
        else
            p.cells =
                MatrixF::Zero(std::min<std::int64_t>(set.queries(), size), std::min<std::int64_t>(set.keys(), size));
    }
    for (Eigen::Index k = 0; k < p.cells.size(); ++k)
        if (std::isfinite(p.cells.data()[k]))
            p.max = std::max(p.max, p.cells.data()[k]);
    return p;
}

} // namespace

bool AttentionSource::merges() const
{
    return mergeWords && !set.queryWordOf.empty() && !set.keyWordOf.empty();
}

QStringList AttentionSource::queryLabels() const
{
    return toLabels(merges() ? mergedWordLabels(set.queryTokens, set.queryWordOf) : set.queryTokens);
}

QStringList AttentionSource::keyLabels() const
{
    return toLabels(merges() ? mergedWordLabels(set.keyTokens, set.keyWordOf) : set.keyTokens);
}

MatrixD AttentionSource::shownMap(int layer, int head) const
{
    const MatrixD m = set.map(0, layer, head).cast<double>();
    return merges() ? attnscope::mergeWords(m, set.queryWordOf, set.keyWordOf) : m;
}

namespace AttentionJobs {

std::shared_ptr<ComputedTrace> layerTrace(const AttentionSource &source, int layer)
{
    auto out = std::make_shared<ComputedTrace>();
    const AttentionSet &set = source.set;
    if (set.isEmpty())
        return out;
    layer = std::clamp(layer, 0, set.layers() - 1);
    AttentionTrace &t = out->trace;
    for (int h = 0; h < set.heads(); ++h) {
        t.weights.push_back(source.merges() ? MatrixF(source.shownMap(layer, h).cast<float>()) : set.map(0, layer, h));
        // heads() counts the queries' projections: empty ones say how many heads there are.
        t.q.emplace_back();
    }
    const Eigen::Index tq = t.weights.front().rows(), tk = t.weights.front().cols();
    t.emptyRows.assign(std::size_t(tq), false);
    Project &p = out->project;
    p.title = source.title.toStdString();
    const bool cross = tq != tk || set.queryTokens != set.keyTokens;
    p.problem.spec.mode = cross ? AttentionMode::Cross : AttentionMode::Self;
    p.problem.spec.heads = set.heads();
    p.problem.xq = MatrixF::Zero(tq, 1);
    if (cross)
        p.problem.xkv = MatrixF::Zero(tk, 1);
    for (const QString &s : source.queryLabels())
        p.queryTokens.push_back(s.toStdString());
    for (const QString &s : source.keyLabels())
        p.keyTokens.push_back(s.toStdString());
    if (!cross)
        p.keyTokens.clear();
    out->ranges = TraceRanges::of(t);
    // No scores: a zero range per head keeps the weights' precomputed ranges in use.
    out->ranges.maxAbsScore.assign(std::size_t(set.heads()), 0.0);
    return out;
}

Thumbnails thumbnails(const AttentionSource &source, ColorMapKind colorMap, ScaleScope scope,
                      const std::atomic<bool> &cancel, const std::function<void(int)> &percent)
{
    Thumbnails out;
    const AttentionSet &set = source.set;
    if (set.isEmpty())
        return out;
    out.layers = set.layers();
    out.heads = set.heads();
    const ColorMap map(colorMap);
    auto paint = [&](const Pooled &p, double top) {
        QImage image(int(p.cells.cols()), int(p.cells.rows()), QImage::Format_RGB32);
        for (int i = 0; i < image.height(); ++i) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(i));
            for (int j = 0; j < image.width(); ++j) {
                const float v = p.cells(i, j);
                line[j] = std::isfinite(v) ? map.at(double(v) / top) : qRgb(255, 0, 255);
            }
        }
        out.images.push_back(std::move(image));
        out.pooled.push_back(p.cells);
    };
    RowProgress progress;
    progress.total = std::int64_t(set.layers()) * set.heads() * set.queries();
    progress.percent = &percent;
    // One scale shared by every map needs every map pooled before the first is coloured.
    std::vector<Pooled> pooled;
    float sharedMax = 0.0f;
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h) {
            if (cancel.load(std::memory_order_relaxed))
                return {};
            Pooled p = pool(source, l, h, kThumbnailSize, progress);
            if (scope == ScaleScope::Shared) {
                sharedMax = std::max(sharedMax, p.max);
                pooled.push_back(std::move(p));
            } else {
                paint(p, scope == ScaleScope::PerHead && p.max > 0.0f ? double(p.max) : 1.0);
            }
        }
    for (const Pooled &p : pooled)
        paint(p, sharedMax > 0.0f ? double(sharedMax) : 1.0);
    return out;
}

std::vector<HeadStats> statistics(const AttentionSet &set, const std::atomic<bool> &cancel)
{
    std::vector<HeadStats> out;
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h) {
            if (cancel.load(std::memory_order_relaxed))
                return {};
            out.push_back(headStatistics(set, 0, l, h));
        }
    return out;
}

Result<MatrixD> rollout(const AttentionSource &source, const MemoryBudget &budget, const std::atomic<bool> *cancel)
{
    // core's rollout, its cost checked against the application's budget.
    auto r = attentionRollout(source.set, 0, RolloutLimits{budget.bytes(), cancel});
    if (!r || !source.merges())
        return r;
    return mergeWords(*r, source.set.queryWordOf, source.set.keyWordOf);
}

} // namespace AttentionJobs

} // namespace attnscope
