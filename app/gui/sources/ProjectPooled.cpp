// ProjectSource: long projects (issue 11). A project whose full trace would not fit, or whose
// Tq·Tk·heads passes the budget's pooledCells, is shown by a PooledHeatmapView instead of the
// views, and a notice says so and why. Nothing is refused for its length.

#include "app/gui/document/LongAttention.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MaskEditor.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowStatus.h"
#include "core/io/MemoryLimits.h"

#include <QDockWidget>
#include <QLabel>
#include <QVBoxLayout>

namespace attnscope {

void ProjectSource::createPooledView()
{
    m_pooledNotice = plainLabel();
    m_pooledNotice->setObjectName(QStringLiteral("pooledNotice"));
    m_pooledNotice->setWordWrap(true);
    m_pooledNotice->setStyleSheet(
        QStringLiteral("QLabel { background: #e8f1fb; color: #123c69; border: 1px solid #8fb3da; padding: 6px; }"));
    m_pooledNotice->hide();
    m_pooled = new PooledHeatmapView;
    m_pooled->hide();
    QVBoxLayout *central = m_host.central;
    central->insertWidget(central->indexOf(m_host.views), m_pooledNotice);
    central->insertWidget(central->indexOf(m_host.views) + 1, m_pooled, 1);
    auto applySettings = [this] {
        const HeatmapViewSettings s = m_host.viewBar->settings();
        m_pooled->setColorMap(s.colorMap);
        m_pooled->setColorScale(s.colorScale);
        m_pooled->setScope(s.scope);
        m_pooled->setQuantity(s.quantity); // only weights are pooled: the view says so for others
    };
    applySettings();
    connect(m_host.viewBar, &ViewToolBar::settingsChanged, this, applySettings);
    connect(m_pooled->jobs(), &PooledJobs::failed, this, [this](const QString &message, ErrorKind kind) {
        // What cannot even be pooled: the message names the bytes; the advice says what helps.
        const QString advice = kind == ErrorKind::TooLarge
                                   ? tr("Even the pooled view does not fit: use fewer tokens or fewer heads.")
                                   : failureAdvice(kind);
        const QString error = advice.isEmpty() ? message : message + QLatin1Char('\n') + advice;
        m_host.status->setLastError(error);
        m_host.status->setNotice(error.section(QLatin1Char('\n'), 0, 0));
    });
}

bool ProjectSource::showPooledIfNeeded()
{
    if (!m_document) {
        setPooled(false);
        return false;
    }
    const MemoryBudget &budget = m_host.budget;
    const ProblemSize size = problemSize(m_document->problem());
    if (!needsPooledView(size, budget)) {
        setPooled(false);
        return false;
    }
    setPooled(true);
    const std::int64_t bins = std::min<std::int64_t>(kPooledViewBins, std::max(size.tq, size.tk));
    const std::int64_t pooledNeed = editBytes(size, budget), allowed = budget.bytes();
    if (pooledNeed > allowed) {
        // The one refusal left: even pooled it does not fit. Nothing is computed.
        m_pooled->setSource(nullptr);
        m_pooledNotice->setText(
            tr("This project needs %1 for full attention and %2 even pooled; this machine allows %3. Use fewer "
               "tokens or heads, or compute it pooled with fewer bins (attnscope-cli compute --pool 256).")
                .arg(QString::fromStdString(formatBytes(traceBytes(size))),
                     QString::fromStdString(formatBytes(pooledNeed)), QString::fromStdString(formatBytes(allowed))));
        m_host.status->setLastError(m_pooledNotice->text());
        m_host.status->setNotice(m_pooledNotice->text());
        return true;
    }
    m_pooledNotice->setText(
        tr("This project needs %1 for full attention; showing pooled attention (%2×%2) instead. Zoom with the "
           "mouse wheel or + and - to see any block exactly; drag or use the arrow keys to pan, and Home (or a "
           "double-click) shows the whole.")
            .arg(QString::fromStdString(formatBytes(traceBytes(size))))
            .arg(bins));
    m_pooled->setSource(std::make_shared<const ProjectTiles>(std::make_shared<const Project>(m_document->project()),
                                                             m_compute->backendHost()));
    return true;
}

void ProjectSource::setPooled(bool pooled)
{
    if (pooled == m_pooledShown)
        return;
    m_pooledShown = pooled;
    m_host.viewBar->preferLogScale(pooled); // on linear 0..1 a long head is one dark colour
    // The mask editor draws Tq x Tk cells: hidden while the project is this long.
    auto *maskDock = qobject_cast<QDockWidget *>(m_mask->parentWidget());
    if (pooled) {
        m_host.banner->clear();
        if (maskDock) {
            m_maskDockWasVisible = maskDock->isVisible();
            maskDock->hide();
        }
        m_host.status->setTime(tr("pooled view"));
    } else {
        m_pooled->setSource(nullptr);
        if (maskDock && m_maskDockWasVisible && m_front)
            maskDock->show();
    }
    m_host.views->setVisible(!pooled);
    m_pooledNotice->setVisible(pooled);
    m_pooled->setVisible(pooled);
}

} // namespace attnscope
