#include "app/gui/views/MainWindow.h"

#include "app/gui/views/OpenModelDialog.h"

#include "app/gui/document/AttentionController.h"
#include "app/gui/document/Autosave.h"
#include "app/gui/document/ExampleModel.h"
#include "app/gui/sources/ComparisonSource.h"
#include "app/gui/sources/FileSource.h"
#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/sources/ProjectSource.h"
#include "app/gui/sources/TranslationSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/BackendMenu.h"
#include "app/gui/views/CompareDialog.h"
#include "app/gui/views/Examples.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/HelpMenu.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/PresentationMode.h"
#include "app/gui/views/RecentFiles.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowPolish.h"
#include "app/gui/views/WindowStatus.h"
#include "core/formats/QkDump.h"

#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLineEdit>
#include <QMap>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QUndoGroup>
#include <QVBoxLayout>

namespace attnscope {

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setObjectName(QStringLiteral("MainWindow"));
    installFieldGuard(); // before the fields are made: none is polished without it
    setAcceptDrops(true);
    setWindowIcon(QIcon(QStringLiteral(":/icons/attnscope.svg")));
    m_host.window = this;
    m_host.jobs = new AttentionController(this);
    m_host.views = new AttentionViews(m_host.jobs);
    m_host.status = new WindowStatus(this);
    m_host.viewBar = new ViewToolBar(this);
    addToolBar(m_host.viewBar);
    createCentral();
    m_project = new ProjectSource(m_host, this);
    m_host.backend = m_project->compute()->backendHost(); // every source computes where the user chose
    m_host.jobs->setBackendHost(m_host.backend);
    connect(m_project, &Source::ready, this, [this] { host(m_project); });
    connect(m_project, &Source::shown, this, &MainWindow::attentionShown);
    connect(m_project, &Source::titleChanged, this, &MainWindow::updateTitle);
    connect(m_project, &ProjectSource::resultShown, this, &MainWindow::resultShown);
    m_figures = new FigureActions(
        m_host, [this] { return m_source; }, this);
    createMenus();
    readSettings();
    host(m_project);
    newDocument();
}

MainWindow::~MainWindow()
{
    // The sources first (the project's computation is waited for), then the jobs over the views.
    delete m_pending;
    if (m_source != m_project)
        delete m_source;
    delete m_project;
    delete m_host.jobs;
}

void MainWindow::createCentral()
{
    auto *central = new QWidget;
    m_host.central = new QVBoxLayout(central);
    m_host.central->setContentsMargins(0, 0, 0, 0);
    m_host.central->setSpacing(2);
    m_host.banner = new StaleBanner(m_host.views->tabs());
    m_host.central->addWidget(m_host.banner);
    m_host.central->addWidget(m_host.views, 1);
    setCentralWidget(central);
    connect(m_host.views, &AttentionViews::setHeadActivated, this, &MainWindow::activateHead);
    connect(m_host.viewBar, &ViewToolBar::settingsChanged, this,
            [this] { m_host.views->setSettings(m_host.viewBar->settings()); });
    connect(m_host.viewBar, &ViewToolBar::overlayToggled, m_host.views, &AttentionViews::setOverlay);
    m_host.views->setSettings(m_host.viewBar->settings());
    connect(m_host.jobs, &AttentionController::jobFailed, this, [this](const QString &message) {
        m_host.status->setNotice(message);
        m_host.status->message(message);
    });
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New"), this,
                    [this] {
                        if (maybeSave())
                            newDocument();
                    })
        ->setShortcut(QKeySequence::New);
    QAction *newWindow = file->addAction(tr("New &Window"), this, &MainWindow::openNewWindow);
    newWindow->setObjectName(QStringLiteral("newWindowAction"));
    newWindow->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N));
    file->addAction(tr("&Open\u2026"), this, &MainWindow::open)->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &Model…"), this,
                    [this] {
                        if (!maybeSave())
                            return;
                        OpenModelDialog dialog(hubCacheDir(), m_host.lastDir, this);
                        if (dialog.exec() == QDialog::Accepted && !dialog.chosenDir().isEmpty())
                            openModel(dialog.chosenDir());
                    })
        ->setObjectName(QStringLiteral("openModel"));
    QAction *compare = file->addAction(tr("&Compare…"), this, &MainWindow::compare);
    compare->setObjectName(QStringLiteral("compareAction"));
    compare->setToolTip(tr("Two runs side by side and as their difference: two texts on one model, one text on "
                           "two models of the same shape, or two attention files."));
    file->addAction(m_project->compareWithSavedAction());
    connect(m_project, &ProjectSource::compareWithSavedRequested, this, &MainWindow::compareWithSaved);
    m_openHead = file->addAction(tr("Open This Head in the &Editor"), this, [this] {
        openHeadInEditor(m_host.views->modelView()->currentLayer(), m_host.views->modelView()->currentHead());
    });
    m_openHead->setObjectName(QStringLiteral("openHeadInEditor"));
    m_host.views->addHeadAction(m_openHead);
    QMenu *recent = file->addMenu(tr("Open &Recent"));
    connect(recent, &QMenu::aboutToShow, this, [this, recent] { fillRecentMenu(recent); });
    fillExamplesMenu(file->addMenu(tr("&Examples")));
    file->addSeparator();
    file->addActions(m_project->saveActions());
    file->addSeparator();
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    QAction *undo = m_project->undoGroup()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = m_project->undoGroup()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts(keysWith(QKeySequence::Redo,
                                {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)}));
    edit->addActions({undo, redo});
    m_figures->addTo(file, edit);
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    m_host.viewMenu = menuBar()->addMenu(tr("&View"));
    for (QDockWidget *d : m_project->docks())
        m_host.viewMenu->addAction(d->toggleViewAction());
    m_host.viewMenu->addAction(m_host.viewBar->toggleViewAction());
    m_host.viewMenuSlot = m_host.viewMenu->addSeparator();
    m_presentation = new PresentationMode(this);
    m_host.viewMenu->addAction(m_presentation->action());
    m_host.viewMenu->addMenu(createLanguageMenu(this));

    m_backendMenu = new BackendMenu(m_project->compute(), menuBar());
    connect(m_backendMenu, &BackendMenu::chosen, m_project, &ProjectSource::requestCompute);
    menuBar()->addMenu(m_backendMenu);
    fillHelpMenu(menuBar()->addMenu(tr("&Help")), this, [this] { return m_host.status->backend(); });
}

