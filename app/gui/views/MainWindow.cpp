#include "app/gui/views/MainWindow.h"

#include "app/gui/document/Autosave.h"
#include "app/gui/views/BatchBar.h"
#include "app/gui/views/EditorPanels.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/HelpMenu.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MaskEditor.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/TeachingView.h"
#include "app/gui/views/WindowPolish.h"
#include "app/render/ColorScale.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontMetrics>
#include <QGraphicsColorizeEffect>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QUndoGroup>
#include <QUndoView>
#include <QVBoxLayout>

#include <cmath>

namespace attnscope {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_compute(new ComputeController(this)), m_undoGroup(new QUndoGroup(this)),
      m_autosaver(new Autosaver(this))
{
    setObjectName(QStringLiteral("MainWindow"));
    installFieldGuard(); // before the fields are made: none is polished without it
    setAcceptDrops(true);
    setWindowIcon(QIcon(QStringLiteral(":/icons/attnscope.svg")));
    m_attentionJobs = new AttentionController(this);
    m_views = new AttentionViews(m_attentionJobs);
    createViews();
    createDocks();
    createActions();
    createStatusBar();
    connect(m_compute, &ComputeController::computed, this, [this](ComputedTracePtr result) {
        // Not one started before an attention file was opened, nor one of the document before.
        if (!m_attention && result->generation >= m_documentGeneration)
            showResult(std::move(result));
    });
    connect(m_compute, &ComputeController::failed, this,
            [this](const QString &message, quint64, ErrorKind kind) { computeFailed(message, kind); });
    connect(m_compute, &ComputeController::backendChanged, this,
            [this](const QString &name, const QString &device, const QString &notice) {
                // An attention file's or a model's label stays (the backend probe ends late).
                if (!name.isEmpty() && !m_attention)
                    m_backendLabel->setText(tr("Backend: %1 \u2014 %2").arg(name, device));
                m_noticeLabel->setText(notice);
                m_noticeLabel->setVisible(!notice.isEmpty());
            });
    connect(m_compute, &ComputeController::busyChanged, this, [this](bool busy) {
        if (busy) {
            m_timeLabel->setText(tr("computing\u2026"));
            m_computeProgressTimer->start();
        } else {
            m_computeProgressTimer->stop();
        }
        updateComputeProgress();
    });
    readSettings();
    newDocument();
}

MainWindow::~MainWindow()
{
    // No more recomputation; the controller waits for its worker before the views go away.
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    delete m_compute;
    m_compute = nullptr;
    delete m_attentionJobs;
    m_attentionJobs = nullptr;
}

MatrixEditor *MainWindow::matrixEditor(MatrixId id) const
{
    auto it = m_editors.find(id);
    return it == m_editors.end() ? nullptr : it->second;
}

QString MainWindow::statusText() const
{
    return QStringList{m_backendLabel->text(), m_timeLabel->text(), m_noticeLabel->text()}.join(QStringLiteral(" | "));
}

void MainWindow::createViews()
{
    // Over the views: says why they show an earlier result when a computation failed.
    m_staleBanner = plainLabel();
    m_staleBanner->setObjectName(QStringLiteral("staleBanner"));
    m_staleBanner->setWordWrap(true);
    m_staleBanner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_staleBanner->setStyleSheet(
        QStringLiteral("QLabel { background: #fff4e5; color: #7a3e00; border: 1px solid #e0a060; padding: 6px; }"));
    m_staleBanner->hide();
    auto *greyed = new QGraphicsColorizeEffect(m_views->tabs());
    greyed->setColor(QColor(0x80, 0x80, 0x80));
    greyed->setStrength(0.85);
    greyed->setEnabled(false);
    m_views->tabs()->setGraphicsEffect(greyed);
    auto *central = new QWidget;
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(2);
    m_reopenButton = new QPushButton(tr("Reopen"));
    m_reopenButton->setObjectName(QStringLiteral("reopenButton"));
    m_reopenButton->setToolTip(tr("Read the file again as it is on disk now."));
    m_reopenButton->hide();
    connect(m_reopenButton, &QPushButton::clicked, this, [this] {
        if (m_attention)
            openAttentionFile(m_attention->path);
    });
    auto *bannerRow = new QHBoxLayout;
    bannerRow->setSpacing(4);
    bannerRow->addWidget(m_staleBanner, 1);
    bannerRow->addWidget(m_reopenButton, 0, Qt::AlignVCenter);
    centralLayout->addLayout(bannerRow);
    m_batchBar = new BatchBar; // shown only for a batched project
    centralLayout->addWidget(m_batchBar);
    centralLayout->addWidget(m_views, 1);
    createPooledView(centralLayout);
    setCentralWidget(central);
    connect(m_views, &AttentionViews::headActivated, this, &MainWindow::setCurrentHead);
    connect(m_views, &AttentionViews::setHeadActivated, this, &MainWindow::activateHead);
    connect(m_views, &AttentionViews::setViewsUpdated, this, &MainWindow::attentionViewsUpdated);
    createAttentionJobs();
}

void MainWindow::setCurrentHead(int head)
{
    m_views->setCurrentHead(head);
}

MainWindow *MainWindow::openNewWindow()
{
    auto *window = new MainWindow;
    window->setAttribute(Qt::WA_DeleteOnClose);
    // Beside this one rather than exactly over it (both restore the remembered geometry).
    const int step = 2 * QFontMetrics(font()).height();
    window->move(pos() + QPoint(step, step));
    window->show();
    return window;
}

void MainWindow::createDocks()
{
    auto dock = [this](const QString &title, const QString &name, QWidget *w, Qt::DockWidgetArea area) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
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
        const bool input = id == MatrixId::Xq || id == MatrixId::Xkv;
        (input ? inputs : weights)
            ->addTab(editor, id == MatrixId::Xq    ? tr("Query tokens")
                             : id == MatrixId::Xkv ? tr("Key/value tokens")
                                                   : matrixName(id));
    }
    auto *inputDock = dock(tr("Inputs"), QStringLiteral("InputsDock"), inputs, Qt::BottomDockWidgetArea);
    auto *weightDock = dock(tr("Weights"), QStringLiteral("WeightsDock"), weights, Qt::BottomDockWidgetArea);
    splitDockWidget(inputDock, weightDock, Qt::Horizontal);
    auto *history =
        dock(tr("History"), QStringLiteral("HistoryDock"), new QUndoView(m_undoGroup), Qt::BottomDockWidgetArea);
    tabifyDockWidget(weightDock, history);
    weightDock->raise();
    // The heatmaps get most of the window; a saved layout (readSettings) overrides this.
    resizeDocks({inputDock, weightDock}, {220, 220}, Qt::Vertical);
    resizeDocks({modelDock, maskDock}, {380, 300}, Qt::Vertical);
    resizeDocks({modelDock}, {340}, Qt::Horizontal);
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newAction = file->addAction(tr("&New"), this, [this] {
        if (maybeSave())
            newDocument();
    });
    newAction->setShortcut(QKeySequence::New);
    QAction *newWindow = file->addAction(tr("New &Window"), this, &MainWindow::openNewWindow);
    newWindow->setObjectName(QStringLiteral("newWindowAction"));
    newWindow->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
    file->addAction(tr("&Open\u2026"), this, &MainWindow::open)->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    m_examplesMenu = file->addMenu(tr("&Examples"));
    fillExamplesMenu();
    file->addSeparator();
    m_saveAction = file->addAction(tr("&Save"), this, &MainWindow::save);
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAsAction = file->addAction(tr("Save &As\u2026"), this, &MainWindow::saveAs);
    // QKeySequence::SaveAs is empty on some platforms (X11 outside GNOME): Ctrl+Shift+S everywhere.
    m_saveAsAction->setShortcuts(keysWith(QKeySequence::SaveAs, {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)}));
    file->addSeparator();
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    createExportActions(file, edit);
    createModelViews(file);
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QAction *undo = m_undoGroup->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = m_undoGroup->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(keysWith(QKeySequence::Redo,
                                {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)}));
    // Undo and redo come first, before the export part added with the File menu.
    QAction *first = edit->actions().value(0);
    edit->insertAction(first, undo);
    edit->insertAction(first, redo);

    // View settings, shared by every heatmap.
    QToolBar *bar = addToolBar(tr("View"));
    bar->setObjectName(QStringLiteral("ViewToolBar"));
    m_colorMapBox = new QComboBox;
    for (ColorMapKind k : ColorMap::all())
        m_colorMapBox->addItem(ColorMap::displayName(k), int(k));
    m_quantityBox = new QComboBox;
    m_quantityBox->addItem(tr("Weights (softmax)"), int(HeatmapQuantity::Weights));
    m_quantityBox->addItem(tr("Scores (scaled, before mask)"), int(HeatmapQuantity::Scores));
    m_scopeBox = new QComboBox;
    m_scopeBox->addItem(tr("Scale 0..1"), int(ScaleScope::Absolute));
    m_scopeBox->addItem(tr("Shared scale"), int(ScaleScope::Shared));
    m_scopeBox->addItem(tr("Per-head scale"), int(ScaleScope::PerHead));
    m_colorScaleBox = new QComboBox;
    m_colorScaleBox->setObjectName(QStringLiteral("viewColorScale"));
    m_colorScaleBox->setToolTip(tr("How values map to colours: log and percentile show the structure of long heads."));
    for (ColorScaleKind k : ColorScale::all())
        m_colorScaleBox->addItem(ColorScale::displayName(k), int(k));
    m_valuesBox = new QCheckBox(tr("Values"));
    m_valuesBox->setChecked(true);
    m_overlayBox = new QCheckBox(tr("Overlay heads"));
    bar->addWidget(plainLabel(tr(" Colours ")));
    bar->addWidget(m_colorMapBox);
    bar->addWidget(m_quantityBox);
    bar->addWidget(m_scopeBox);
    bar->addWidget(m_colorScaleBox);
    bar->addWidget(m_valuesBox);
    bar->addWidget(m_overlayBox);
    for (QComboBox *box : {m_colorMapBox, m_quantityBox, m_scopeBox, m_colorScaleBox})
        connect(box, &QComboBox::currentIndexChanged, this, &MainWindow::applyViewSettings);
    connect(m_colorScaleBox, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_settingScale)
            m_logForPooled = false; // the user's choice from now on
    });
    connect(m_valuesBox, &QCheckBox::toggled, this, &MainWindow::applyViewSettings);
    connect(m_overlayBox, &QCheckBox::toggled, m_views, &AttentionViews::setOverlay);

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget *d : findChildren<QDockWidget *>())
        m_viewMenu->addAction(d->toggleViewAction());
    m_viewMenu->addAction(bar->toggleViewAction());
    createAttentionActions(bar);
    m_viewMenu->addSeparator();
    m_viewMenu->addMenu(createLanguageMenu(this));

    QMenu *backend = menuBar()->addMenu(tr("&Backend"));
    m_backendGroup = new QActionGroup(this);
    const std::pair<QString, BackendRequest> choices[] = {{tr("&Automatic (GPU if available)"), BackendRequest::Auto},
                                                          {tr("&CPU (Eigen)"), BackendRequest::Cpu},
                                                          {tr("&Vulkan"), BackendRequest::Vulkan}};
    for (const auto &[text, request] : choices) {
        QAction *a = backend->addAction(text);
        a->setCheckable(true);
        a->setData(int(request));
        m_backendGroup->addAction(a);
        connect(a, &QAction::triggered, this, [this, request = request] { setBackend(request); });
    }
    backend->addSeparator();
    // One entry per Vulkan device, listed when the menu opens; the CPU engine and what
    // Automatic picks are shown for information.
    QMenu *devices = backend->addMenu(tr("Vulkan &device"));
    connect(devices, &QMenu::aboutToShow, this, [this, devices] {
        devices->clear();
        const DeviceListing listing = listComputeDevices();
        for (const DeviceDescription &d : listing.devices) {
            const QString name = QString::fromStdString(d.name);
            if (d.kind != BackendRequest::Vulkan) {
                devices->addAction(tr("CPU: %1").arg(name))->setEnabled(false);
                continue;
            }
            const QString index = QString::number(d.index);
            QAction *a = devices->addAction(tr("Vulkan %1: %2").arg(index, name));
            a->setToolTip(plainToolTip(QString::fromStdString(d.details)));
            a->setCheckable(true);
            a->setChecked(m_compute->backendRequest() == BackendRequest::Vulkan && m_compute->vulkanDevice() == index);
            connect(a, &QAction::triggered, this, [this, index] { setBackend(BackendRequest::Vulkan, index); });
        }
        if (!listing.vulkanMissing.empty())
            devices->addAction(tr("No Vulkan device: %1").arg(QString::fromStdString(listing.vulkanMissing)))
                ->setEnabled(false);
        devices
            ->addAction(listing.autoDevice >= 0
                            ? tr("Automatic uses Vulkan %1").arg(listing.autoDevice)
                            : tr("Automatic uses the CPU: %1").arg(QString::fromStdString(listing.autoReason)))
            ->setEnabled(false);
    });

    fillHelpMenu(menuBar()->addMenu(tr("&Help")), this, [this] { return m_backendLabel->text(); });
}

