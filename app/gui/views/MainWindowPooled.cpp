// Long sequences in the main window (issue 11): a project whose full trace would not fit, or
// whose Tq·Tk·heads passes the budget's pooledCells, is shown by PooledHeatmapView instead of
// the tabs of full views, and a notice says so and why. Nothing is refused for its length.

#include "app/gui/document/MemoryBudget.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/MaskEditor.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "core/io/MemoryLimits.h"

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QScopedValueRollback>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

namespace attnscope {

void MainWindow::createPooledView(QVBoxLayout *central)
{
    m_pooledNotice = plainLabel();
    m_pooledNotice->setObjectName(QStringLiteral("pooledNotice"));
    m_pooledNotice->setWordWrap(true);
    m_pooledNotice->setStyleSheet(
        QStringLiteral("QLabel { background: #e8f1fb; color: #123c69; border: 1px solid #8fb3da; padding: 6px; }"));
    m_pooledNotice->hide();
    m_pooled = new PooledHeatmapView;
    m_pooled->hide();
    central->insertWidget(central->indexOf(m_views), m_pooledNotice);
    central->addWidget(m_pooled, 1);
    m_pooled->setColorMap(ColorMapKind(m_colorMapBox ? m_colorMapBox->currentData().toInt() : 0));
    connect(m_pooled->jobs(), &PooledJobs::failed, this, [this](const QString &message, ErrorKind kind) {
        // What cannot even be pooled: the message names the bytes; the advice says what helps.
        const QString advice = kind == ErrorKind::TooLarge
                                   ? tr("Even the pooled view does not fit: use fewer tokens or fewer heads.")
                                   : failureAdvice(kind);
        m_lastError = advice.isEmpty() ? message : message + QLatin1Char('\n') + advice;
        m_noticeLabel->setText(m_lastError.section(QLatin1Char('\n'), 0, 0));
        m_noticeLabel->show();
    });
}

void MainWindow::setMemoryBudget(const MemoryBudget &budget)
{
    m_budget = budget;
    if (m_document)
        m_document->setMemoryBudget(budget);
    m_compute->setMemoryBudget(budget);
    m_attentionJobs->setMemoryBudget(budget);
}

bool MainWindow::showPooledIfNeeded()
{
    if (!m_pooled || !m_document || m_attention) {
        setPooledMode(false);
        return false;
    }
    const ProblemSize size = problemSize(m_document->problem());
    if (!needsPooledView(size, m_budget)) {
        setPooledMode(false);
        return false;
    }
    setPooledMode(true);
    const std::int64_t bins = std::min<std::int64_t>(kPooledViewBins, std::max(size.tq, size.tk));
    const std::int64_t pooledNeed = editBytes(size, m_budget), budget = m_budget.bytes();
    if (pooledNeed > budget) {
        // The one refusal left: even pooled it does not fit. Nothing is computed.
        m_pooled->setSource(nullptr);
        m_pooledNotice->setText(
            tr("This project needs %1 for full attention and %2 even pooled; this machine allows %3. Use fewer "
               "tokens or heads, or compute it pooled with fewer bins (attnscope-cli compute --pool 256).")
                .arg(QString::fromStdString(formatBytes(traceBytes(size))),
                     QString::fromStdString(formatBytes(pooledNeed)), QString::fromStdString(formatBytes(budget))));
        m_lastError = m_pooledNotice->text();
        m_noticeLabel->setText(m_lastError);
        m_noticeLabel->show();
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

void MainWindow::setPooledMode(bool pooled)
{
    if (!m_pooled || pooled == m_pooledMode)
        return;
    m_pooledMode = pooled;
    auto setScale = [this](ColorScaleKind kind) {
        const QScopedValueRollback<bool> guard(m_settingScale, true);
        m_colorScaleBox->setCurrentIndex(m_colorScaleBox->findData(int(kind)));
    };
    const auto scale = ColorScaleKind(m_colorScaleBox->currentData().toInt());
    if (pooled && scale == ColorScaleKind::Linear) {
        setScale(ColorScaleKind::Log);
        m_logForPooled = true;
    } else if (!pooled && m_logForPooled) {
        setScale(ColorScaleKind::Linear);
        m_logForPooled = false;
    }
    // The mask editor draws Tq x Tk cells: hidden while the project is this long.
    auto *maskDock = qobject_cast<QDockWidget *>(m_mask ? m_mask->parentWidget() : nullptr);
    if (pooled) {
        setStale(false);
        if (maskDock) {
            m_maskDockWasVisible = maskDock->isVisible();
            maskDock->hide();
        }
        m_timeLabel->setText(tr("pooled view"));
    } else {
        m_pooled->setSource(nullptr);
        if (maskDock && m_maskDockWasVisible)
            maskDock->show();
    }
    m_views->setVisible(!pooled);
    m_pooledNotice->setVisible(pooled);
    m_pooled->setVisible(pooled);
}

} // namespace attnscope
