#include "app/gui/views/ViewToolBar.h"

#include "app/gui/views/PlainText.h"
#include "app/render/ColorScale.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QScopedValueRollback>

namespace attnscope {

ViewToolBar::ViewToolBar(QWidget *parent)
    : QToolBar(tr("View"), parent), m_colorMap(new QComboBox), m_quantity(new QComboBox), m_scope(new QComboBox),
      m_colorScale(new QComboBox), m_values(new QCheckBox(tr("Values"))), m_sinkApart(new QCheckBox(tr("Sink apart"))),
      m_overlay(new QCheckBox(tr("Overlay heads")))
{
    setObjectName(QStringLiteral("ViewToolBar"));
    for (ColorMapKind k : ColorMap::all())
        m_colorMap->addItem(ColorMap::displayName(k), int(k));
    m_quantity->addItem(tr("Weights (softmax)"), int(HeatmapQuantity::Weights));
    m_quantity->addItem(tr("Scores (scaled, before mask)"), int(HeatmapQuantity::Scores));
    m_scope->addItem(tr("Scale 0..1"), int(ScaleScope::Absolute));
    m_scope->addItem(tr("Shared scale"), int(ScaleScope::Shared));
    m_scope->addItem(tr("Per-head scale"), int(ScaleScope::PerHead));
    m_colorScale->setObjectName(QStringLiteral("viewColorScale"));
    m_colorScale->setToolTip(tr("How values map to colours: log and percentile show the structure of long heads."));
    for (ColorScaleKind k : ColorScale::all())
        m_colorScale->addItem(ColorScale::displayName(k), int(k));
    m_values->setChecked(true);
    m_sinkApart->setObjectName(QStringLiteral("viewSinkApart"));
    m_sinkApart->setToolTip(tr("Model view: show each map's first token (where many heads park their attention) "
                               "as a thin bar beside the map, and leave it out of the colour scale. The log "
                               "scale is another way to see past it."));
    addWidget(plainLabel(tr(" Colours ")));
    for (QWidget *w : std::initializer_list<QWidget *>{m_colorMap, m_quantity, m_scope, m_colorScale, m_sinkApart,
                                                       m_values, m_overlay})
        addWidget(w);
    for (QComboBox *box : {m_colorMap, m_quantity, m_scope, m_colorScale})
        connect(box, &QComboBox::currentIndexChanged, this, &ViewToolBar::settingsChanged);
    connect(m_colorScale, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_settingScale)
            m_logPreferred = false; // the user's choice from now on
    });
    connect(m_values, &QCheckBox::toggled, this, &ViewToolBar::settingsChanged);
    connect(m_sinkApart, &QCheckBox::toggled, this, &ViewToolBar::settingsChanged);
    connect(m_overlay, &QCheckBox::toggled, this, &ViewToolBar::overlayToggled);
}

HeatmapViewSettings ViewToolBar::settings() const
{
    HeatmapViewSettings s;
    s.colorMap = ColorMapKind(m_colorMap->currentData().toInt());
    s.quantity = HeatmapQuantity(m_quantity->currentData().toInt());
    s.scope = ScaleScope(m_scope->currentData().toInt());
    s.colorScale = ColorScaleKind(m_colorScale->currentData().toInt());
    s.showValues = m_values->isChecked();
    s.sinkApart = m_sinkApart->isChecked();
    return s;
}

void ViewToolBar::setSinkApart(bool apart)
{
    m_sinkApart->setChecked(apart);
}

bool ViewToolBar::overlay() const
{
    return m_overlay->isChecked();
}

void ViewToolBar::setColorMap(ColorMapKind kind)
{
    m_colorMap->setCurrentIndex(m_colorMap->findData(int(kind)));
}

void ViewToolBar::setWeightsOnly(bool weightsOnly)
{
    if (weightsOnly)
        m_quantity->setCurrentIndex(m_quantity->findData(int(HeatmapQuantity::Weights)));
    m_quantity->setEnabled(!weightsOnly);
}

void ViewToolBar::preferLogScale(bool prefer)
{
    const auto scale = ColorScaleKind(m_colorScale->currentData().toInt());
    if (prefer && scale == ColorScaleKind::Linear) {
        setScale(ColorScaleKind::Log);
        m_logPreferred = true;
    } else if (!prefer && m_logPreferred) {
        setScale(ColorScaleKind::Linear);
        m_logPreferred = false;
    }
}

void ViewToolBar::setScale(ColorScaleKind kind)
{
    const QScopedValueRollback<bool> guard(m_settingScale, true);
    m_colorScale->setCurrentIndex(m_colorScale->findData(int(kind)));
}

} // namespace attnscope
