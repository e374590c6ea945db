// MainWindow: imported attention files (read-only documents of L layers), the model view, the
// head statistics and the rollout.

#include "app/gui/views/MainWindow.h"

#include "app/gui/document/LongAttention.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"
#include "app/gui/views/TeachingView.h"
#include "app/render/ErrorText.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QUndoGroup>

namespace attnscope {

void MainWindow::createAttentionJobs()
{
    // A shown file rewritten on disk: said as soon as the file system tells, and by any job
    // (layer, thumbnails, statistics, rollout, pooled tiles) that read it meanwhile.
    m_fileWatcher = new QFileSystemWatcher(this);
    connect(m_fileWatcher, &QFileSystemWatcher::fileChanged, this, [this] { checkAttentionSource(); });
    connect(m_attentionJobs, &AttentionController::sourceChanged, this, &MainWindow::showAttentionSourceChanged);
    connect(m_views->filePooled()->jobs(), &PooledJobs::failed, this, [this](const QString &, ErrorKind kind) {
        if (kind == ErrorKind::Io)
            checkAttentionSource();
    });

    connect(m_attentionJobs, &AttentionController::opened, this, &MainWindow::showAttention);
    connect(m_attentionJobs, &AttentionController::openFailed, this,
            [this](const QString &path, const QString &message, ErrorKind) {
                showError(message);
                emit openFailed(path, message);
            });
    connect(m_attentionJobs, &AttentionController::jobFailed, this, [this](const QString &message) {
        m_noticeLabel->setText(message);
        m_noticeLabel->show();
        m_messageLabel->showMessage(message);
    });
    connect(m_attentionJobs, &AttentionController::layerReady, this, [this](const ShownAttention &shown) {
        if (!m_attention || shown.layer != m_layer)
            return;
        m_views->setAttention(shown);
        emit attentionShown();
    });
}

void MainWindow::createAttentionActions(QToolBar *bar)
{
    m_layerSpin = new QSpinBox;
    m_layerSpin->setObjectName(QStringLiteral("layerSelector"));
    m_layerSpin->setPrefix(tr("Layer "));
    m_layerSpin->setRange(0, 0);
    m_layerSpin->setToolTip(tr("The layer the heads, the enlarged head, the mean and the head view show."));
    m_layerAction = bar->addWidget(m_layerSpin);
    m_layerAction->setVisible(false);
    connect(m_layerSpin, &QSpinBox::valueChanged, this, [this](int value) { setCurrentLayer(value); });

    m_mergeWordsAction = m_viewMenu->addAction(tr("&Merge Sub-word Tokens into Words"));
    m_mergeWordsAction->setCheckable(true);
    m_mergeWordsAction->setEnabled(false);
    m_mergeWordsAction->setToolTip(tr("Show attention between words: a word's pieces are summed as keys and "
                                      "averaged as queries."));
    connect(m_mergeWordsAction, &QAction::toggled, this, [this] { refreshAttentionViews(true); });
}

bool MainWindow::openAttentionFile(const QString &path)
{
    m_attentionJobs->open(path);
    m_messageLabel->showMessage(tr("Reading %1\u2026").arg(QFileInfo(path).fileName()));
    return true;
}

ShownAttention MainWindow::requestedAttention() const
{
    ShownAttention source;
    if (m_attention) {
        source.set = m_attention->set;
        source.title = QFileInfo(m_attention->path).fileName();
        source.layer = m_layer;
    } else if (m_result) {
        source = ShownAttention::ofTensors(m_result);
    }
    source.mergeWords = m_mergeWordsAction && m_mergeWordsAction->isChecked();
    return source;
}

void MainWindow::showAttention(LoadedAttentionPtr attention)
{
    const bool wasAttention = m_attention != nullptr;
    // A model's document goes too (showModelRun sets it again after this; the model it shows
    // stays loaded for the text box).
    m_transformer.reset();
    m_modelRun.reset();
    if (attention->isModelRun())
        m_modelJobs->cancel();
    else
        m_modelJobs->close();
    m_modelText->hide();
    m_openHeadAction->setEnabled(false);
    // The hidden project goes (it was saved or discarded before the open): a new, unmodified
    // one stands behind the read-only document, so that leaving it needs no special case.
    m_attention = attention;
    m_result.reset(); // the project's, which goes
    setBlankDocumentBehind();
    m_undoGroup->setActiveStack(nullptr);
    if (!wasAttention)
        setEditingEnabled(false);
    m_lastError.clear();
    m_layer = 0;
    const AttentionSet &set = attention->set;
    {
        const QSignalBlocker block(m_layerSpin);
        m_layerSpin->setRange(0, std::max(1, set.layers()) - 1);
        m_layerSpin->setValue(0);
    }
    m_layerAction->setVisible(set.layers() > 1);
    m_mergeWordsAction->setEnabled(!set.queryWordOf.empty() && !set.keyWordOf.empty());
    setLongAttentionMode(isLongAttention(set, m_budget));
    m_views->clearSetViews();
    modelView()->setCurrent(0, std::min(m_views->currentHead(), set.heads() - 1));
    setStale(false);
    m_timeLabel->setText(tr("%1 layers, %2 heads, %3 \u00d7 %4 tokens")
                             .arg(set.layers())
                             .arg(set.heads())
                             .arg(set.queries())
                             .arg(set.keys()));
    if (attention->file) // a model run's label is the model's (showModelRun)
        m_backendLabel->setText(tr("Attention file: %1, %2")
                                    .arg(QString::fromStdString(attention->file->container),
                                         QString::fromStdString(attention->file->dtype)));
    updateTitle();
    // QSettings writes its file when it goes: tens of milliseconds on a busy disk, so not here.
    runDetached([path = attention->path] { addRecentFile(path); });
    m_lastDir = QFileInfo(attention->path).absolutePath();
    // A model run is no file; a file that is copied (not mapped) cannot change under the views.
    watchAttentionFile(attention->set.sourceFile() ? attention->path : QString());
    m_messageLabel->showMessage(tr("Opened %1 (read-only)").arg(QFileInfo(attention->path).fileName()), 4000);
    refreshAttentionViews(true);
    emit attentionOpened(attention->path);
}

bool MainWindow::checkAttentionSource()
{
    if (!m_attention)
        return true;
    const Status s = m_attention->set.checkSource();
    if (s)
        return true;
    showAttentionSourceChanged(errorText(s.error()));
    return false;
}

void MainWindow::showAttentionSourceChanged(const QString &message)
{
    if (!m_attention)
        return;
    m_noticeLabel->setText(message);
    m_noticeLabel->setToolTip(QString());
    m_noticeLabel->show();
    setStale(true, message, tr("The views show the file as it was read: it changed on disk since."));
    m_reopenButton->show();
}

void MainWindow::watchAttentionFile(const QString &path)
{
    if (!m_fileWatcher->files().isEmpty())
        m_fileWatcher->removePaths(m_fileWatcher->files());
    if (!path.isEmpty())
        m_fileWatcher->addPath(path);
}

void MainWindow::leaveAttentionMode()
{
    watchAttentionFile(QString());
    m_attention.reset();
    m_attentionJobs->cancelAll();
    setLongAttentionMode(false);
    m_transformer.reset();
    m_modelRun.reset();
    m_modelJobs->close();
    m_modelText->hide();
    m_openHeadAction->setEnabled(false);
    m_layer = 0;
    m_layerAction->setVisible(false);
    m_mergeWordsAction->setEnabled(false);
    m_views->clearSetViews();
    setEditingEnabled(true);
}

void MainWindow::setEditingEnabled(bool enabled)
{
    // A read-only document hides the editors (and the history) and remembers what was shown.
    for (QDockWidget *d : findChildren<QDockWidget *>()) {
        if (!enabled) {
            m_dockVisible[d->objectName()] = d->isVisible();
            d->hide();
        } else if (auto it = m_dockVisible.find(d->objectName()); it != m_dockVisible.end()) {
            d->setVisible(it->second);
        }
        d->toggleViewAction()->setEnabled(enabled);
    }
    m_saveAction->setEnabled(enabled);
    m_saveAsAction->setEnabled(enabled);
    // An attention file holds weights only: no scores, no intermediate tensors to step through.
    if (!enabled)
        m_quantityBox->setCurrentIndex(m_quantityBox->findData(int(HeatmapQuantity::Weights)));
    m_quantityBox->setEnabled(enabled);
    m_views->setStepsShown(enabled);
}

void MainWindow::refreshAttentionViews(bool layerToo)
{
    if (m_attention && layerToo) {
        if (m_longAttention)
            showLongAttentionLayer(); // never the layer's full trace
        else
            m_attentionJobs->requestLayer(requestedAttention(), m_layer);
    }
    m_views->refreshSetViews(requestedAttention(), m_attention != nullptr);
}

void MainWindow::setCurrentLayer(int layer)
{
    const int layers = m_attention ? m_attention->set.layers() : 1;
    layer = std::clamp(layer, 0, layers - 1);
    if (m_layerSpin->value() != layer) {
        const QSignalBlocker block(m_layerSpin);
        m_layerSpin->setValue(layer);
    }
    m_views->setCurrentLayer(layer);
    if (layer == m_layer)
        return;
    m_layer = layer;
    if (m_attention && m_longAttention)
        showLongAttentionLayer();
    else if (m_attention)
        m_attentionJobs->requestLayer(requestedAttention(), m_layer);
}

void MainWindow::activateHead(int layer, int head)
{
    setCurrentLayer(layer);
    setCurrentHead(head);
    modelView()->setCurrent(m_layer, head);
    m_views->showHead(head);
}

} // namespace attnscope
