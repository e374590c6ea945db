#pragma once

#include "app/gui/document/PooledJobs.h"
#include "app/gui/document/PooledTileSource.h"
#include "app/render/ColorMap.h"
#include "app/render/ColorScale.h"
#include "app/render/FigureRenderer.h"
#include "app/render/HeatmapRenderer.h"
#include "core/analysis/AttentionSet.h"

#include <QImage>
#include <QWidget>

#include <list>
#include <memory>

class QComboBox;
class QLabel;
class QProgressBar;
class QTimer;

namespace attnscope {

class ElidedLabel;

// A long project's attention at screen resolution (issue 11): the selected head, or the mean
// over heads, max-pooled to at most kPooledViewBins cells a side (the mean over heads is pooled
// from the head-averaged weights: the max over a block of the mean, PoolOptions::headMean). A
// caption above the map says what a cell is. The wheel zooms around the cursor and a drag pans
// (the keyboard too: + and - zoom, the arrow keys pan, Home or a double-click shows the whole
// problem); once the view rests for kSettleMs the visible block is recomputed on the worker
// (PooledJobs), exact as soon as it spans no more tokens than bins. Tiles are kept (least
// recently used first out, the whole-problem one always) and painted coarse to fine, so a move
// shows the nearest computed picture at once. Token labels appear on the axes once a token is
// at least kLabelPixels wide; hover names the query and key ranges under the cursor and the
// value. Weights are coloured by the toolbar's colour scale and scope over the range of the
// whole-problem tile (max-pooling keeps the maximum, so every zoom shares one colour bar,
// painted right of the map); cells no key of which is allowed (weight 0) are grey. Only weights
// are pooled: asked for another quantity the view says so and shows weights.
class PooledHeatmapView : public QWidget
{
    Q_OBJECT

public:
    static constexpr int kSettleMs = 100;
    static constexpr int kProgressAfterMs = 500;
    static constexpr double kLabelPixels = 12.0;
    static constexpr int kMaxTiles = 12;

    explicit PooledHeatmapView(QWidget *parent = nullptr);

    // Shows the set of `source` whole (a set of the same shape keeps the view); null: nothing.
    void setSource(std::shared_ptr<const PooledTileSource> source);
    const std::shared_ptr<const PooledTileSource> &source() const { return m_source; }
    void setHead(int head); // -1: the mean over heads
    int head() const { return m_head; }
    void setColorMap(ColorMapKind kind);
    void setColorScale(ColorScaleKind kind);
    ColorScaleKind colorScaleKind() const { return m_colorScaleKind; }
    void setScope(ScaleScope scope);
    // Only Weights is pooled: another quantity shows the notice (quantityNotice()).
    void setQuantity(HeatmapQuantity quantity);
    // The colour of a value as painted now (the scale built over the whole-problem tile).
    QRgb colorOf(float value) const;

    // The visible part in tokens: x keys, y queries.
    QRectF viewRect() const { return m_view; }
    void setViewRect(const QRectF &view);
    // Where the heatmap is painted, in widget coordinates.
    QRectF plotRect() const;
    // The block the view asks for now, and its tile once computed (null until then).
    PooledBlock visibleBlock() const;
    PooledTilePtr visibleTile() const;
    PooledJobs *jobs() const { return m_jobs; }
    QProgressBar *progressBar() const { return m_progress; }
    QComboBox *headBox() const { return m_headBox; }
    QString errorMessage() const { return m_error; }
    // What a cell is ("the maximum over its block of …"), shown above the map.
    ElidedLabel *caption() const { return m_caption; }
    // Shown when the toolbar asks for a quantity the pooled path does not compute.
    ElidedLabel *quantityNotice() const { return m_quantityNotice; }
    // The hover text at a widget position: query and key ranges (token labels at one token a
    // cell) and the value of the finest computed tile there; empty outside the map or where
    // nothing is computed. lastHoverText() is what the last mouse move showed.
    QString hoverText(const QPointF &pos) const;
    // The token positions labelled now along the query (left) and key (top) axes: every token
    // whose row or column shows once a token is kLabelPixels wide, else round numbers.
    std::vector<std::int64_t> queryLabelTokens() const;
    std::vector<std::int64_t> keyLabelTokens() const;
    QString lastHoverText() const { return m_hoverText; }

    // The visible block as figures draw it (Export Figure, Copy Figure): a one-layer attention
    // set of every head's tile, drawn as `view` (Head) of `head`; with the mean over heads
    // shown, the pooled mean alone, drawn as Mean. Labels: the token where a cell is one
    // token, else its token range ("120–125"). `name` says what is shown, which block and what
    // a cell is; `title` adds the head. `allowed`: the cells with a weight, as the view draws
    // them (weight 0: no key of the block allowed, grey here, masked in figures). An empty set
    // until the visible block is computed.
    struct PooledFigure {
        AttentionSet set;
        std::shared_ptr<const MaskMatrix> allowed;
        QString name, title;
        FigureView view = FigureView::Head;
        int head = 0;
    };
    PooledFigure pooledFigure(const QString &documentName) const;

signals:
    // The tile of the visible block arrived (tests and the status bar wait for it).
    void visibleTileReady(attnscope::PooledTilePtr tile);

protected:
    void paintEvent(QPaintEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    // + and - zoom around the middle, the arrow keys pan a quarter of the view, Home shows the
    // whole problem (as does a double-click).
    void keyPressEvent(QKeyEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct CachedTile {
        PooledTilePtr tile;
        QImage image; // for m_imageHead
        int imageHead = -2;
    };
    void settled();
    void updateCaption();
    void invalidateImages();
    const MatrixF &shownMatrix(const PooledTile &tile) const;
    // Rebuilds the colour scale when its tile, head or settings changed; true when it did.
    bool refreshScale() const;
    // The finest tile that covers token position (x = key, y = query), or null.
    const PooledTile *tileAt(const QPointF &tokens) const;
    void paintColorBar(QPainter &painter, const QRectF &bar) const;
    void tileArrived(PooledTilePtr tile);
    void updateProgress();
    void fillHeadBox();
    QImage imageOf(const PooledTile &tile) const;
    CachedTile *find(const PooledBlock &block);
    void paintLabels(QPainter &painter, const QRectF &plot) const;
    QRectF clamped(QRectF view) const;
    // Scales the view by `factor` keeping the token at `fraction` of the plot where it is.
    void zoomAround(QPointF fraction, double factor);

    PooledJobs *m_jobs;
    std::shared_ptr<const PooledTileSource> m_source;
    std::list<CachedTile> m_tiles; // most recently used first
    QRectF m_view;
    int m_head = 0;
    ColorMap m_colorMap;
    QString m_error;
    QString m_hoverText;
    ColorScaleKind m_colorScaleKind = ColorScaleKind::Linear; // the toolbar's first setting
    ScaleScope m_scope = ScaleScope::Absolute;
    HeatmapQuantity m_quantity = HeatmapQuantity::Weights;
    // Built over the whole-problem tile for the shown head, once per change.
    mutable ColorScale m_scale;
    mutable PooledTilePtr m_scaleTile;
    mutable int m_scaleHead = -2;
    QPointF m_dragFrom;
    bool m_dragging = false;
    QTimer *m_settle;
    QTimer *m_progressTimer;
    QComboBox *m_headBox;
    QLabel *m_info;
    QProgressBar *m_progress;
    ElidedLabel *m_caption;
    ElidedLabel *m_quantityNotice;
};

} // namespace attnscope
