#include "app/render/ShownAttention.h"

#include "core/analysis/AttentionStats.h"
#include "core/analysis/Pooling.h"

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

} // namespace

ShownAttention ShownAttention::ofTensors(std::shared_ptr<const LayerTensors> tensors)
{
    ShownAttention out;
    if (!tensors)
        return out;
    const Project &p = tensors->project;
    out.title = QString::fromStdString(p.title);
    if (tensors->trace.heads() > 0) {
        // Not copied: the set keeps the computation alive.
        out.set = AttentionSet::fromTrace(tensors->trace, tensors);
        // Labels that do not match the trace's sizes (none given) leave the set's empty.
        (void)out.set.setTokens(p.queryTokens, p.keyLabels());
        const AttentionSpec &spec = p.problem.spec;
        out.set.layerFacts = {{spec.heads, spec.keyValueHeads(), p.problem.mask.window, spec.scale()}};
    }
    out.tensors = std::move(tensors);
    return out;
}

ShownAttention ShownAttention::ofProject(Project project, AttentionTrace trace)
{
    auto tensors = std::make_shared<LayerTensors>();
    tensors->ranges = TraceRanges::of(trace);
    tensors->project = std::move(project);
    tensors->trace = std::move(trace);
    return ofTensors(std::move(tensors));
}

bool ShownAttention::merges() const
{
    return mergeWords && !set.queryWordOf.empty() && !set.keyWordOf.empty();
}

QStringList ShownAttention::queryLabels() const
{
    return toLabels(merges() ? set.queryWordLabels() : set.queryTokens);
}

QStringList ShownAttention::keyLabels() const
{
    return toLabels(merges() ? set.keyWordLabels() : set.keyTokens);
}

MatrixD ShownAttention::shownMap(int layer, int head) const
{
    const MatrixD m = set.map(0, layer, head).cast<double>();
    return merges() ? attnscope::mergeWords(m, set.queryWordOf, set.keyWordOf) : m;
}

const LayerTensors *ShownAttention::tensorsOf(int l) const
{
    return tensors && tensors->layer == l ? tensors.get() : nullptr;
}

const std::vector<MatrixF> *ShownAttention::weights() const
{
    if (const LayerTensors *t = shownTensors())
        return &t->trace.weights;
    return maps && maps->layer == layer ? &maps->weights : nullptr;
}

const std::vector<MatrixF> *ShownAttention::scores() const
{
    const LayerTensors *t = shownTensors();
    return t && !t->trace.scores.empty() ? &t->trace.scores : nullptr;
}

const TraceRanges *ShownAttention::ranges() const
{
    if (const LayerTensors *t = shownTensors())
        return &t->ranges;
    return maps && maps->layer == layer ? &maps->ranges : nullptr;
}

int ShownAttention::heads() const
{
    const auto *w = weights();
    return w ? int(w->size()) : 0;
}

const MaskMatrix *ShownAttention::allowed() const
{
    const LayerTensors *t = shownTensors();
    return t && t->trace.allowed.size() ? &t->trace.allowed : nullptr;
}

std::vector<bool> ShownAttention::emptyRows() const
{
    const LayerTensors *t = shownTensors();
    return t ? t->trace.emptyRows : std::vector<bool>();
}

MaskFill ShownAttention::maskFill() const
{
    const LayerTensors *t = shownTensors();
    return t ? t->project.problem.spec.maskFill : MaskFill::NegInf;
}

Eigen::Index ShownAttention::shownQueries() const
{
    const auto *w = weights();
    return w && !w->empty() ? w->front().rows() : 0;
}

Eigen::Index ShownAttention::shownKeys() const
{
    const auto *w = weights();
    return w && !w->empty() ? w->front().cols() : 0;
}

MatrixF poolSigned(const MatrixF &map, std::int64_t bins)
{
    const MatrixF up = poolMatrix(map, bins, PoolMode::Max);
    const MatrixF down = poolMatrix(MatrixF(-map), bins, PoolMode::Max);
    MatrixF out(up.rows(), up.cols());
    for (Eigen::Index i = 0; i < out.size(); ++i)
        out.data()[i] = up.data()[i] >= down.data()[i] ? up.data()[i] : -down.data()[i];
    return out;
}

std::shared_ptr<const LayerMaps> readLayer(const ShownAttention &shown, int layer, const std::atomic<bool> *cancel)
{
    auto out = std::make_shared<LayerMaps>();
    const AttentionSet &set = shown.set;
    if (set.isEmpty())
        return out;
    out->layer = std::clamp(layer, 0, set.layers() - 1);
    for (int h = 0; h < set.heads(); ++h) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return nullptr;
        out->weights.push_back(shown.merges() ? MatrixF(shown.shownMap(out->layer, h).cast<float>())
                                              : set.map(0, out->layer, h));
    }
    out->ranges = TraceRanges::ofWeights(out->weights);
    if (set.isSigned()) {
        // A difference is ranged by its largest |value|, as scores are (HeatmapData::of).
        for (const MatrixF &m : out->weights) {
            double top = 0.0;
            for (Eigen::Index i = 0; i < m.size(); ++i)
                if (std::isfinite(m.data()[i]))
                    top = std::max(top, std::abs(double(m.data()[i])));
            out->ranges.maxAbsScore.push_back(top);
        }
    }
    return out;
}

} // namespace attnscope