void MainWindow::host(Source *source)
{
    if (m_pending && m_pending != source)
        m_pending->deleteLater(); // a file still being read no longer replaces what is shown
    m_pending = nullptr;
    if (source != m_source) {
        if (m_source) {
            m_source->setInFront(false);
            if (m_source != m_project)
                m_source->deleteLater();
        }
        m_host.banner->clear(); // what the banner and the notice said was the other source's
        m_host.status->setNotice({});
        m_source = source;
        source->setInFront(true);
    }
    m_openHead->setEnabled(source->hasHeadProjects());
    updateTitle();
}

void MainWindow::adopt(Source *source)
{
    if (m_pending)
        m_pending->deleteLater();
    m_pending = source;
    connect(source, &Source::ready, this, [this, source] { host(source); });
    connect(source, &Source::failed, this, [this, source](const QString &path, const QString &message) {
        m_host.status->error(message);
        emit openFailed(path, message);
        if (source != m_source)
            source->deleteLater();
    });
    connect(source, &Source::shown, this, &MainWindow::attentionShown);
    connect(source, &Source::opened, this, &MainWindow::attentionOpened);
    connect(source, &Source::titleChanged, this, &MainWindow::updateTitle);
    connect(source, &Source::headRequested, this, &MainWindow::activateHead);
}

void MainWindow::updateTitle()
{
    setWindowTitle(m_source->title());
    setWindowModified(m_source->isModified());
}

bool MainWindow::openFile(const QString &path)
{
    if (isAttentionFilePath(path.toStdString()) || QkDump::isDump(path.toStdString())) {
        adopt(new FileSource(m_host, path, this));
        return true;
    }
    if (QFileInfo(path).isDir())
        return openModel(path);
    return m_project->open(path, Document::readProject(path));
}

bool MainWindow::openExample(const QString &resourcePath)
{
    // Opened untitled whatever folder its copy was read from: Save asks where to.
    return m_project->open(resourcePath, readExample(resourcePath));
}

bool MainWindow::openModel(const QString &dir)
{
    if (!QFileInfo(dir).isDir()) {
        m_host.status->error(tr("%1 is not a folder.").arg(dir));
        return false;
    }
    if (isTranslationModelFolder(QDir(dir).absolutePath().toStdString())) {
        // An encoder and a decoder: a source of its own (the text box of a model run reads one text).
        auto *translation = new TranslationSource(m_host, this);
        adopt(translation);
        translation->load(dir);
        return true;
    }
    ModelRunSource *model = modelSource(); // another folder in the same source keeps its text
    if (!model) {
        model = new ModelRunSource(m_host, this);
        adopt(model);
        connect(model, &ModelRunSource::runShown, this, &MainWindow::modelRunShown);
        // The model and its text as A, the same text as B to be edited.
        connect(model, &ModelRunSource::compareRequested, this, [this, model] {
            if (!model->attention())
                return;
            ComparisonSide side;
            side.path = model->attention()->path;
            side.text = model->textEdit()->text();
            side.model = model->shownModel();
            openComparison(side, side);
        });
    }
    model->load(dir);
    return true;
}