void MainWindow::createStatusBar()
{
    // Long texts (a file's name, a fallback's reason, an error) end in "…" and are whole in
    // the tooltip: none widens the window or runs under another.
    m_messageLabel = new ElidedLabel;
    m_messageLabel->setObjectName(QStringLiteral("statusMessage"));
    m_noticeLabel = new ElidedLabel;
    m_noticeLabel->setObjectName(QStringLiteral("statusNotice"));
    m_noticeLabel->setStyleSheet(QStringLiteral("color: #b35900"));
    m_noticeLabel->hide();
    m_backendLabel = new ElidedLabel;
    m_backendLabel->setText(tr("Backend: starting\u2026"));
    m_timeLabel = plainLabel();
    statusBar()->addWidget(m_messageLabel, 1);
    statusBar()->addWidget(m_noticeLabel, 2);
    statusBar()->addPermanentWidget(m_backendLabel);
    statusBar()->addPermanentWidget(m_timeLabel);
    m_computeProgress = new QProgressBar;
    m_computeProgress->setObjectName(QStringLiteral("computeProgress"));
    m_computeProgress->setFixedWidth(m_computeProgress->fontMetrics().horizontalAdvance(tr("Computing %p%")) + 60);
    m_computeProgress->setFormat(tr("Computing %p%"));
    m_computeProgress->hide();
    statusBar()->addPermanentWidget(m_computeProgress);
    m_computeProgressTimer = new QTimer(this);
    m_computeProgressTimer->setInterval(100);
    connect(m_computeProgressTimer, &QTimer::timeout, this, &MainWindow::updateComputeProgress);
}

