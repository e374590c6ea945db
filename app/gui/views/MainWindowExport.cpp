// MainWindow: figure and data export, copy figure.

#include "app/gui/views/MainWindow.h"

#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/ExportDataDialog.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/TeachingView.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QGuiApplication>
#include <QMenu>
#include <QStatusBar>
#include <QTabWidget>

namespace attnscope {

void MainWindow::createExportActions(QMenu *file, QMenu *edit)
{
    QAction *figure = new QAction(tr("Export &Figure\u2026"), this);
    figure->setObjectName(QStringLiteral("exportFigureAction"));
    figure->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(figure, &QAction::triggered, this, &MainWindow::showExportFigureDialog);
    QAction *data = new QAction(tr("Export &Data\u2026"), this);
    data->setObjectName(QStringLiteral("exportDataAction"));
    connect(data, &QAction::triggered, this, &MainWindow::showExportDataDialog);
    m_copyFigureAction = new QAction(tr("Copy &Figure"), this);
    m_copyFigureAction->setObjectName(QStringLiteral("copyFigureAction"));
    m_copyFigureAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    m_copyFigureAction->setStatusTip(tr("Copy the view shown as an image"));
    connect(m_copyFigureAction, &QAction::triggered, this, &MainWindow::copyFigure);
    file->addAction(figure);
    file->addAction(data);
    file->addSeparator();
    edit->addSeparator();
    edit->addAction(m_copyFigureAction);
}

FigureOptions MainWindow::currentFigureOptions() const
{
    FigureOptions o;
    // The view in front: the heads tab exports its enlarged head; the model and rollout tabs
    // the attention set's figures.
    const QWidget *page = m_tabs->currentWidget();
    if (page == m_modelView)
        o.view = FigureView::Model;
    else if (page == m_rolloutView)
        o.view = FigureView::Rollout;
    else if (page == m_lines)
        o.view = FigureView::HeadView;
    else if (page == m_meanView)
        o.view = FigureView::Mean;
    else if (page == m_teaching)
        o.view = FigureView::Teaching;
    else
        o.view = FigureView::Head;
    o.head = m_grid->currentHead();
    const HeatmapViewSettings &s = m_headView->settings();
    o.colorMap = s.colorMap;
    o.quantity = s.quantity;
    o.scale = s.scope;
    o.colorScale = s.colorScale;
    o.values = s.showValues;
    o.overlayHeads = m_overlayBox->isChecked();
    o.layer = m_layer;
    o.mergeWords = m_mergeWordsAction && m_mergeWordsAction->isChecked();
    if (const auto cell = m_headView->selectedCell()) {
        o.query = cell->y();
        o.key = cell->x();
    }
    return o;
}

QString MainWindow::suggestedExportPath(const QString &suffix) const
{
    QString stem = m_document ? m_document->displayName() : tr("figure");
    for (const char *s : {".attnscope.json", ".json"})
        if (stem.endsWith(QLatin1String(s)))
            stem.chop(int(qstrlen(s)));
    return QDir(m_lastDir).filePath(stem + QLatin1Char('.') + suffix);
}

ExportFigureDialog *MainWindow::showExportFigureDialog()
{
    if (!m_result || m_result->trace.heads() == 0) {
        showError(tr("Nothing to export yet: the project is still being computed."));
        return nullptr;
    }
    AttentionSource source = attentionSource();
    auto *dialog = new ExportFigureDialog(m_result, std::move(source.set), source.title, currentFigureOptions(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setPath(suggestedExportPath(ExportFigureDialog::rememberedSuffix()));
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { m_messageLabel->showMessage(tr("Exported %1").arg(dialog->path()), 5000); });
    dialog->open();
    return dialog;
}

ExportDataDialog *MainWindow::showExportDataDialog()
{
    if (!m_result || m_result->trace.heads() == 0) {
        showError(tr("Nothing to export yet: the project is still being computed."));
        return nullptr;
    }
    auto *dialog = new ExportDataDialog(m_result, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setHead(m_grid->currentHead());
    dialog->setPath(suggestedExportPath(QStringLiteral("npz")));
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { m_messageLabel->showMessage(tr("Exported %1").arg(dialog->path()), 5000); });
    dialog->open();
    return dialog;
}

bool MainWindow::copyFigure()
{
    if (!m_result || m_result->trace.heads() == 0)
        return false;
    // At twice the screen's 72-point scale: crisp when pasted into a slide or a document.
    FigureSize size;
    size.dpi = 144;
    QString error;
    const FigureOptions options = currentFigureOptions();
    QImage image;
    if (options.view == FigureView::Model || options.view == FigureView::Rollout) {
        AttentionSource source = attentionSource();
        if (source.set.isEmpty())
            return false;
        image = FigureExporter(std::move(source.set), source.title).image(options, size, &error);
    } else {
        image = FigureExporter(m_result->project, m_result->trace).image(options, size, &error);
    }
    if (image.isNull()) {
        showError(error);
        return false;
    }
    QGuiApplication::clipboard()->setImage(image);
    m_messageLabel->showMessage(tr("Figure copied (%1 \u00d7 %2 px)").arg(image.width()).arg(image.height()), 4000);
    return true;
}

} // namespace attnscope
