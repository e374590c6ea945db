#include "app/gui/views/FigureActions.h"

#include "app/gui/sources/Source.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportDataDialog.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/TeachingView.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowStatus.h"

#include <QAction>
#include <QClipboard>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMainWindow>
#include <QMenu>
#include <QStandardPaths>
#include <QTabWidget>

namespace attnscope {

FigureActions::FigureActions(SourceHost &host, std::function<Source *()> front, QObject *parent)
    : QObject(parent), m_host(host), m_front(std::move(front)), m_figure(new QAction(tr("Export &Figure\u2026"), this)),
      m_data(new QAction(tr("Export &Data\u2026"), this)), m_copy(new QAction(tr("Copy &Figure"), this))
{
    m_figure->setObjectName(QStringLiteral("exportFigureAction"));
    m_figure->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(m_figure, &QAction::triggered, this, &FigureActions::showFigureDialog);
    m_data->setObjectName(QStringLiteral("exportDataAction"));
    connect(m_data, &QAction::triggered, this, &FigureActions::showDataDialog);
    m_copy->setObjectName(QStringLiteral("copyFigureAction"));
    m_copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    m_copy->setStatusTip(tr("Copy the view shown as an image"));
    connect(m_copy, &QAction::triggered, this, &FigureActions::copyFigure);
}

void FigureActions::addTo(QMenu *file, QMenu *edit)
{
    file->addAction(m_figure);
    file->addAction(m_data);
    edit->addSeparator();
    edit->addAction(m_copy);
}

FigureOptions FigureActions::currentOptions() const
{
    const AttentionViews *views = m_host.views;
    FigureOptions o;
    // The view in front: the heads tab exports its enlarged head; the model and rollout tabs
    // the attention set's figures.
    const QWidget *page = views->tabs()->currentWidget();
    if (page == views->modelView())
        o.view = FigureView::Model;
    else if (page == views->rolloutView())
        o.view = FigureView::Rollout;
    else if (page == views->lines())
        o.view = FigureView::HeadView;
    else if (page == views->meanView())
        o.view = FigureView::Mean;
    else if (page == views->teaching())
        o.view = FigureView::Teaching;
    else
        o.view = FigureView::Head;
    o.head = views->currentHead();
    const HeatmapViewSettings &s = views->headView()->settings();
    o.colorMap = s.colorMap;
    o.quantity = s.quantity;
    o.scale = s.scope;
    o.colorScale = s.colorScale;
    o.values = s.showValues;
    o.overlayHeads = m_host.viewBar->overlay();
    const ShownAttention requested = m_front()->requested();
    o.layer = requested.layer;
    o.mergeWords = requested.mergeWords;
    if (const auto cell = views->headView()->selectedCell()) {
        o.query = cell->y();
        o.key = cell->x();
    }
    return o;
}

QString FigureActions::suggestedPath(const QString &suffix) const
{
    // The last folder used, if it is still there and writable (~/Documents need not exist; the
    // installed examples' folder is read-only); else Documents, else home.
    QString dir = QDir::homePath();
    for (const QString &candidate :
         {m_host.lastDir, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)}) {
        const QFileInfo info(candidate);
        if (!candidate.isEmpty() && info.isDir() && info.isWritable()) {
            dir = info.absoluteFilePath();
            break;
        }
    }
    // Never a file that is there already (an attention file's own name as .npy is that file).
    const QString stem = QDir(dir).filePath(m_front()->exportStem());
    QString path = stem + QLatin1Char('.') + suffix;
    for (int n = 2; QFileInfo::exists(path) && n < 1000; ++n)
        path = QStringLiteral("%1-%2.%3").arg(stem).arg(n).arg(suffix);
    return path;
}

void FigureActions::exported(const QString &path)
{
    m_host.lastDir = QFileInfo(path).absolutePath(); // the next export proposes the same folder
    m_host.status->message(tr("Exported %1").arg(path), 5000);
}

ExportFigureDialog *FigureActions::showFigureDialog()
{
    Source *source = m_front();
    ExportFigureDialog *dialog = nullptr;
    if (PooledHeatmapView *pooled = source->pooledInFront()) {
        // What the pooled view shows: the full result (if any) is another document's or layer's.
        PooledHeatmapView::PooledFigure figure = pooled->pooledFigure(source->pooledFigureName());
        if (figure.set.isEmpty()) {
            m_host.status->error(tr("Nothing to export yet: the pooled view is still being computed."));
            return nullptr;
        }
        FigureOptions options = currentOptions();
        options.view = figure.view;
        options.head = figure.head;
        options.layer = 0;
        options.mergeWords = false;
        options.title = figure.title; // names the file's layer, which a one-layer set cannot
        ShownAttention block;
        block.set = std::move(figure.set);
        block.title = figure.name;
        dialog = ExportFigureDialog::pooledBlock(std::move(block), options, std::move(figure.allowed), m_host.window);
    } else if (m_host.views->attention().heads() == 0) {
        m_host.status->error(tr("Nothing to export yet: the project is still being computed."));
        return nullptr;
    } else {
        dialog = new ExportFigureDialog(m_host.views->attention(), currentOptions(), m_host.window);
    }
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setPath(suggestedPath(ExportFigureDialog::rememberedSuffix()));
    connect(dialog, &QDialog::accepted, this, [this, dialog] { exported(dialog->path()); });
    dialog->open();
    return dialog;
}

ExportDataDialog *FigureActions::showDataDialog()
{
    if (m_front()->pooledInFront()) {
        m_host.status->error(tr("Export Data writes the full tensors, and this attention is too long to hold them; "
                                "it is shown pooled. To write pooled weights, row entropies and the output, use "
                                "attnscope-cli compute PROJECT --out DIR --pool N."));
        return nullptr;
    }
    if (m_host.views->attention().heads() == 0) {
        m_host.status->error(tr("Nothing to export yet: the project is still being computed."));
        return nullptr;
    }
    auto *dialog = new ExportDataDialog(m_host.views->attention(), m_host.window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setHead(m_host.views->currentHead());
    dialog->setPath(suggestedPath(dialog->defaultSuffix()));
    connect(dialog, &QDialog::accepted, this, [this, dialog] { exported(dialog->path()); });
    dialog->open();
    return dialog;
}

bool FigureActions::copyFigure()
{
    // At twice the screen's 72-point scale: crisp when pasted into a slide or a document.
    FigureSize size;
    size.dpi = 144;
    QString error;
    FigureOptions options = currentOptions();
    QImage image;
    Source *source = m_front();
    if (PooledHeatmapView *pooled = source->pooledInFront()) {
        PooledHeatmapView::PooledFigure figure = pooled->pooledFigure(source->pooledFigureName());
        if (figure.set.isEmpty())
            return false;
        options.view = figure.view;
        options.head = figure.head;
        options.layer = 0;
        options.mergeWords = false;
        options.title = figure.title; // names the file's layer, which a one-layer set cannot
        image =
            FigureExporter(std::move(figure.set), figure.name, std::move(figure.allowed)).image(options, size, &error);
    } else if (m_host.views->attention().heads() == 0) {
        return false;
    } else {
        image = FigureExporter(m_host.views->attention()).image(options, size, &error);
    }
    if (image.isNull()) {
        m_host.status->error(error);
        return false;
    }
    QGuiApplication::clipboard()->setImage(image);
    m_host.status->message(tr("Figure copied (%1 \u00d7 %2 px)").arg(image.width()).arg(image.height()), 4000);
    return true;
}

} // namespace attnscope
