#pragma once

#include "app/render/ColorMap.h"
#include "app/render/ColorScale.h"
#include "app/render/ShownAttention.h"
#include "app/render/TraceRanges.h"
#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QFont>
#include <QPoint>
#include <QRect>
#include <QRectF>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

class QImage;
class QPainter;

namespace attnscope {

enum class HeatmapQuantity {
    Weights, // softmax weights
    Scores,  // scaled scores before the mask (signed: shown with a diverging map)
};

enum class ScaleScope {
    Absolute, // weights 0..1; scores symmetric around 0 over all heads
    Shared,   // one range over all heads
    PerHead,  // each head its own range
};

// What one heatmap shows: a Tq by Tk matrix with its mask, labels and title. Holds a pointer
// to the shown layer's matrix (no copy, the layer kept alive), or owns a derived one such as the mean over heads.
struct HeatmapData {
    const MatrixF *values = nullptr;
    const MaskMatrix *allowed = nullptr; // may be null: everything allowed
    std::vector<bool> emptyRows;         // [Tq], may be empty
    QStringList rowLabels;               // queries
    QStringList columnLabels;            // keys
    QString title;
    bool signedValues = false; // scores: diverging scale around 0
    // A signed set's values (a comparison's B − A, AttentionSet::isSigned): drawn with the
    // diverging map on a linear scale symmetric around 0, whatever map and scale the user chose
    // for weights, so that 0 is white and the signs are blue and red.
    bool difference = false;
    double rangeMin = 0.0;
    double rangeMax = 1.0;
    MaskFill maskFill = MaskFill::NegInf; // decides what a masked cell of an empty row holds
    std::int64_t nonFinite = 0;           // NaN or Inf values in `values` (an overflow)
    std::int64_t nanCount = 0;            // of those, NaN; the others are +Inf or -Inf

    // One map of the layer shown: head in [0, H) that head, -1 the mean of the weights over
    // heads (masked cells stay 0). Scores where the source has them (a project's), else empty.
    // Uses the shown layer's ranges (TraceRanges): no pass over the heads is made here.
    static HeatmapData of(const ShownAttention &shown, int head, HeatmapQuantity quantity, ScaleScope scope);

    Eigen::Index rows() const { return values ? values->rows() : 0; }
    Eigen::Index cols() const { return values ? values->cols() : 0; }
    bool isAllowed(Eigen::Index r, Eigen::Index c) const { return !allowed || (*allowed)(r, c) != 0; }
    bool isEmptyRow(Eigen::Index r) const { return size_t(r) < emptyRows.size() && emptyRows[size_t(r)]; }
    // Whether a cell is painted as masked (grey): a masked weight the rules make 0. A masked
    // cell of an empty row under -1e9 holds 1/Tk and is painted by its value.
    bool showsAsMasked(Eigen::Index r, Eigen::Index c) const;

    // The block `range` of this map (x: first key, y: first query; width keys, height queries,
    // clipped to the map) as a map of its own, with its labels, coloured as the whole map is:
    // the whole map's colour scale for `kind` is built here where it is missing and shared. A
    // zoomed view paints it.
    HeatmapData block(const QRect &range, ColorScaleKind kind) const;

