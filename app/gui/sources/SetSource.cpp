#include "app/gui/sources/SetSource.h"

#include "app/gui/document/AttentionController.h"
#include "app/gui/document/JobRunner.h"
#include "app/gui/document/LongAttention.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RecentFiles.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowStatus.h"

#include <QAction>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QSpinBox>
#include <QTabWidget>
#include <QToolBar>

namespace attnscope {

SetSource::SetSource(SourceHost &host, QObject *parent)
    : Source(host, parent), m_layerBar(new QToolBar(tr("Layer"))), m_layerSpin(new QSpinBox),
      m_mergeWords(new QAction(tr("&Merge Sub-word Tokens into Words"), this))
{
    m_layerBar->setObjectName(QStringLiteral("LayerToolBar"));
    m_layerSpin->setObjectName(QStringLiteral("layerSelector"));
    m_layerSpin->setPrefix(tr("Layer "));
    m_layerSpin->setRange(0, 0);
    m_layerSpin->setToolTip(tr("The layer the heads, the enlarged head, the mean and the head view show."));
    m_layerBar->addWidget(m_layerSpin);
    m_layerBar->hide();
    host.window->addToolBar(m_layerBar);
    connect(m_layerSpin, &QSpinBox::valueChanged, this, &SetSource::setLayer);

    m_mergeWords->setCheckable(true);
    m_mergeWords->setEnabled(false);
    m_mergeWords->setVisible(false);
    m_mergeWords->setToolTip(tr("Show attention between words: a word's pieces are summed as keys and "
                                "averaged as queries."));
    host.viewMenu->insertAction(host.viewMenuSlot, m_mergeWords);
    connect(m_mergeWords, &QAction::toggled, this, [this] { refresh(true); });

    connect(host.jobs, &AttentionController::layerReady, this, [this](const ShownAttention &layer) {
        if (!m_front || layer.layer != m_layer)
            return;
        m_host.views->setAttention(layer);
        emit shown();
    });
}

SetSource::~SetSource()
{
    delete m_layerBar;
}

void SetSource::setAttention(LoadedAttentionPtr attention, bool keepView)
{
    m_attention = std::move(attention);
    const AttentionSet &set = m_attention->set;
    if (keepView) {
        // Another sentence: the same layer and head stay in view.
        m_layer = std::min(m_layer, set.layers() - 1);
        m_host.views->modelView()->clear();
        m_host.status->message({});
    } else {
        m_host.status->setLastError({});
        m_layer = 0;
        const QSignalBlocker block(m_layerSpin);
        m_layerSpin->setRange(0, std::max(1, set.layers()) - 1);
        m_layerSpin->setValue(0);
    }
    m_long = isLongAttention(set, m_host.budget);
    // Merging words copies every map as doubles: not for files this long.
    m_mergeWords->setEnabled(!m_long && !set.queryWordOf.empty() && !set.keyWordOf.empty());
    if (!m_mergeWords->isEnabled())
        m_mergeWords->setChecked(false);
    if (!m_front)
        return;
    m_layerBar->setVisible(set.layers() > 1);
    m_host.views->setLong(m_long);
    if (!keepView) {
        m_host.views->clearSetViews();
        m_host.views->modelView()->setCurrent(0, std::min(m_host.views->currentHead(), set.heads() - 1));
    }
    m_host.banner->clear();
    describeShape();
    refresh(true);
}

void SetSource::setInFront(bool front)
{
    m_front = front;
    m_mergeWords->setVisible(front);
    if (!front) {
        m_host.jobs->cancelAll();
        m_host.views->setLong(false);
        m_layerBar->hide();
        return;
    }
    // A file holds weights only: no scores, no tensors to step through. A model run computes
    // them again for the layer in front.
    const bool tensors = m_attention && m_attention->provider;
    m_host.views->setStepsShown(tensors);
    m_host.viewBar->setWeightsOnly(!tensors);
    m_host.status->setBackend(origin());
    if (!m_attention)
        return;
    setAttention(m_attention, false);
    announce();
}

void SetSource::announce()
{
    const QString path = m_attention->path;
    // QSettings writes its file when it goes: tens of milliseconds on a busy disk, so not here.
    runDetached([path] { addRecentFile(path); });
    m_host.lastDir = QFileInfo(path).absolutePath();
    m_host.status->message(tr("Opened %1 (read-only)").arg(QFileInfo(path).fileName()), 4000);
    emit opened(path);
}

void SetSource::describeShape()
{
    const AttentionSet &set = m_attention->set;
    m_host.status->setTime(tr("%1 layers, %2 heads, %3 \u00d7 %4 tokens")
                               .arg(set.layers())
                               .arg(set.heads())
                               .arg(set.queries())
                               .arg(set.keys()));
}

QString SetSource::title() const
{
    return tr("%1 (read-only) \u2014 AttnScope").arg(QFileInfo(m_attention ? m_attention->path : QString()).fileName());
}

ShownAttention SetSource::requested() const
{
    ShownAttention source;
    if (!m_attention)
        return source;
    source.set = m_attention->set;
    source.title = QFileInfo(m_attention->path).fileName();
    source.layer = m_layer;
    source.mergeWords = m_mergeWords->isChecked();
    source.provider = m_attention->provider;
    source.newRow = m_attention->newRow;
    return source;
}

QString SetSource::exportStem() const
{
    return m_attention ? QFileInfo(m_attention->path).completeBaseName() : tr("figure");
}

PooledHeatmapView *SetSource::pooledInFront() const
{
    PooledHeatmapView *pooled = m_host.views->filePooled();
    return m_host.views->tabs()->currentWidget() == pooled ? pooled : nullptr;
}

QString SetSource::pooledFigureName() const
{
    return tr("%1, layer %2").arg(QFileInfo(m_attention ? m_attention->path : QString()).fileName()).arg(m_layer);
}

void SetSource::refresh(bool layerToo)
{
    if (!m_front || !m_attention)
        return;
    if (layerToo) {
        if (m_long)
            showLongLayer(); // never the layer's full trace
        else
            m_host.jobs->requestLayer(requested(), m_layer);
    }
    m_host.views->refreshSetViews(requested(), true);
}

void SetSource::setLayer(int layer)
{
    const int layers = m_attention ? m_attention->set.layers() : 1;
    layer = std::clamp(layer, 0, layers - 1);
    if (m_layerSpin->value() != layer) {
        const QSignalBlocker block(m_layerSpin);
        m_layerSpin->setValue(layer);
    }
    m_host.views->setCurrentLayer(layer);
    if (layer == m_layer)
        return;
    m_layer = layer;
    if (!m_front || !m_attention)
        return;
    if (m_long)
        showLongLayer();
    else
        m_host.jobs->requestLayer(requested(), m_layer);
}

void SetSource::showLongLayer()
{
    m_host.views->filePooled()->setSource(
        std::make_shared<const AttentionFileTiles>(m_attention->set, m_layer, m_host.backend));
    if (m_attention->set.isFromQk())
        m_host.status->setNotice(tr("Long attention, computed from queries and keys: heads open pooled (tab Head, "
                                    "pooled); the mouse wheel zooms to exact values."));
    else
        m_host.status->setNotice(tr("Long attention file: heads open pooled (tab Head, pooled); the mouse wheel "
                                    "zooms to exact values."));
}

} // namespace attnscope
