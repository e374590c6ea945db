#include "app/gui/sources/ProjectSource.h"

#include "app/gui/document/AttentionController.h"
#include "app/gui/document/Autosave.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/BatchBar.h"
#include "app/gui/views/EditorPanels.h"
#include "app/gui/views/MaskEditor.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowPolish.h"
#include "app/gui/views/WindowStatus.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QProgressBar>
#include <QScrollArea>
#include <QTabWidget>
#include <QTimer>
#include <QUndoGroup>
#include <QUndoView>
#include <QVBoxLayout>

#include <cmath>

namespace attnscope {

ProjectSource::ProjectSource(SourceHost &host, QObject *parent)
    : Source(host, parent), m_compute(new ComputeController(this)), m_undoGroup(new QUndoGroup(this)),
      m_autosaver(new Autosaver(this)), m_progressTimer(new QTimer(this))
{
    createDocks();
    m_batchBar = new BatchBar; // shown only for a batched project
    host.central->insertWidget(host.central->indexOf(host.views), m_batchBar);
    createPooledView();
    connect(m_compute, &ComputeController::computed, this, [this](ComputedTracePtr result) {
        // Not one of the document before, nor one that ends behind another source.
        if (m_front && result->generation >= m_documentGeneration)
            showResult(std::move(result));
    });
    connect(m_compute, &ComputeController::failed, this,
            [this](const QString &message, quint64, ErrorKind kind) { computeFailed(message, kind); });
    connect(m_compute, &ComputeController::backendChanged, this,
            [this](const QString &name, const QString &device, const QString &notice) {
                // Another source's label and notice stay (the backend probe ends late): the
                // project's result says its backend's notice again when it comes to the front.
                if (name.isEmpty())
                    return;
                m_backendText = tr("Backend: %1 \u2014 %2").arg(name, device);
                if (!m_front)
                    return;
                m_host.status->setBackend(m_backendText);
                m_host.status->setNotice(notice);
            });
    m_progressTimer->setInterval(100);
    connect(m_progressTimer, &QTimer::timeout, this, &ProjectSource::updateProgress);
    connect(m_compute, &ComputeController::busyChanged, this, [this](bool busy) {
        if (busy) {
            m_host.status->setTime(tr("computing\u2026"));
            m_progressTimer->start();
        } else {
            m_progressTimer->stop();
        }
        updateProgress();
    });
    m_save = new QAction(tr("&Save"), this);
    m_save->setShortcut(QKeySequence::Save);
    connect(m_save, &QAction::triggered, this, &ProjectSource::save);
    m_saveAs = new QAction(tr("Save &As\u2026"), this);
    // QKeySequence::SaveAs is empty on some platforms (X11 outside GNOME): Ctrl+Shift+S everywhere.
    m_saveAs->setShortcuts(keysWith(QKeySequence::SaveAs, {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)}));
    connect(m_saveAs, &QAction::triggered, this, &ProjectSource::saveAs);
    m_compareSaved = new QAction(tr("Compare With Sa&ved"), this);
    m_compareSaved->setObjectName(QStringLiteral("compareWithSaved"));
    m_compareSaved->setToolTip(tr("The project as saved (A) and as edited now (B), in a new window: the views "
                                  "there show B \u2212 A. The edits stay here, unsaved."));
    m_compareSaved->setEnabled(false);
    connect(m_compareSaved, &QAction::triggered, this, &ProjectSource::compareWithSavedRequested);
}

ProjectSource::~ProjectSource()
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    delete m_compute; // waits for its worker
    m_compute = nullptr;
}

QList<QAction *> ProjectSource::saveActions() const
{
    return {m_save, m_saveAs};
}

MatrixEditor *ProjectSource::matrixEditor(MatrixId id) const
{
    auto it = m_editors.find(id);
    return it == m_editors.end() ? nullptr : it->second;
}

