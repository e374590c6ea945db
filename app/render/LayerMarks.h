#pragma once

#include "core/analysis/AttentionSet.h"

#include <QFont>
#include <QLineF>
#include <QPainter>
#include <QRectF>
#include <QString>

#include <cstdint>
#include <optional>

namespace attnscope {

// What the model view, the heads grid and the exported Model figure draw from a layer's facts
// (LayerFacts: key/value heads, window), drawn the same way in each.

// Query heads sharing a key/value head come in groups of this many consecutive heads; 1 where
// every head has its own, or where the facts are unknown or do not divide the heads.
int keyValueGroupSize(const LayerFacts &facts, int heads);

// Group `group`'s frame: a dashed line in the group's colour (two colours, alternating), with
// `label` ("K/V 1"; none when empty) in a tag at the frame's top right where it fits inside.
void paintKeyValueGroup(QPainter &painter, const QRectF &frame, int group, const QString &label, const QFont &font);

// The sliding window's edge over a map of `queries` by `keys` tokens drawn in `cells`, whose
// left edge is key `firstKey` (1 where the first key is drawn apart, as a sink bar): row i
// reaches keys j > i - window, so the edge runs from (0, window - 1) to where it leaves the map.
// Nothing when there is no window or it covers every row.
std::optional<QLineF> windowEdge(const QRectF &cells, double queries, double keys, std::int64_t window,
                                 double firstKey = 0.0);

// The edge's pen: the colour the views give sliding windows.
QPen windowEdgePen(double width);

} // namespace attnscope
