// MainWindow: figure and data export, copy figure.

#include "app/gui/views/MainWindow.h"

#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/ExportDataDialog.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/TeachingView.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
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
    const QWidget *page = viewTabs()->currentWidget();
    if (page == modelView())
        o.view = FigureView::Model;
    else if (page == rolloutView())
        o.view = FigureView::Rollout;
    else if (page == headLinesView())
        o.view = FigureView::HeadView;
    else if (page == meanView())
        o.view = FigureView::Mean;
    else if (page == teachingView())
        o.view = FigureView::Teaching;
    else
        o.view = FigureView::Head;
    o.head = m_views->currentHead();
    const HeatmapViewSettings &s = headView()->settings();
    o.colorMap = s.colorMap;
    o.quantity = s.quantity;
    o.scale = s.scope;
    o.colorScale = s.colorScale;
    o.values = s.showValues;
    o.overlayHeads = m_overlayBox->isChecked();
    o.layer = m_layer;
    o.mergeWords = m_mergeWordsAction && m_mergeWordsAction->isChecked();
    if (const auto cell = headView()->selectedCell()) {
        o.query = cell->y();
        o.key = cell->x();
    }
    return o;
}

QString MainWindow::documentStem() const
{
    QString stem = m_document ? m_document->displayName() : tr("figure");
    for (const char *s : {".attnscope.json", ".json"})
        if (stem.endsWith(QLatin1String(s)))
            stem.chop(int(qstrlen(s)));
    return stem;
}

QString MainWindow::suggestedExportPath(const QString &suffix) const
{
    return QDir(m_lastDir).filePath(documentStem() + QLatin1Char('.') + suffix);
}

PooledHeatmapView *MainWindow::pooledInFront() const
{
    if (m_pooledMode)
        return m_pooled;
    if (viewTabs()->currentWidget() == attentionPooledView())
        return attentionPooledView();
    return nullptr;
}

QString MainWindow::pooledFigureName() const
{
    if (m_pooledMode || !m_attention)
        return documentStem();
    return tr("%1, layer %2").arg(QFileInfo(m_attention->path).fileName()).arg(m_layer);
}

ExportFigureDialog *MainWindow::showExportFigureDialog()
{
    if (PooledHeatmapView *pooled = pooledInFront()) {
        // What the pooled view shows: the full result (if any) is another document's or layer's.
        PooledHeatmapView::PooledFigure figure = pooled->pooledFigure(pooledFigureName());
        if (figure.set.isEmpty()) {
            showError(tr("Nothing to export yet: the pooled view is still being computed."));
            return nullptr;
        }
        FigureOptions options = currentFigureOptions();
        options.view = figure.view;
        options.head = figure.head;
        options.layer = 0;
        options.mergeWords = false;
        options.title = figure.title; // names the file's layer, which a one-layer set cannot
        ShownAttention block;
        block.set = std::move(figure.set);
        block.title = figure.name;
        auto *dialog = ExportFigureDialog::pooledBlock(std::move(block), options, std::move(figure.allowed), this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->setPath(suggestedExportPath(ExportFigureDialog::rememberedSuffix()));
        connect(dialog, &QDialog::accepted, this,
                [this, dialog] { m_messageLabel->showMessage(tr("Exported %1").arg(dialog->path()), 5000); });
        dialog->open();
        return dialog;
    }
    if (shownAttention().heads() == 0) {
        showError(tr("Nothing to export yet: the project is still being computed."));
        return nullptr;
    }
    auto *dialog = new ExportFigureDialog(shownAttention(), currentFigureOptions(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setPath(suggestedExportPath(ExportFigureDialog::rememberedSuffix()));
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { m_messageLabel->showMessage(tr("Exported %1").arg(dialog->path()), 5000); });
    dialog->open();
    return dialog;
}

ExportDataDialog *MainWindow::showExportDataDialog()
{
    if (pooledInFront()) {
        showError(tr("Export Data writes the full tensors, and this attention is too long to hold them; it is "
                     "shown pooled. To write pooled weights, row entropies and the output, use attnscope-cli "
                     "compute PROJECT --out DIR --pool N."));
        return nullptr;
    }
    if (shownAttention().heads() == 0) {
        showError(tr("Nothing to export yet: the project is still being computed."));
        return nullptr;
    }
    auto *dialog = new ExportDataDialog(shownAttention(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setHead(m_views->currentHead());
    dialog->setPath(suggestedExportPath(QStringLiteral("npz")));
    connect(dialog, &QDialog::accepted, this,
            [this, dialog] { m_messageLabel->showMessage(tr("Exported %1").arg(dialog->path()), 5000); });
    dialog->open();
    return dialog;
}

bool MainWindow::copyFigure()
{
    // At twice the screen's 72-point scale: crisp when pasted into a slide or a document.
    FigureSize size;
    size.dpi = 144;
    QString error;
    FigureOptions options = currentFigureOptions();
    QImage image;
    if (PooledHeatmapView *pooled = pooledInFront()) {
        PooledHeatmapView::PooledFigure figure = pooled->pooledFigure(pooledFigureName());
        if (figure.set.isEmpty())
            return false;
        options.view = figure.view;
        options.head = figure.head;
        options.layer = 0;
        options.mergeWords = false;
        options.title = figure.title; // names the file's layer, which a one-layer set cannot
        image =
            FigureExporter(std::move(figure.set), figure.name, std::move(figure.allowed)).image(options, size, &error);
    } else if (shownAttention().heads() == 0) {
        return false;
    } else {
        image = FigureExporter(shownAttention()).image(options, size, &error);
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