void ProjectSource::createDocks()
{
    QMainWindow *window = m_host.window;
    auto dock = [this, window](const QString &title, const QString &name, QWidget *w, Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, window);
        d->setObjectName(name);
        d->setWidget(w);
        window->addDockWidget(area, d);
        m_docks << d;
        return d;
    };
    m_model = new ModelPanel;
    auto *modelScroll = new QScrollArea;
    modelScroll->setObjectName(QStringLiteral("modelScroll"));
    modelScroll->setWidget(m_model);
    modelScroll->setWidgetResizable(true);
    auto *modelDock = dock(tr("Model"), QStringLiteral("ModelDock"), modelScroll, Qt::LeftDockWidgetArea);
    m_mask = new MaskEditor;
    auto *maskDock = dock(tr("Mask"), QStringLiteral("MaskDock"), m_mask, Qt::LeftDockWidgetArea);
    auto *inputs = new QTabWidget;
    auto *weights = new QTabWidget;
    for (MatrixId id : kAllMatrices) {
        auto *editor = new MatrixEditor(id);
        m_editors[id] = editor;
        const bool input = id == MatrixId::Xq || id == MatrixId::Xkv || id == MatrixId::Xv;
        (input ? inputs : weights)
            ->addTab(editor, id == MatrixId::Xq    ? tr("Query tokens")
                             : id == MatrixId::Xkv ? tr("Key/value tokens")
                             : id == MatrixId::Xv  ? tr("Value input")
                                                   : matrixName(id));
    }
    auto *inputDock = dock(tr("Inputs"), QStringLiteral("InputsDock"), inputs, Qt::BottomDockWidgetArea);
    auto *weightDock = dock(tr("Weights"), QStringLiteral("WeightsDock"), weights, Qt::BottomDockWidgetArea);
    window->splitDockWidget(inputDock, weightDock, Qt::Horizontal);
    auto *history =
        dock(tr("History"), QStringLiteral("HistoryDock"), new QUndoView(m_undoGroup), Qt::BottomDockWidgetArea);
    window->tabifyDockWidget(weightDock, history);
    weightDock->raise();
    // The heatmaps get most of the window; a saved layout (the window's settings) overrides this.
    window->resizeDocks({inputDock, weightDock}, {220, 220}, Qt::Vertical);
    window->resizeDocks({modelDock, maskDock}, {380, 300}, Qt::Vertical);
    window->resizeDocks({modelDock}, {340}, Qt::Horizontal);
}

void ProjectSource::setDocument(Document *document)
{
    replaceDocument(document);
    emit ready();
}

void ProjectSource::replaceDocument(Document *document)
{
    Document *old = m_document;
    if (m_front)
        m_host.jobs->cancelAll(); // an attention file still being read no longer replaces this
    m_document = document;
    document->setParent(this);
    document->setMemoryBudget(m_host.budget);
    m_undoGroup->addStack(document->undoStack());
    m_undoGroup->setActiveStack(m_front ? document->undoStack() : nullptr);
    m_model->setDocument(document);
    m_mask->setDocument(document);
    for (auto &[id, editor] : m_editors)
        editor->setDocument(document);
    connect(document, &Document::changed, this, [this](Document::Changes what) {
        if (what != Document::TitleChanged)
            requestCompute();
        emit titleChanged();
    });
    connect(document, &Document::modifiedChanged, this, &ProjectSource::titleChanged);
    connect(document, &Document::modifiedChanged, this, &ProjectSource::updateCompareWithSaved);
    connect(document, &Document::filePathChanged, this, &ProjectSource::updateCompareWithSaved);
    connect(document, &Document::editRefused, m_host.status, &WindowStatus::error);
    connect(document, &Document::filePathChanged, this, &ProjectSource::titleChanged);
    // The old document was saved or discarded (maybeSave): its recovery copy goes with it.
    m_autosaver->setDocument(document);
    m_batchBar->setDocument(document);
    if (old) {
        m_undoGroup->removeStack(old->undoStack());
        delete old;
    }
    updateCompareWithSaved();
    emit titleChanged();
    // Every request from now on is this document's; a result of an older one is not shown here.
    m_documentGeneration = m_compute->latestGeneration() + 1;
    requestCompute();
}

void ProjectSource::setInFront(bool front)
{
    if (front == m_front)
        return;
    if (!front) {
        m_result.reset();
        setPooled(false); // first: the mask dock it hid is remembered as the user left it
    }
    m_front = front;
    for (QDockWidget *d : m_docks) {
        if (!front) {
            m_dockVisible[d] = d->isVisible();
            d->hide();
        } else if (auto it = m_dockVisible.find(d); it != m_dockVisible.end()) {
            d->setVisible(it->second);
        }
        d->toggleViewAction()->setEnabled(front);
    }
    m_save->setEnabled(front);
    m_saveAs->setEnabled(front);
    updateCompareWithSaved();
    if (front) {
        // The label another source left ("Attention file: npz, float16") goes, even when no
        // result follows (a project shown pooled).
        m_host.status->setBackend(m_backendText.isEmpty() ? tr("Backend: starting\u2026") : m_backendText);
        m_host.views->setStepsShown(true);
        m_host.viewBar->setWeightsOnly(false);
        m_host.views->clearSetViews();
        m_undoGroup->setActiveStack(m_document ? m_document->undoStack() : nullptr);
        requestCompute();
        return;
    }
    // The project was saved or discarded before the other source opened: a new, unmodified one
    // stands behind it, so that coming back needs no special case.
    replaceDocument(new Document(newProject()));
}

