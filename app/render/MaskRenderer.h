#pragma once

#include "core/formats/ProjectFile.h"

#include <QColor>
#include <QCoreApplication>
#include <QFont>
#include <QRectF>

#include <optional>
#include <vector>

class QPainter;

namespace attnscope {

struct MaskRenderOptions {
    QFont font;
    QColor text = Qt::black;
    QColor base = Qt::white; // background and the lines between cells
    bool showLabels = true;
    bool showLegend = false; // allowed / masked / hatched / empty row, below the grid
    // Every n-th label where cells are lower than the text, instead of none.
    bool thinLabels = false;
    double hatchSpacing = 8.0; // painter units
};

struct MaskLayout {
    QRectF grid;
    double cell = 0.0;
    double labelWidth = 0.0;
    bool rotatedColumnLabels = false;
    bool labels = false; // token labels are drawn
    int labelStep = 1;
    QRectF legend;
};

// The effective Tq x Tk mask (custom AND causal AND padding) of a project: allowed cells
// green, masked ones dark, those masked by the causal or padding part (not the custom one)
// hatched, rows with no allowed key framed in red. The mask editor and figures share it.
// One entry of the mask's legend: its words and its swatch.
struct MaskLegendEntry {
    enum Swatch { Allowed, Masked, Hatched, Edge, Frame };
    QString text;
    Swatch swatch = Allowed;
};

class MaskRenderer
{
    Q_DECLARE_TR_FUNCTIONS(MaskRenderer)

public:
    MaskRenderer(const Project &project, const MaskRenderOptions &options);

    MaskLayout layout(const QRectF &target) const;
    void paint(QPainter &painter, const QRectF &target) const;
    std::optional<QPoint> cellAt(const QRectF &target, const QPointF &pos) const; // x = key, y = query

    static QColor allowedColor();
    static QColor maskedColor();
    static QColor windowColor(); // the sliding window's left edge

    // The legend's entries: only the kinds of cell the mask has; and their width side by side,
    // which a figure makes room for.
    std::vector<MaskLegendEntry> legendEntries() const;
    double legendWidth() const;

private:
    const Project &m_project;
    MaskRenderOptions m_options;
};

} // namespace attnscope
