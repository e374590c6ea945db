#pragma once

#include "app/render/ColorMap.h"
#include "app/render/HeatmapRenderer.h"
#include "app/render/MaskRenderer.h"
#include "app/render/ShownAttention.h"

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

// What a figure shows.
enum class FigureView {
    Head,     // one head's heatmap
    Heads,    // every head as a grid of small heatmaps, each with its title
    Mean,     // the mean of the weights over heads
    HeadView, // tokens on two sides, lines weighted by attention
    Teaching, // the pipeline step by step for one head
    Mask,     // the effective mask
    // Of the whole set (a project's is its one layer):
    Model,   // layers x heads grid of small heatmaps
    Rollout, // attention rollout over all layers
};

struct FigureOptions {
    FigureView view = FigureView::Head;
    int head = 0;  // Head, HeadView, Teaching (0-based, in titles too)
    int layer = 0; // the layer of Head, Heads, Mean and HeadView (0-based; a project has one)
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ColorMapKind colorMap = ColorMapKind::Viridis;
    ColorScaleKind colorScale = ColorScaleKind::Linear;
    ScaleScope scale = ScaleScope::Absolute;
    bool colorBar = true;
    bool labels = true;
    bool values = true;
    bool axisTitles = true;       // "query" beside the rows, "key" above the columns
    bool overlayHeads = false;    // HeadView: every head in its own colour
    std::optional<QString> title; // none: the default title (short: shortFigureName); empty: no title
    int fontSize = 10;            // points
    bool transparent = false;     // else a white background
    int query = 0, key = 0;       // Teaching: the cell explained
    // Device pixels per point for images embedded where cells are smaller than a pixel;
    // 0: the painter's own. The exporter sets it from the DPI.
    double pixelScale = 0.0;
    // Attention sets with sub-word labels: word-level maps (AttentionStats.h, mergeWords).
    bool mergeWords = false;

    // The views of a project's figure (the export dialog lists these, and the set's views).
    static QList<FigureView> allViews();
    // The views of a set without intermediate tensors (a file, a model run).
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

// Composes one view of what the views show (ShownAttention: a set, its layer, a project's
// tensors) into a figure: title, the view, its colour bar or legend. Units are points (1/72
// inch) and fonts are sized in them, so one figure paints alike onto a QImage (scaled by
// DPI / 72), a QSvgGenerator or a QPdfWriter. The one figure renderer: the export dialog, Copy
// Figure and `attnscope-cli render` all paint through it.
//   Head, Mean, Heads - one layer (options.layer): a heatmap, or every head as a grid of tiles;
//   HeadView          - one layer's lines; Teaching and Mask need a project's tensors;
//   Model             - layers x heads grid of small heatmaps, "Layer n" row titles, "Head n"
//                       column titles, one "query"/"key" pair and one colour bar (FigureGrid.cpp);
//   Rollout           - attention rollout over all layers (core attentionRollout).
// Layers and heads count from 0, in options and titles. Sample 0 is shown. Model tiles of maps
// longer than kMaxTileSide are max-pooled to that many cells per side (core's partition). A
// project's mask is drawn wherever its maps are (not merged into words, not a rollout).
// The name a default title starts with, short enough for a slide: of a bilingual title
// ("中文 — English") the part in the interface's language (QLocale()), cut at its first colon or
// parenthesis; empty when still longer than kShortFigureName characters (the title then names the
// view and head alone: "Head 2 (weights)").
inline constexpr int kShortFigureName = 40;
QString shortFigureName(const QString &title);
// Of a bilingual title ("自注意力计算实例 — Self-attention worked example"), the half in the
// interface's language (QLocale()); any other title whole.
QString titleInLanguage(const QString &title);

class FigureRenderer
{
    Q_DECLARE_TR_FUNCTIONS(FigureRenderer)

public:
    static constexpr int kMaxTileSide = 256;
    // Model and Rollout are set in a paper's column: 3.3 in for up to 4 heads, else 6.9 in.
    static constexpr double kSingleColumn = 237.6, kDoubleColumn = 496.8; // points

    // allowed: cells drawn as masked where shown has no tensors of its own (a pooled block's
    // cells with no allowed key); null: every cell is a value.
    FigureRenderer(ShownAttention shown, const FigureOptions &options,
                   std::shared_ptr<const MaskMatrix> allowed = nullptr);

