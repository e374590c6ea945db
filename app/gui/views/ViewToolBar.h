#pragma once

#include "app/gui/views/HeatmapView.h"

#include <QToolBar>

class QCheckBox;
class QComboBox;

namespace attnscope {

// The View toolbar: how every heatmap of the window draws (colour map, weights or scores, the
// scale's scope and kind, values in cells) and whether the head view overlays every head.
class ViewToolBar : public QToolBar
{
    Q_OBJECT

public:
    explicit ViewToolBar(QWidget *parent = nullptr);

    HeatmapViewSettings settings() const;
    bool overlay() const;
    void setColorMap(ColorMapKind kind);
    // The model view's first key apart (HeatmapViewSettings::sinkApart).
    void setSinkApart(bool apart);
    // A source of weights only (an attention file, a model run): no scores to choose.
    void setWeightsOnly(bool weightsOnly);
    // A long project shown pooled is one dark colour on a linear 0..1 scale: on, the scale turns
    // to log if it was linear; off, it goes back to linear unless the user chose one meanwhile.
    void preferLogScale(bool prefer);

signals:
    void settingsChanged();
    void overlayToggled(bool overlay);

private:
    void setScale(ColorScaleKind kind);

    QComboBox *m_colorMap;
    QComboBox *m_quantity;
    QComboBox *m_scope;
    QComboBox *m_colorScale;
    QCheckBox *m_values;
    QCheckBox *m_sinkApart;
    QCheckBox *m_overlay;
    bool m_logPreferred = false; // the scale was switched to log by preferLogScale
    bool m_settingScale = false;
};

} // namespace attnscope