void MainWindow::updateComputeProgress()
{
    // Nothing for the quick computations of typing; a bar once one has run half a second.
    const bool show = m_compute && m_compute->isBusy() && m_compute->runningMilliseconds() > kProgressAfterMs;
    if (show) {
        const double done = m_compute->progress();
        if (done > 0.0) {
            m_computeProgress->setRange(0, 100);
            m_computeProgress->setValue(int(std::lround(100.0 * done)));
        } else {
            m_computeProgress->setRange(0, 0); // a backend that cannot tell: a busy bar
        }
    }
    m_computeProgress->setVisible(show);
}

void MainWindow::setBackend(BackendRequest request, const QString &vulkanDevice)
{
    for (QAction *a : m_backendGroup->actions())
        a->setChecked(a->data().toInt() == int(request));
    m_compute->setBackendRequest(request, vulkanDevice);
    requestCompute();
}

void MainWindow::setColorMap(ColorMapKind kind)
{
    m_colorMapBox->setCurrentIndex(m_colorMapBox->findData(int(kind)));
}

void MainWindow::applyViewSettings()
{
    HeatmapViewSettings s;
    s.colorMap = ColorMapKind(m_colorMapBox->currentData().toInt());
    s.quantity = HeatmapQuantity(m_quantityBox->currentData().toInt());
    s.scope = ScaleScope(m_scopeBox->currentData().toInt());
    s.colorScale = ColorScaleKind(m_colorScaleBox->currentData().toInt());
    s.showValues = m_valuesBox->isChecked();
    m_views->setSettings(s);
    m_pooled->setColorMap(s.colorMap);
    m_pooled->setColorScale(s.colorScale);
    m_pooled->setScope(s.scope);
    m_pooled->setQuantity(s.quantity); // only weights are pooled: the view says so for others
}