bool MainWindow::openComparison(const ComparisonSide &a, const ComparisonSide &b)
{
    for (const auto &[side, name] : {std::pair{&a, tr("A")}, std::pair{&b, tr("B")}}) {
        const QString problem = side->problem(name);
        if (!problem.isEmpty()) {
            m_host.status->error(problem);
            return false;
        }
    }
    adopt(new ComparisonSource(m_host, a, b, this));
    return true;
}

MainWindow *MainWindow::compareWithSaved()
{
    const Document *document = m_project->document();
    if (!document || document->filePath().isEmpty())
        return nullptr;
    ComparisonSide saved, edited;
    saved.path = edited.path = document->filePath();
    edited.project = std::make_shared<const Project>(document->project());
    if (const QString problem = saved.problem(tr("A")); !problem.isEmpty()) {
        m_host.status->error(problem);
        return nullptr;
    }
    // A window shows one source, and the project behind another one is a new, blank one
    // (ProjectSource): replacing the project here would lose its edits, so another window shows
    // the comparison.
    MainWindow *window = m_source == m_project && m_project->isModified() ? openNewWindow() : this;
    window->openComparison(saved, edited);
    return window;
}

void MainWindow::compare()
{
    if (!maybeSave())
        return;
    // From the model and text in front, where one is: B starts as A, to be edited.
    ComparisonSide a;
    if (ModelRunSource *model = modelSource(); model && model->attention()) {
        a.path = model->attention()->path;
        a.text = model->textEdit()->text();
    }
    auto *dialog = new CompareDialog(a, a, m_host.lastDir, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { openComparison(dialog->side(0), dialog->side(1)); });
    dialog->open();
}

bool MainWindow::openExampleModel(ExampleModelId which)
{
    const QString dir = exampleModelDir(which);
    if (dir.isEmpty()) {
        m_host.status->error(
            tr("The example model is not installed: no folder holds it (looked in %1).")
                .arg(QDir::toNativeSeparators(exampleModelCandidates(which).join(QStringLiteral(", ")))));
        return false;
    }
    return maybeSave() && openModel(dir);
}

bool MainWindow::openHeadInEditor(int layer, int head)
{
    std::optional<Project> project = m_source->headProject(layer, head);
    if (!project)
        return false;
    m_project->setDocument(new Document(std::move(*project)));
    return true;
}