void ProjectSource::updateCompareWithSaved()
{
    m_compareSaved->setEnabled(m_front && m_document && !m_document->filePath().isEmpty() && m_document->isModified());
}

QString ProjectSource::title() const
{
    return m_document ? tr("%1[*] \u2014 AttnScope").arg(m_document->displayName()) : QString();
}

bool ProjectSource::isModified() const
{
    return m_document && m_document->isModified();
}

ShownAttention ProjectSource::requested() const
{
    return m_result ? ShownAttention::ofTensors(m_result) : ShownAttention{};
}

QString ProjectSource::exportStem() const
{
    QString stem = m_document ? m_document->displayName() : tr("figure");
    for (const char *s : {".attnscope.json", ".json"})
        if (stem.endsWith(QLatin1String(s)))
            stem.chop(int(qstrlen(s)));
    return stem;
}

PooledHeatmapView *ProjectSource::pooledInFront() const
{
    return m_pooledShown ? m_pooled : nullptr;
}

void ProjectSource::budgetChanged()
{
    if (m_document)
        m_document->setMemoryBudget(m_host.budget);
    m_compute->setMemoryBudget(m_host.budget);
}

void ProjectSource::requestCompute()
{
    if (!m_front || showPooledIfNeeded())
        return;
    if (m_document)
        m_compute->request(m_document->project());
}

void ProjectSource::updateProgress()
{
    // Nothing for the quick computations of typing; a bar once one has run half a second.
    QProgressBar *bar = m_host.status->progressBar();
    const bool show = m_compute->isBusy() && m_compute->runningMilliseconds() > kProgressAfterMs;
    if (show) {
        const double done = m_compute->progress();
        if (done > 0.0) {
            bar->setRange(0, 100);
            bar->setValue(int(std::lround(100.0 * done)));
        } else {
            bar->setRange(0, 0); // a backend that cannot tell: a busy bar
        }
    }
    bar->setVisible(show);
}

QString ProjectSource::failureAdvice(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::DeviceLost:
        return tr("The GPU stopped answering (device lost). Choose Backend > CPU or Automatic to go on.");
    case ErrorKind::OutOfMemory:
        return tr("Memory ran out. Make the project smaller (fewer tokens, heads or dimensions), or choose "
                  "Backend > CPU if the GPU's memory ran out.");
    case ErrorKind::TooLarge:
        return tr("The project is too large for this machine's memory: make it smaller, or compute it pooled "
                  "(attnscope-cli compute --pool 1024).");
    case ErrorKind::Unsupported:
        return tr("This device cannot run it. Choose Backend > CPU or Automatic.");
    case ErrorKind::NonFinite:
        return tr("The numbers overflowed float32: use smaller values or a smaller scale.");
    case ErrorKind::InvalidInput:
    case ErrorKind::Io:
    case ErrorKind::Internal:
    case ErrorKind::Cancelled:
        break;
    }
    return {};
}

void ProjectSource::computeFailed(const QString &message, ErrorKind kind)
{
    if (m_pooledShown || !m_front)
        return;
    const QString advice = failureAdvice(kind);
    const QString reason = advice.isEmpty() ? message : message + QLatin1Char('\n') + advice;
    m_host.status->setTime(tr("compute failed"));
    // Said once, in the notice (its tooltip holds the advice too), not again beside it.
    m_host.status->setNotice(reason.section(QLatin1Char('\n'), 0, 0), reason);
    m_host.banner->setStale(tr("The views show an earlier result: computing the project as it is now failed."), reason);
}

void ProjectSource::showResult(ComputedTracePtr result)
{
    if (m_pooledShown)
        return; // a state from before the project grew long: the pooled view shows the document
    m_result = result;
    if (m_host.banner->isStale()) {
        m_host.banner->clear();
        m_host.status->setNotice({});
    }
    const ShownAttention attention = ShownAttention::ofTensors(result);
    m_host.views->setAttention(attention);
    m_host.views->refreshSetViews(attention, false);
    m_host.status->setTime(tr("computed in %1 ms").arg(result->milliseconds, 0, 'f', 2));
    // After a runtime fallback the backend that ran is not the one chosen: say so.
    m_backendText = tr("Backend: %1 \u2014 %2").arg(result->backendName, result->deviceName);
    m_host.status->setBackend(m_backendText);
    if (!result->notice.isEmpty())
        m_host.status->setNotice(result->notice);
    emit resultShown(result);
    emit shown();
}

} // namespace attnscope
