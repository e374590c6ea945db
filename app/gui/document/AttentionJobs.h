#pragma once

#include "app/gui/document/MemoryBudget.h"
#include "app/render/ColorMap.h"
#include "app/render/HeatmapRenderer.h"
#include "app/render/ShownAttention.h"
#include "core/analysis/AttentionSet.h"
#include "core/analysis/AttentionStats.h"
#include "core/formats/AttentionFile.h"

#include <QImage>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attnscope {

// A read-only set as the GUI holds it, never saved: an attention file's (design.md, "Contract:
// real models and imported attention"), with what the reader found in the file, or a model run's,
// with the model folder as its path and no file information.
struct LoadedAttention {
    QString path;
    AttentionSet set;
    std::optional<AttentionFileInfo> file;          // empty for a model run
    std::shared_ptr<const TensorProvider> provider; // a model run's: computes a layer's tensors again
    bool softmaxApplied = false;                    // a file of scores shown as their softmax (softmaxRows)
    std::int64_t newRow = -1;                       // ShownAttention::newRow: a generation's newest token
    bool isModelRun() const { return !file.has_value(); }
};
using LoadedAttentionPtr = std::shared_ptr<const LoadedAttention>;

// The work the attention views need, done on a worker thread (no widgets, no GUI state).
// `cancel` is polled between maps: a newer request makes an older job stop early.
namespace AttentionJobs {

struct Thumbnails {
    int layers = 0, heads = 0;
    std::vector<QImage> images;  // [layer * heads + head], at most thumbnailSize() per side
    std::vector<MatrixF> pooled; // the max-pooled weights each image shows, same order
    // With the sink apart: the images show keys 1.. only (column 0 is left out of the colour
    // scale too) and `sinks` holds, in the same order, a one-pixel-wide image of each map's first
    // key, coloured over [0, 1] whatever the scope. Empty otherwise.
    bool sinkApart = false;
    std::vector<QImage> sinks;
    // The maps' sizes in tokens (0 where the maps are merged into words: no token geometry).
    std::int64_t queries = 0, keys = 0;
};
inline constexpr int kThumbnailSize = 128;
// The side of the thumbnails of a set of `maps` maps: kThumbnailSize up to 512 maps, then 64 up to
// 2048 and 32 beyond. A 70B model's 5120 heads would otherwise hold 640 MiB of thumbnails, each
// shown a few dozen pixels wide.
inline constexpr int thumbnailSize(std::int64_t maps)
{
    return maps <= 512 ? kThumbnailSize : maps <= 2048 ? kThumbnailSize / 2 : kThumbnailSize / 4;
}
// Every map downsampled (max-pooled blocks, as the heatmap renderer pools: a strong column
// survives) and coloured as the heatmaps are: over [0, 1], over [0, the largest weight of all
// maps] or over each map's own, on the colour scale asked (linear, log or percentile; one scale
// for every map when the scope is shared). Rows are read one at a time from the set (a mapped file
// stays mapped); `percent`, when given, hears how far the work is each time the whole percentage
// changes.
// `sinkApart`: the first key shown apart (see Thumbnails), where the maps have more than one key.
Thumbnails thumbnails(const ShownAttention &source, ColorMapKind colorMap, ScaleScope scope, ColorScaleKind colorScale,
                      const std::atomic<bool> &cancel, const std::function<void(int percent)> &percent = {},
                      bool sinkApart = false);

// Statistics of every head of sample 0, of the maps as stored (never merged: the numbers are
// those of `attnscope-cli stats`).
std::vector<HeadStats> statistics(const AttentionSet &set, const std::atomic<bool> &cancel);

// Attention rollout over every layer (core's attentionRollout, merged into words afterwards
// when merging). Refused, as TooLarge, by core's checkRolloutCost() against budget.bytes();
// stops with Cancelled between blocks of rows once `cancel` is set.
Result<MatrixD> rollout(const ShownAttention &source, const MemoryBudget &budget,
                        const std::atomic<bool> *cancel = nullptr);

} // namespace AttentionJobs

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::LoadedAttentionPtr)
