#pragma once

#include "app/gui/document/AttentionController.h"

#include <QAbstractScrollArea>

#include <optional>

namespace attnscope {

// Every layer's heads at a glance: a row per layer ("Layer n"), a column per head ("Head n"),
// numbered from 1 as the heads grid numbers heads. The thumbnails come finished from a worker
// (AttentionController::requestThumbnails); painting only draws images. Tiles never shrink
// below kMinTileSize: a large model scrolls both ways while the headers stay in view. A click
// on a tile activates that (layer, head). Positions are in viewport() coordinates.
//
// What the set's layerFacts say is drawn: in a layer whose query heads share key/value heads,
// each key/value head's query heads are framed together (as the heads grid frames them); a
// sliding-window layer says "window N" under its label and each of its maps shows where the band
// ends (the diagonal edge past which keys are out of reach). With the sink apart (thumbnails made
// so), each map's first key is a thin bar at the tile's left, the map beside it.
class ModelView : public QAbstractScrollArea
{
    Q_OBJECT

public:
    explicit ModelView(QWidget *parent = nullptr);

    static constexpr int kMinTileSize = 64; // pixels: a readable map
    // Pixels: a small model fills the view up to here; beyond it a thumbnail (at most
    // kThumbnailSize cells a side, drawn without smoothing) only grows its blocks.
    static constexpr int kMaxTileSize = 5 * AttentionJobs::kThumbnailSize / 2;

    void setThumbnails(AttentionController::ThumbnailsPtr thumbnails);
    void clear(); // "Computing..." until the next thumbnails
    // How far the thumbnails being computed are (0..100), shown until they arrive.
    void setProgress(int percent);
    int progress() const { return m_progress; }
    AttentionController::ThumbnailsPtr thumbnails() const { return m_thumbs; }
    int layers() const { return m_thumbs ? m_thumbs->layers : 0; }
    int heads() const { return m_thumbs ? m_thumbs->heads : 0; }
    // Whether tiles are shown (the benchmark and tests wait for it).
    bool isFilled() const { return m_thumbs && !m_thumbs->images.empty(); }

    // What each layer's tooltip says of how its attention was made (the set's layerFacts).
    void setLayerFacts(std::vector<LayerFacts> facts) { m_facts = std::move(facts); }
    // The tooltip of a tile: its layer and head, and the layer's facts where they are known.
    QString tileToolTip(int layer, int head) const;

    void setCurrent(int layer, int head);
    int currentLayer() const { return m_layer; }
    int currentHead() const { return m_head; }

    int tileSize() const;
    QRect tileRect(int layer, int head) const;
    // Where a tile's map is drawn, and its sink bar (empty unless the sink is apart).
    QRectF mapRect(int layer, int head) const;
    QRectF sinkRect(int layer, int head) const;
    // Query heads per key/value head in a layer (1 where nothing is shared or unknown), and the
    // frame around key/value head g's query heads.
    int groupSize(int layer) const;
    QRect groupFrame(int layer, int group) const;
    // The row header: "Layer n", and under it "window N" for a sliding-window layer.
    QString layerNote(int layer) const;
    // The edge of a sliding window's band on a map, in viewport coordinates: the line between the
    // last key out of reach (j = i - window) and the first in reach; none where the layer has no
    // window, the window covers every query, or the maps are merged into words.
    std::optional<QLineF> windowEdge(int layer, int head) const;
    // The (layer, head) under a viewport position, or (-1, -1).
    std::pair<int, int> tileAt(const QPoint &pos) const;

    QSize sizeHint() const override { return {640, 480}; }

signals:
    void headActivated(int layer, int head);

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    std::vector<LayerFacts> m_facts;
    int rowHeaderWidth() const;
    int columnHeaderHeight() const;
    void updateScrollRange();
    bool activateAt(const QPoint &viewportPos);

    AttentionController::ThumbnailsPtr m_thumbs;
    int m_layer = 0;
    int m_head = 0;
    int m_progress = -1; // -1: none reported
};

} // namespace attnscope