    const FigureOptions &options() const { return m_options; }
    // The size the figure has when nothing else is asked for, in points.
    QSizeF naturalSize() const;
    void paint(QPainter &painter, const QRectF &target) const;
    QString title() const;       // the title painted (empty: none)
    QString description() const; // what is shown, for file metadata
    // Why there is nothing to draw (no heads, a layer out of range, a view that needs a
    // project's tensors, a rollout of non-square maps); empty: drawable.
    QString problem() const;

    // The heatmaps and where they go in target; grids row by row.
    std::vector<FigureHeatmap> heatmaps(const QRectF &target) const;
    // Model: the (layer, head) of each heatmap, in heatmaps()' order.
    const std::vector<std::pair<int, int>> &tiles() const { return m_tiles; }
    // Where the mask grid of a Mask figure goes.
    MaskLayout maskLayout(const QRectF &target) const;
    MaskRenderOptions maskOptions() const;

    // The size of one heatmap with cells of about gridSide / n (at most maxCell), smaller
    // where that exceeds maxSize.
    static QSizeF heatmapNaturalSize(const HeatmapData &data, const HeatmapOptions &o, double gridSide, double maxCell,
                                     const QSizeF &maxSize);

private:
    struct GridLayout {
        QRectF tiles;            // the block of tiles
        double side = 0.0;       // of one tile
        QRectF rowTitles;        // "Layer n"
        QRectF columnTitles;     // "Head n"
        QRectF rowAxis, colAxis; // "query", "key"
        QRectF colorBar;
        int rowStep = 1, columnStep = 1; // every n-th title shown
        bool shortTitles = false;        // "3" rather than "Head 3"
    };

    // Model and Rollout: a figure of the whole set, set in a paper's column (FigureGrid.cpp).
    bool isSetFigure() const;
    void buildLayer(); // every other view: one layer
    void buildSet();
    QString layerTitle() const; // the view part of a title ("head 2 (weights)")
    QString setTitle() const;   // ("layer 3, head 2")
    QSizeF setNaturalSize() const;
    std::vector<FigureHeatmap> setHeatmaps(const QRectF &target) const;
    void paintSetFigure(QPainter &painter, const QRectF &target) const;
    void addTile(const MatrixF &values, int layer, int head);
    // A tile of max-pooled blocks of the set's maps, labelled with each block's first token.
    void addPooledTile(MatrixF pooled, int layer, int head);
    void pushTile(HeatmapData d, std::shared_ptr<MatrixF> owned, int layer, int head);
    void finishTileRanges();
    // A grid with one colour bar: one log or percentile scale over every tile's values.
    void shareOneScale();
    HeatmapOptions setHeatmapOptions(bool tile) const;
    GridLayout gridLayout(const QRectF &target) const;
    // A layer's notes under its row title ("K/V heads: 2", "window 4096"), and the key/value
    // group frames and sliding-window edges over the Model figure's tiles.
    QStringList layerNotes(int layer) const;
    void paintLayerMarks(QPainter &painter, const GridLayout &l, const QRectF &target) const;
    void paintGridTitles(QPainter &painter, const GridLayout &l) const;

    QFont font(double scale = 1.0) const;
    QFont titleFont() const;
    QRectF titleRect(const QRectF &target) const;
    QRectF bodyRect(const QRectF &target) const;
    HeatmapOptions heatmapOptions(bool small) const;
    int gridColumns() const;
    int chooseColumns() const;
    bool sharedColorBar() const;
    QSizeF tileSize() const;     // of one tile of the Heads grid, margins included
    double gridAxisRoom() const; // Heads: the strips for the grid's "query" and "key"
    bool hasTensors() const { return m_layer.tensors != nullptr; }

    ShownAttention m_shown;
    ShownAttention m_layer; // the layer the per-layer views show, read (and merged) as asked
    FigureOptions m_options;
    std::shared_ptr<const MaskMatrix> m_allowed;
    std::vector<HeatmapData> m_data; // Head and Mean: one; Heads: one per head; Model: one per tile
    std::vector<std::pair<int, int>> m_tiles;
    QString m_problem;
    int m_columns = 0; // Heads: tiles per row (0: not chosen yet)
};

} // namespace attnscope