void MainWindow::setDocument(Document *document, bool behindReadOnly)
{
    Document *old = m_document;
    if (m_attention && !behindReadOnly)
        leaveAttentionMode();
    else if (!behindReadOnly)
        m_attentionJobs->cancelAll(); // an attention file still being read no longer replaces this
    m_document = document;
    document->setParent(this);
    document->setMemoryBudget(m_budget);
    m_undoGroup->addStack(document->undoStack());
    m_undoGroup->setActiveStack(document->undoStack());
    m_model->setDocument(document);
    m_mask->setDocument(document);
    for (auto &[id, editor] : m_editors)
        editor->setDocument(document);
    connect(document, &Document::changed, this, [this](Document::Changes what) {
        if (what != Document::TitleChanged)
            requestCompute();
        updateTitle();
    });
    connect(document, &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(document, &Document::editRefused, this, &MainWindow::showError);
    connect(document, &Document::filePathChanged, this, &MainWindow::updateTitle);
    // The old document was saved or discarded (maybeSave): its recovery copy goes with it.
    m_autosaver->setDocument(document);
    m_batchBar->setDocument(document);
    if (old) {
        m_undoGroup->removeStack(old->undoStack());
        delete old;
    }
    updateTitle();
    // Every request from now on is this document's; a result of an older one is not shown here.
    m_documentGeneration = m_compute->latestGeneration() + 1;
    requestCompute();
}

void MainWindow::requestCompute()
{
    if (showPooledIfNeeded())
        return;
    if (m_document && m_compute && !m_attention)
        m_compute->request(m_document->project());
}

QString MainWindow::failureAdvice(ErrorKind kind)
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

void MainWindow::computeFailed(const QString &message, ErrorKind kind)
{
    if (m_pooledMode)
        return;
    const QString advice = failureAdvice(kind);
    const QString reason = advice.isEmpty() ? message : message + QLatin1Char('\n') + advice;
    m_timeLabel->setText(tr("compute failed"));
    // Said once, in the notice (its tooltip holds the advice too), not again beside it.
    m_noticeLabel->setText(reason.section(QLatin1Char('\n'), 0, 0));
    m_noticeLabel->setToolTip(plainToolTip(reason));
    m_noticeLabel->show();
    setStale(true, reason);
}

void MainWindow::setStale(bool stale, const QString &reason, const QString &headline)
{
    m_stale = stale;
    m_staleReason = stale ? reason : QString();
    m_views->tabs()->graphicsEffect()->setEnabled(stale);
    m_staleBanner->setVisible(stale);
    m_reopenButton->hide();
    if (stale)
        m_staleBanner->setText((headline.isEmpty()
                                    ? tr("The views show an earlier result: computing the project as it is now failed.")
                                    : headline) +
                               QLatin1Char('\n') + reason);
}

void MainWindow::showResult(ComputedTracePtr result)
{
    if (m_pooledMode)
        return; // a state from before the project grew long: the pooled view shows the document
    m_result = result;
    if (m_stale) {
        setStale(false);
        m_noticeLabel->clear();
        m_noticeLabel->setToolTip(QString());
        m_noticeLabel->hide();
    }
    ShownAttention shown = ShownAttention::ofTensors(result);
    shown.mergeWords = m_mergeWordsAction->isChecked();
    m_views->setAttention(shown);
    refreshAttentionViews(false);
    m_timeLabel->setText(tr("computed in %1 ms").arg(result->milliseconds, 0, 'f', 2));
    // After a runtime fallback the backend that ran is not the one chosen: say so.
    m_backendLabel->setText(tr("Backend: %1 \u2014 %2").arg(result->backendName, result->deviceName));
    if (!result->notice.isEmpty()) {
        m_noticeLabel->setText(result->notice);
        m_noticeLabel->show();
    }
    emit resultShown(result);
    emit attentionShown();
}

void MainWindow::updateTitle()
{
    if (m_attention) {
        setWindowTitle(tr("%1 (read-only) \u2014 AttnScope").arg(QFileInfo(m_attention->path).fileName()));
        setWindowModified(false);
        return;
    }
    if (!m_document)
        return;
    setWindowTitle(tr("%1[*] \u2014 AttnScope").arg(m_document->displayName()));
    setWindowModified(m_document->isModified());
}

} // namespace attnscope
