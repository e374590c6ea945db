// FigureOptions: the views a figure can show, their keys and names.

#include "app/render/FigureRenderer.h"

namespace attnscope {

QList<FigureView> FigureOptions::allViews()
{
    return {FigureView::Head,     FigureView::Heads,    FigureView::Mean,
            FigureView::HeadView, FigureView::Teaching, FigureView::Mask};
}

QList<FigureView> FigureOptions::setViews()
{
    return {FigureView::Model, FigureView::Rollout, FigureView::Head,
            FigureView::Heads, FigureView::Mean,    FigureView::HeadView};
}

QString FigureOptions::viewKey(FigureView view)
{
    static const char *const keys[] = {"head", "heads", "mean", "headview", "teaching", "mask", "model", "rollout"};
    return QString::fromLatin1(keys[int(view)]);
}

std::optional<FigureView> FigureOptions::viewFromKey(const QString &key)
{
    for (FigureView v : allViews() + setViews())
        if (viewKey(v) == key)
            return v;
    return std::nullopt;
}

QString FigureOptions::viewName(FigureView view)
{
    switch (view) {
    case FigureView::Head:
        return FigureRenderer::tr("One head");
    case FigureView::Heads:
        return FigureRenderer::tr("All heads (grid)");
    case FigureView::Mean:
        return FigureRenderer::tr("Mean over heads");
    case FigureView::HeadView:
        return FigureRenderer::tr("Head view (token lines)");
    case FigureView::Teaching:
        return FigureRenderer::tr("Step by step");
    case FigureView::Mask:
        return FigureRenderer::tr("Mask");
    case FigureView::Model:
        return FigureRenderer::tr("Layers and heads (grid)");
    case FigureView::Rollout:
        return FigureRenderer::tr("Attention rollout");
    }
    return {};
}

} // namespace attnscope