void MainWindow::newDocument()
{
    m_project->newDocument();
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

bool MainWindow::offerRecovery(std::optional<bool> answer)
{
    return m_project->offerRecovery(answer);
}

QStringList MainWindow::exampleFiles()
{
    QStringList out;
    for (const ExampleEntry &e : builtInExamples())
        out << e.path;
    return out;
}

void MainWindow::setMemoryBudget(const MemoryBudget &budget)
{
    m_host.budget = budget;
    m_host.jobs->setMemoryBudget(budget);
    m_project->budgetChanged();
}

SetSource *MainWindow::setSource() const
{
    return qobject_cast<SetSource *>(m_source);
}

ModelRunSource *MainWindow::modelSource() const
{
    return qobject_cast<ModelRunSource *>(m_pending ? m_pending.data() : m_source);
}

ComparisonSource *MainWindow::comparisonSource() const
{
    return qobject_cast<ComparisonSource *>(m_pending ? m_pending.data() : m_source);
}

QString MainWindow::lastError() const
{
    return m_host.status->lastError();
}

QString MainWindow::statusText() const
{
    return m_host.status->text();
}

const ShownAttention &MainWindow::shownAttention() const
{
    return m_host.views->attention();
}

Document *MainWindow::document() const
{
    return m_project->document();
}

ComputeController *MainWindow::computeController() const
{
    return m_project->compute();
}

ComputedTracePtr MainWindow::currentResult() const
{
    return m_project->result();
}

void MainWindow::activateHead(int layer, int head)
{
    m_source->setLayer(layer);
    m_host.views->setCurrentHead(head);
    m_host.views->modelView()->setCurrent(m_source->requested().layer, head);
    m_host.views->showHead(head);
}

bool MainWindow::maybeSave()
{
    return m_project->maybeSave();
}

void MainWindow::open()
{
    if (!maybeSave())
        return;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open project, attention file or Q/K dump"), m_host.lastDir,
        tr("Projects, attention files and Q/K dumps (*.attnscope.json *.json *.npy *.npz *.safetensors);;"
           "AttnScope projects (*.attnscope.json *.json);;Attention files (*.npy *.npz *.safetensors);;"
           "Q/K dumps (attnscope-qk.json);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::fillRecentMenu(QMenu *menu)
{
    menu->clear();
    const QStringList recent = recentFiles();
    for (const QString &path : recent) {
        menu->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            if (maybeSave())
                                openFile(path);
                        })
            ->setToolTip(plainToolTip(path));
    }
    if (recent.isEmpty())
        menu->addAction(tr("(none)"))->setEnabled(false);
}

void MainWindow::fillExamplesMenu(QMenu *menu)
{
    // The example models first: their folders are looked for once (they come with the program).
    const struct {
        ExampleModelId which;
        QString text, name;
    } examples[] = {
        {ExampleModelId::TinyGpt2, tr("Example model: tiny GPT-2"), QStringLiteral("exampleModel")},
        {ExampleModelId::TinyQwen3, tr("Example model: tiny Qwen3 (Chinese and English)"),
         QStringLiteral("exampleModelQwen3")},
        {ExampleModelId::TinyMarianEnZh, tr("Example model: tiny translation, English to Chinese"),
         QStringLiteral("exampleModelMarian")},
    };
    for (const auto &example : examples) {
        const ExampleModelId which = example.which;
        QAction *model = menu->addAction(example.text, this, [this, which] { openExampleModel(which); });
        model->setObjectName(example.name);
        const QString dir = exampleModelDir(which);
        model->setEnabled(!dir.isEmpty());
        model->setToolTip(plainToolTip(
            dir.isEmpty() ? tr("The example model is not installed: no folder holds it (looked in %1).")
                                .arg(QDir::toNativeSeparators(exampleModelCandidates(which).join(QStringLiteral(", "))))
                          : QDir::toNativeSeparators(dir)));
    }
    menu->setToolTipsVisible(true);
    menu->addSeparator();
    // Loose examples next; each tutorial's in a submenu. The titles are data, "中文 — English" in
    // both languages at once: the menu names each by its half in the interface's language, short
    // (exampleMenuText), and the tooltip holds the whole title.
    QMap<QString, QMenu *> groups;
    for (const ExampleEntry &e : builtInExamples()) {
        QMenu *into = menu;
        if (!e.group.isEmpty()) {
            if (!groups.contains(e.group)) {
                if (groups.isEmpty())
                    menu->addSeparator();
                QMenu *group = menu->addMenu(exampleMenuText(e.group));
                group->menuAction()->setToolTip(e.group);
                group->setToolTipsVisible(true);
                groups.insert(e.group, group);
            }
            into = groups.value(e.group);
        }
        const QString path = e.path;
        QAction *action = into->addAction(exampleMenuText(e.title), this, [this, path] {
            if (maybeSave())
                openExample(path);
        });
        action->setData(path);
        action->setToolTip(e.title);
    }
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    writeSettings();
    m_project->autosaver()->removeCopy(); // saved or discarded on purpose: nothing to recover
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const auto urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    if (maybeSave())
        openFile(urls.first().toLocalFile());
}

void MainWindow::readSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        placeForFirstRun(this, findChild<QDockWidget *>(QStringLiteral("ModelDock")),
                         findChild<QDockWidget *>(QStringLiteral("MaskDock")));
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_host.lastDir =
        settings
            .value(QStringLiteral("files/lastDir"), QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
            .toString();
    if (auto kind = ColorMap::fromKey(settings.value(QStringLiteral("view/colorMap")).toString()))
        m_host.viewBar->setColorMap(*kind);
    m_host.viewBar->setSinkApart(settings.value(QStringLiteral("view/sinkApart"), false).toBool());
    const int backend = settings.value(QStringLiteral("compute/backend"), int(BackendRequest::Auto)).toInt();
    m_backendMenu->choose(BackendRequest(std::clamp(backend, 0, 2)),
                          settings.value(QStringLiteral("compute/vulkanDevice")).toString());
}

void MainWindow::writeSettings()
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    // Another source hid the project's docks: the layout to keep is the project's.
    if (m_source == m_project)
        settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("files/lastDir"), m_host.lastDir);
    settings.setValue(QStringLiteral("view/colorMap"), ColorMap::key(m_host.viewBar->settings().colorMap));
    settings.setValue(QStringLiteral("view/sinkApart"), m_host.viewBar->settings().sinkApart);
    settings.setValue(QStringLiteral("compute/backend"), int(m_project->compute()->backendRequest()));
    settings.setValue(QStringLiteral("compute/vulkanDevice"), m_project->compute()->vulkanDevice());
}

} // namespace attnscope