    std::shared_ptr<const MatrixF> owned;  // storage for derived values
    std::shared_ptr<const void> keepAlive; // the shown layer `values` and `allowed` point into
    // The colour scale: set by a figure whose tiles share one colour bar; otherwise built
    // from this map when first painted and kept (views repaint often; a percentile scale sorts).
    mutable std::shared_ptr<const ColorScale> scale;
};

struct HeatmapOptions {
    ColorMapKind colorMap = ColorMapKind::Viridis;
    ColorScaleKind colorScale = ColorScaleKind::Linear;
    bool showTitle = true;
    bool showLabels = true;
    bool showColorBar = true;
    bool showValues = true; // only where the number fits in the cell
    int precision = 2;
    QFont font;
    std::optional<QPoint> highlight; // x = key column, y = query row
    // A whole query row framed (a generation's newest token: the row its step added).
    std::optional<int> highlightRow;
    // Where cells are smaller than the text: every n-th label (n a round number) with a tick,
    // instead of none. Figures want them; the interactive views show values on hover instead.
    bool thinLabels = false;
    // Device pixels per painter unit for the cell image of large matrices; 0: the painter's
    // own (its transform and device pixel ratio). Vector exports set it to their DPI / 72.
    double pixelScale = 0.0;
    double hatchSpacing = 8.0; // between the lines over masked cells, in painter units
    bool axisTitles = false;   // "query" beside the row labels, "key" above the column labels
    // Cells are drawn this much larger than they are (right and down, under the next cell)
    // so that anti-aliased edges of neighbours never let the background through as a seam.
    bool overlapCells = true;
};

struct HeatmapLayout {
    QRectF title;
    QRectF grid;
    QRectF rowLabels;
    QRectF columnLabels;
    QRectF colorBar;
    double cellWidth = 0.0;
    double cellHeight = 0.0;
    bool rotatedColumnLabels = false;
    int rowLabelStep = 1; // every n-th row / column label is shown
    int columnLabelStep = 1;
    QRectF rowAxisTitle;       // "query", rotated
    QRectF columnAxisTitle;    // "key"
    bool valuesShown = false;  // values are printed in the cells
    bool valuesHidden = false; // values were asked for but the cells are too small for them
    double valueCellSize = 0;  // the smallest cell side that holds a value
};

// Paints a heatmap onto any QPainter (widget, image, SVG, PDF): cells coloured by the colour
// map over [rangeMin, rangeMax], masked cells hatched, empty query rows flagged in red,
// token labels, a colour bar and values in cells that are large enough. No widgets involved.
class HeatmapRenderer
{
public:
    HeatmapRenderer(const HeatmapData &data, const HeatmapOptions &options);

    HeatmapLayout layout(const QRectF &target) const;
    void paint(QPainter &painter, const QRectF &target) const;
    // The cell under a point (x = key column, y = query row), if any.
    std::optional<QPoint> cellAt(const QRectF &target, const QPointF &pos) const;
    // The colour of a value, as painted in an allowed cell.
    QRgb colorFor(double value) const;
    // The colour scale painted with (HeatmapData::scale, built on first use).
    const ColorScale &scale() const;

    // The colour bar alone, with the scale's ticks (the heads grid figure shares one bar
    // among all tiles). In HeatmapColorBar.cpp.
    void paintColorBar(QPainter &painter, const QRectF &bar) const;
    // The room a colour bar with its tick labels needs beside it.
    double colorBarWidth() const;
    // The widest tick label of the colour bar (at least that of "-0.00").
    double tickTextWidth() const;

    static QColor maskedColor();
    static QColor emptyRowColor();
    static QColor newRowColor(); // the frame of highlightRow
    // NaN cells (Inf - Inf: the softmax of an overflowed row) and +Inf/-Inf cells (a product or
    // sum past float32), each in a colour of its own that no colour map has: never read as a value.
    static QColor nanColor();
    static QColor infinityColor();
    static QColor nonFiniteColor(); // nanColor(): the name from before NaN and Inf were told apart
    // The room the colour bar's legend of non-finite colours takes under the bar (0 for none).
    double nonFiniteLegendHeight() const;
    static QString rowAxisName();    // "query", translated
    static QString columnAxisName(); // "key", translated
    // Diagonal hatching (bottom-left to top-right) over a rectangle with the painter's pen.
    // Lines, not a pattern brush: a pattern is laid out in device pixels and so differs
    // between a PNG at 300 DPI and a PDF; lines scale with the figure.
    static void paintHatch(QPainter &painter, const QRectF &rect, double spacing);
    // 1, 2, 5, 10, 20, 50, ...: the smallest such step that is at least n.
    static int roundStep(int n);

private:
    void paintCells(QPainter &painter, const HeatmapLayout &l) const;
    void paintLabels(QPainter &painter, const HeatmapLayout &l) const;
    void paintAxisTitles(QPainter &painter, const HeatmapLayout &l) const;
    // The cells as a width x height image (at most one pixel per cell; max-pooled blocks).
    QImage cellImage(int width, int height) const;

    const HeatmapData &m_data;
    HeatmapOptions m_options;
    ColorMap m_map;
};

} // namespace attnscope
