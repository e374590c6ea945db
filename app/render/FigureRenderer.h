#pragma once

#include "app/render/ColorMap.h"
#include "app/render/HeatmapRenderer.h"
#include "app/render/MaskRenderer.h"
#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QCoreApplication>
#include <QFont>
#include <QList>
#include <QRectF>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QPainter;

namespace attnscope {

class SetFigureRenderer;

// What a figure shows.
enum class FigureView {
    Head,     // one head's heatmap
    Heads,    // every head as a grid of small heatmaps, each with its title
    Mean,     // the mean of the weights over heads
    HeadView, // tokens on two sides, lines weighted by attention
    Teaching, // the pipeline step by step for one head
    Mask,     // the effective mask
    // Of an attention set (SetFigureRenderer; a project's is its one layer):
    Model,   // layers x heads grid of small heatmaps
    Rollout, // attention rollout over all layers
};

struct FigureOptions {
    FigureView view = FigureView::Head;
    int head = 0;  // Head, HeadView, Teaching (0-based; titles count from 1)
    int layer = 0; // of an attention set: Head, Heads, Mean (0-based)
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ColorMapKind colorMap = ColorMapKind::Viridis;
    ColorScaleKind colorScale = ColorScaleKind::Linear;
    ScaleScope scale = ScaleScope::Absolute;
    bool colorBar = true;
    bool labels = true;
    bool values = true;
    bool axisTitles = true;       // "query" beside the rows, "key" above the columns
    bool overlayHeads = false;    // HeadView: every head in its own colour
    std::optional<QString> title; // none: the default title; empty: no title
    int fontSize = 10;            // points
    bool transparent = false;     // else a white background
    int query = 0, key = 0;       // Teaching: the cell explained
    // Device pixels per point for images embedded where cells are smaller than a pixel;
    // 0: the painter's own. The exporter sets it from the DPI.
    double pixelScale = 0.0;
    // Attention sets with sub-word labels: word-level maps (AttentionStats.h, mergeWords).
    bool mergeWords = false;

    // The views of a project's figure (the export dialog lists these).
    static QList<FigureView> allViews();
    // The views of an attention set's figure (SetFigureRenderer).
    static QList<FigureView> setViews();
    // "head", "heads", "mean", "headview", "teaching", "mask", "model", "rollout"
    static QString viewKey(FigureView view);
    static std::optional<FigureView> viewFromKey(const QString &key);
    static QString viewName(FigureView view); // translated
};

// Where one heatmap of a figure is painted (tests check its cells' colours).
struct FigureHeatmap {
    const HeatmapData *data = nullptr;
    HeatmapOptions options;
    QRectF target;
};

// What FigureExporter paints into a file: a figure of a project's trace (FigureRenderer) or
// of an attention set (SetFigureRenderer). Units are points.
class Figure
{
public:
    virtual ~Figure() = default;
    // The size the figure has when nothing else is asked for, in points.
    virtual QSizeF naturalSize() const = 0;
    virtual void paint(QPainter &painter, const QRectF &target) const = 0;
    virtual QString title() const = 0;       // the title painted (empty: none)
    virtual QString description() const = 0; // what is shown, for file metadata
    // Why there is nothing to draw (no heads, a rollout of non-square maps); empty: drawable.
    virtual QString problem() const = 0;
};

// Composes one view of a computed trace into a figure: title, the view, its colour bar or
// legend. Units are points (1/72 inch) and fonts are sized in them, so one figure paints
// alike onto a QImage (scaled by DPI / 72), a QSvgGenerator or a QPdfWriter.
class FigureRenderer : public Figure
{
    Q_DECLARE_TR_FUNCTIONS(FigureRenderer)

public:
    FigureRenderer(const Project &project, const AttentionTrace &trace, const FigureOptions &options);

    const FigureOptions &options() const { return m_options; }
    QSizeF naturalSize() const override;
    void paint(QPainter &painter, const QRectF &target) const override;
    QString title() const override;
    QString description() const override;
    QString problem() const override;

    // The heatmaps of a Head, Mean or Heads figure and where they go in target.
    std::vector<FigureHeatmap> heatmaps(const QRectF &target) const;
    // Where the mask grid of a Mask figure goes.
    MaskLayout maskLayout(const QRectF &target) const;
    MaskRenderOptions maskOptions() const;

    // The size of one heatmap with cells of about gridSide / n (at most maxCell), smaller
    // where that exceeds maxSize.
    static QSizeF heatmapNaturalSize(const HeatmapData &data, const HeatmapOptions &o, double gridSide, double maxCell,
                                     const QSizeF &maxSize);

private:
    QFont font(double scale = 1.0) const;
    QRectF titleRect(const QRectF &target) const;
    QRectF bodyRect(const QRectF &target) const;
    HeatmapOptions heatmapOptions(bool small) const;
    int gridColumns() const;
    int chooseColumns() const;
    bool sharedColorBar() const;
    QSizeF tileSize() const;     // of one tile of the Heads grid, margins included
    double gridAxisRoom() const; // Heads: the strips for the grid's "query" and "key"
    QFont titleFont() const;

    const Project &m_project;
    const AttentionTrace &m_trace;
    FigureOptions m_options;
    std::vector<HeatmapData> m_data; // Head and Mean: one; Heads: one per head
    // Model, Rollout and word-merged maps: the figure of the trace's one layer as a set.
    std::shared_ptr<const SetFigureRenderer> m_set;
    int m_columns = 0; // Heads: tiles per row (0: not chosen yet)
};

} // namespace attnscope
