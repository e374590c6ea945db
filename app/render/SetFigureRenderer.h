#pragma once

#include "app/render/FigureRenderer.h"
#include "core/analysis/AttentionSet.h"

#include <QCoreApplication>

#include <utility>
#include <vector>

namespace attnscope {

// Figures of an attention set (an imported file, a model's layers, a project's one layer):
//   Model   - layers x heads grid of small heatmaps, "Layer n" row titles, "Head n" column
//             titles, one "query"/"key" pair and one colour bar for the grid;
//   Rollout - attention rollout over all layers (core attentionRollout);
//   Head    - one (layer, head); Heads - one layer's heads in a row; Mean - one layer's mean.
// Layers and heads in FigureOptions are 0-based; titles count from 1, as the project figures'
// "Head 1" does. Sample 0 is shown. Grid tiles of maps longer than kMaxTileSide are max-pooled
// to that many cells per side (a tile is a few hundred pixels wide at most).
// The default width is a paper's column: 3.3 in for up to 4 heads, else 6.9 in.
class SetFigureRenderer : public Figure
{
    Q_DECLARE_TR_FUNCTIONS(SetFigureRenderer)

public:
    static constexpr int kMaxTileSide = 256;
    static constexpr double kSingleColumn = 237.6, kDoubleColumn = 496.8; // points

    // name: what the title calls the input (a file name, a project's title). allowed and
    // emptyRows: a project's mask (null: every cell is a value, as in an imported file).
    SetFigureRenderer(AttentionSet set, const QString &name, const FigureOptions &options,
                      const MaskMatrix *allowed = nullptr, std::vector<bool> emptyRows = {},
                      MaskFill maskFill = MaskFill::NegInf);
    // The same, keeping `allowed` alive as long as the figure (a pooled block's empty cells).
    SetFigureRenderer(AttentionSet set, const QString &name, const FigureOptions &options,
                      std::shared_ptr<const MaskMatrix> allowed);

    const FigureOptions &options() const { return m_options; }
    QSizeF naturalSize() const override;
    void paint(QPainter &painter, const QRectF &target) const override;
    QString title() const override;
    QString description() const override;
    QString problem() const override;

    // The heatmaps and where they go in target; Model and Heads: row by row.
    std::vector<FigureHeatmap> heatmaps(const QRectF &target) const;
    // Model and Heads: the (layer, head) of each heatmap, in heatmaps()' order.
    const std::vector<std::pair<int, int>> &tiles() const { return m_tiles; }
    bool isGrid() const;

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

    void addTile(const MatrixF &values, int layer, int head);
    void finishRanges();
    QFont font(double scale) const;
    QFont titleFont() const;
    QRectF titleRect(const QRectF &target) const;
    HeatmapOptions heatmapOptions(bool tile) const;
    GridLayout gridLayout(const QRectF &target) const;
    void paintGridTitles(QPainter &painter, const GridLayout &l) const;
    int gridRows() const;
    int gridColumns() const;

    AttentionSet m_set;
    QString m_name;
    FigureOptions m_options;
    const MaskMatrix *m_allowed = nullptr;
    std::shared_ptr<const MaskMatrix> m_ownedAllowed;
    std::vector<bool> m_emptyRows;
    MaskFill m_maskFill = MaskFill::NegInf;
    std::vector<HeatmapData> m_data;
    std::vector<std::pair<int, int>> m_tiles;
    QString m_problem;
};

} // namespace attnscope
