#pragma once

#include "app/render/ColorMap.h"
#include "app/render/HeatmapRenderer.h"
#include "app/render/MaskRenderer.h"
#include "core/AttentionTrace.h"
#include "core/ProjectFile.h"

#include <QCoreApplication>
#include <QFont>
#include <QList>
#include <QRectF>
#include <QString>

#include <optional>
#include <vector>

class QPainter;

namespace attnscope {

// What a figure shows.
enum class FigureView {
    Head,     // one head's heatmap
    Heads,    // every head as a grid of small heatmaps, each with its title
    Mean,     // the mean of the weights over heads
    HeadView, // tokens on two sides, lines weighted by attention
    Teaching, // the pipeline step by step for one head
    Mask,     // the effective mask
};

struct FigureOptions {
    FigureView view = FigureView::Head;
    int head = 0; // Head, HeadView, Teaching
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ColorMapKind colorMap = ColorMapKind::Viridis;
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

    static QList<FigureView> allViews();
    static QString viewKey(FigureView view); // "head", "heads", "mean", "headview", "teaching", "mask"
    static std::optional<FigureView> viewFromKey(const QString &key);
    static QString viewName(FigureView view); // translated
};

// Where one heatmap of a figure is painted (tests check its cells' colours).
struct FigureHeatmap {
    const HeatmapData *data = nullptr;
    HeatmapOptions options;
    QRectF target;
};

// Composes one view of a computed trace into a figure: title, the view, its colour bar or
// legend. Units are points (1/72 inch) and fonts are sized in them, so one figure paints
// alike onto a QImage (scaled by DPI / 72), a QSvgGenerator or a QPdfWriter.
class FigureRenderer
{
    Q_DECLARE_TR_FUNCTIONS(FigureRenderer)

public:
    FigureRenderer(const Project &project, const AttentionTrace &trace, const FigureOptions &options);

    const FigureOptions &options() const { return m_options; }
    // The size the figure has when nothing else is asked for, in points.
    QSizeF naturalSize() const;
    void paint(QPainter &painter, const QRectF &target) const;
    QString title() const;       // the title painted (empty: none)
    QString description() const; // what is shown, for file metadata

    // The heatmaps of a Head, Mean or Heads figure and where they go in target.
    std::vector<FigureHeatmap> heatmaps(const QRectF &target) const;
    // Where the mask grid of a Mask figure goes.
    MaskLayout maskLayout(const QRectF &target) const;
    MaskRenderOptions maskOptions() const;

private:
    QFont font(double scale = 1.0) const;
    QRectF titleRect(const QRectF &target) const;
    QRectF bodyRect(const QRectF &target) const;
    HeatmapOptions heatmapOptions(bool small) const;
    int gridColumns() const;
    int chooseColumns() const;
    bool sharedColorBar() const;
    // The size of one heatmap with cells of about gridSide / n, smaller where that exceeds maxSize.
    QSizeF heatmapNaturalSize(const HeatmapData &data, const HeatmapOptions &o, double gridSide,
                              const QSizeF &maxSize) const;
    QSizeF tileSize() const;     // of one tile of the Heads grid, margins included
    double gridAxisRoom() const; // Heads: the strips for the grid's "query" and "key"
    QFont titleFont() const;

    const Project &m_project;
    const AttentionTrace &m_trace;
    FigureOptions m_options;
    std::vector<HeatmapData> m_data; // Head and Mean: one; Heads: one per head
    int m_columns = 0;               // Heads: tiles per row (0: not chosen yet)
};

} // namespace attnscope
