#include "app/gui/document/AttentionJobs.h"

#include "app/gui/document/MemoryBudget.h"
#include "app/render/ColorScale.h"
#include "app/render/HeatmapRenderer.h"
#include "core/analysis/Pooling.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

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

// Keys [firstKey, lastKey) of the map (lastKey -1: to the end), pooled.
Pooled pool(const ShownAttention &source, int layer, int head, int size, RowProgress &progress,
            std::int64_t firstKey = 0, std::int64_t lastKey = -1)
{
    const AttentionSet &set = source.set;
    Pooled p;
    if (set.isSigned() && !source.merges()) {
        // A difference: pooled by magnitude, so a negative change shows (its maps fit in memory:
        // compareSets held them all).
        const std::int64_t end = lastKey < 0 ? set.keys() : lastKey;
        p.cells = poolSigned(set.map(0, layer, head).middleCols(firstKey, end - firstKey), size);
        progress.done += set.queries() - 1;
        progress.step();
    } else if (source.merges()) {
        const MatrixD map = source.shownMap(layer, head);
        const Eigen::Index end = lastKey < 0 ? map.cols() : Eigen::Index(lastKey);
        const MatrixD keys = map.middleCols(firstKey, end - firstKey);
        p.cells = poolMatrix(keys, size, PoolMode::Max).cast<float>();
        progress.done += set.queries() - 1;
        progress.step();
    } else {
        SetPoolOptions options;
        options.bins = size;
        options.head = head;
        options.rowRead = [&progress] { progress.step(); };
        // The whole map of a layer and head of the set: no error but a changed source file,
        // which the caller's view reports on its own.
        const std::int64_t end = lastKey < 0 ? set.keys() : lastKey;
        auto pooled = poolSetBlock(set, 0, layer, SetBlock{0, set.queries(), firstKey, end}, options);
        if (pooled)
            p.cells = std::move(pooled->heads.front());
        else
            p.cells = MatrixF::Zero(std::min<std::int64_t>(set.queries(), size),
                                    std::min<std::int64_t>(end - firstKey, size));
    }
    for (Eigen::Index k = 0; k < p.cells.size(); ++k)
        if (std::isfinite(p.cells.data()[k]))
            p.max = std::max(p.max, p.cells.data()[k]);
    return p;
}

} // namespace

namespace AttentionJobs {

Thumbnails thumbnails(const ShownAttention &source, ColorMapKind colorMap, ScaleScope scope, ColorScaleKind colorScale,
                      const std::atomic<bool> &cancel, const std::function<void(int)> &percent, bool sinkApart)
{
    Thumbnails out;
    const AttentionSet &set = source.set;
    if (set.isEmpty())
        return out;
    out.layers = set.layers();
    out.heads = set.heads();
    if (!source.merges()) {
        out.queries = set.queries();
        out.keys = set.keys();
    }
    const std::int64_t keys = source.merges() ? std::int64_t(source.set.keyWordLabels().size()) : set.keys();
    out.sinkApart = sinkApart && keys > 1;
    // A difference (a signed set, a comparison's B − A): diverging around 0, every map on the
    // set's ±max|value| unless each has its own.
    const bool difference = set.isSigned();
    if (difference && scope == ScaleScope::Absolute)
        scope = ScaleScope::Shared;
    out.sinkApart = out.sinkApart && !difference; // a sink's mass is a weight, not a difference
    const ColorMap map(difference ? ColorMapKind::Diverging : colorMap);
    // A map as the heatmap renderer sees it: its cells over [0, top] (a difference's over ±top).
    const auto asData = [difference](const Pooled &p, double top) {
        HeatmapData d;
        d.values = &p.cells;
        d.rangeMax = top > 0.0 ? top : 1.0;
        d.rangeMin = difference ? -d.rangeMax : 0.0;
        d.signedValues = d.difference = difference;
        return d;
    };
    auto paint = [&](const Pooled &p, const ColorScale &scale) {
        QImage image(int(p.cells.cols()), int(p.cells.rows()), QImage::Format_RGB32);
        for (int i = 0; i < image.height(); ++i) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(i));
            for (int j = 0; j < image.width(); ++j) {
                const float v = p.cells(i, j);
                line[j] = std::isfinite(v) ? map.at(scale.position(double(v))) : qRgb(255, 0, 255);
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
    const int size = thumbnailSize(std::int64_t(set.layers()) * set.heads());
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h) {
            if (cancel.load(std::memory_order_relaxed))
                return {};
            Pooled p = pool(source, l, h, size, progress, out.sinkApart ? 1 : 0);
            if (difference) // ranged by magnitude
                p.max = p.cells.size() ? p.cells.array().abs().maxCoeff() : 0.0f;
            if (out.sinkApart) {
                // The first key on its own, over [0, 1]: its weight is the sink mass, not a detail to scale.
                RowProgress none;
                const Pooled sink = pool(source, l, h, size, none, 0, 1);
                const HeatmapData d = asData(sink, 1.0);
                const ColorScale linear = ColorScale::build(ColorScaleKind::Linear, {&d});
                QImage bar(1, int(sink.cells.rows()), QImage::Format_RGB32);
                for (int i = 0; i < bar.height(); ++i) {
                    const float v = sink.cells(i, 0);
                    bar.setPixel(0, i, std::isfinite(v) ? map.at(linear.position(double(v))) : qRgb(255, 0, 255));
                }
                out.sinks.push_back(std::move(bar));
            }
            if (scope == ScaleScope::Shared) {
                sharedMax = std::max(sharedMax, p.max);
                pooled.push_back(std::move(p));
            } else {
                const HeatmapData d = asData(p, scope == ScaleScope::PerHead ? double(p.max) : 1.0);
                paint(p, ColorScale::build(colorScale, {&d}));
            }
        }
    if (pooled.empty())
        return out;
    std::vector<HeatmapData> all;
    all.reserve(pooled.size());
    for (const Pooled &p : pooled)
        all.push_back(asData(p, double(sharedMax)));
    std::vector<const HeatmapData *> maps;
    for (const HeatmapData &d : all)
        maps.push_back(&d);
    const ColorScale shared = ColorScale::build(colorScale, maps);
    for (const Pooled &p : pooled)
        paint(p, shared);
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

Result<MatrixD> rollout(const ShownAttention &source, const MemoryBudget &budget, const std::atomic<bool> *cancel)
{
    // core's rollout, its cost checked against the application's budget.
    auto r = attentionRollout(source.set, 0, RolloutLimits{budget.bytes(), cancel});
    if (!r || !source.merges())
        return r;
    return mergeWords(*r, source.set.queryWordOf, source.set.keyWordOf);
}

} // namespace AttentionJobs

} // namespace attnscope
