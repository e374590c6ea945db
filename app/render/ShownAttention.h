#pragma once

#include "app/render/TraceRanges.h"
#include "core/analysis/AttentionSet.h"
#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <vector>

namespace attnscope {

// A project's computation: the project (problem, labels), its trace with every intermediate
// tensor (Q, K, V, scores, weights, context, the effective mask) and the views' ranges of it,
// computed off the GUI thread. The provider of intermediate tensors of a set's one layer.
struct LayerTensors {
    Project project;
    AttentionTrace trace;
    TraceRanges ranges;
    int layer = 0; // the set's layer they are of (a project's: its one layer)
};

// A source that can compute a layer's intermediate tensors again (a model run keeps each layer's
// attention input beside the model's weights): the layer as a project, which a worker computes
// as it computes a project's. Immutable, shared with workers.
class TensorProvider
{
public:
    virtual ~TensorProvider() = default;
    virtual Project layerProject(int layer) const = 0;
};

// One layer's weights as the views draw them, read once from the set on a worker: float32
// (a float16 or mapped file converts here), merged into words when that is asked, with ranges.
struct LayerMaps {
    int layer = 0;
    std::vector<MatrixF> weights; // [H], each Tq by Tk (words by words when merged)
    TraceRanges ranges;
    QString noTensors; // why a source with a TensorProvider has the weights alone here
};

// What every view, figure and export shows (design.md, "Layers"): an attention set indexed by
// (sample, layer, head), the layer in front, whether sub-word tokens are merged into words, and
// what the source has beyond the weights. A project brings its tensors (its set is the trace's
// one layer); a file or a model run brings the weights only, read into `maps` for the layer in
// front. A model run can compute its layer's tensors again (`provider`): the layer in front then
// brings them too, as a project's does. Copies are cheap (shared maps) and safe to hand to a worker.
struct ShownAttention {
    AttentionSet set;
    QString title;
    bool mergeWords = false;
    int layer = 0;                                  // of set, 0-based; sample 0 is shown
    std::shared_ptr<const LayerTensors> tensors;    // a project's, or a provider's for one layer
    std::shared_ptr<const LayerMaps> maps;          // the layer's weights where there are no tensors
    std::shared_ptr<const TensorProvider> provider; // computes a layer's tensors; null: none
    // A generation's newest token: its query row (the one its step added) is framed in every map;
    // -1: none. Not shown where words are merged.
    std::int64_t newRow = -1;

    // The tensors of that layer, where there are some (a project's one layer; a provider's layer
    // once computed); shownTensors() those of the layer in front.
    const LayerTensors *tensorsOf(int layer) const;
    const LayerTensors *shownTensors() const { return tensorsOf(layer); }

    // A project's computation as a one-layer set: its weights (not copied), its labels, its tensors.
    static ShownAttention ofTensors(std::shared_ptr<const LayerTensors> tensors);
    // A project and its trace, their ranges computed here (the command line's figures).
    static ShownAttention ofProject(Project project, AttentionTrace trace);

    bool isEmpty() const { return set.isEmpty(); }
    // Whether merging applies: the option is on and both sides have word boundaries.
    bool merges() const;
    QStringList queryLabels() const;
    QStringList keyLabels() const;
    // One map as shown: a copy, merged into words when merges().
    MatrixD shownMap(int layer, int head) const;

    // The layer in front, as drawn. Null (or 0) until it is read: a set's layer is read on a
    // worker (readLayer) while a project's is its trace.
    const std::vector<MatrixF> *weights() const;
    const std::vector<MatrixF> *scores() const; // a project's pre-mask scores; null otherwise
    const TraceRanges *ranges() const;
    int heads() const;
    // The effective mask and its empty rows (a project's; everything allowed otherwise).
    const MaskMatrix *allowed() const;
    std::vector<bool> emptyRows() const;
    MaskFill maskFill() const;
    // newRow as drawn: none (-1) where words are merged.
    int shownNewRow() const { return merges() ? -1 : int(newRow); }
    // The shown layer's sizes (words when merged): rows and columns of every map of weights().
    Eigen::Index shownQueries() const;
    Eigen::Index shownKeys() const;
};

// A map max-pooled into at most bins x bins blocks (core's pooling) by magnitude, the sign kept:
// a signed set's (a difference's) strongest change in a block survives whichever its sign, where
// max-pooling would keep only the largest positive value.
MatrixF poolSigned(const MatrixF &map, std::int64_t bins);

// Reads one layer of a set as the views draw it (LayerMaps); stops early, returning null, once
// `cancel` is set.
std::shared_ptr<const LayerMaps> readLayer(const ShownAttention &shown, int layer, const std::atomic<bool> *cancel);

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::ShownAttention)
