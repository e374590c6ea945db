#pragma once

#include "app/gui/document/PooledJobs.h"
#include "app/render/ColorMap.h"

#include <QImage>
#include <QWidget>

#include <list>
#include <memory>

class QComboBox;
class QLabel;
class QProgressBar;
class QTimer;

namespace attnscope {

// A long project's attention at screen resolution (issue 11): the selected head, or the mean
// over heads, max-pooled to at most kPooledViewBins cells a side. The wheel zooms around the
// cursor and a drag pans; once the view rests for kSettleMs the visible block is recomputed on
// the worker (PooledJobs), exact as soon as it spans no more tokens than bins. Tiles are kept
// (least recently used first out, the whole-problem one always) and painted coarse to fine,
// so a move shows the nearest computed picture at once. Token labels appear on the axes once
// a token is at least kLabelPixels wide. Weights are coloured on a log scale, 1e-6 to 1;
// cells no key of which is allowed (weight 0) are grey.
class PooledHeatmapView : public QWidget
{
    Q_OBJECT

public:
    static constexpr int kSettleMs = 100;
    static constexpr int kProgressAfterMs = 500;
    static constexpr double kLabelPixels = 12.0;
    static constexpr int kMaxTiles = 12;

    explicit PooledHeatmapView(QWidget *parent = nullptr);

    // Shows `project` whole (a project of the same shape keeps the view); null: nothing.
    void setProject(std::shared_ptr<const Project> project);
    void setHead(int head); // -1: the mean over heads
    int head() const { return m_head; }
    void setColorMap(ColorMapKind kind);

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

signals:
    // The tile of the visible block arrived (tests and the status bar wait for it).
    void visibleTileReady(attnscope::PooledTilePtr tile);

protected:
    void paintEvent(QPaintEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    struct CachedTile {
        PooledTilePtr tile;
        QImage image; // for m_imageHead
        int imageHead = -2;
    };
    void settled();
    void tileArrived(PooledTilePtr tile);
    void updateProgress();
    void fillHeadBox();
    QImage imageOf(const PooledTile &tile) const;
    CachedTile *find(const PooledBlock &block);
    void paintLabels(QPainter &painter, const QRectF &plot) const;
    QRectF clamped(QRectF view) const;

    PooledJobs *m_jobs;
    std::shared_ptr<const Project> m_project;
    std::list<CachedTile> m_tiles; // most recently used first
    QRectF m_view;
    int m_head = 0;
    ColorMap m_colorMap;
    QString m_error;
    QPointF m_dragFrom;
    bool m_dragging = false;
    QTimer *m_settle;
    QTimer *m_progressTimer;
    QComboBox *m_headBox;
    QLabel *m_info;
    QProgressBar *m_progress;
};

} // namespace attnscope
