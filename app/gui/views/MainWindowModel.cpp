// MainWindow: real models. A model folder is loaded on a worker and shown as a read-only
// document through the attention views; the text box's sentence is run on the worker as it
// is typed (a newer text supersedes an older one), and any head can be opened as an
// editable project with the model's real inputs and weights.

#include "app/gui/views/MainWindow.h"

#include "app/gui/document/ExampleModel.h"
#include "app/gui/views/ElidedLabel.h"
#include "app/gui/views/HeatmapView.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PlainText.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

namespace attnscope {

namespace {
// What a freshly opened model reads before anything is typed.
const char *const kFirstSentence = "The cat sat on the mat.";
} // namespace

void MainWindow::createModelViews(QMenu *file)
{
    m_modelJobs = new ModelController(this);
    m_modelJobs->setBackendHost(m_compute->backendHost()); // runs on the backend the user chose
    m_modelText = new QLineEdit;
    m_modelText->setObjectName(QStringLiteral("modelText"));
    m_modelText->setPlaceholderText(tr("Type a sentence…"));
    m_modelText->setClearButtonEnabled(true);
    m_modelText->hide();
    if (auto *layout = qobject_cast<QVBoxLayout *>(centralWidget()->layout()))
        layout->insertWidget(0, m_modelText);
    connect(m_modelText, &QLineEdit::textChanged, this, [this](const QString &text) {
        // On the latest model loaded, which may not be shown yet (its first run is in flight).
        if (m_transformer)
            m_modelJobs->run(text);
    });

    QAction *openModelAction = new QAction(tr("Open &Model…"), this);
    openModelAction->setObjectName(QStringLiteral("openModel"));
    connect(openModelAction, &QAction::triggered, this, [this] {
        if (!maybeSave())
            return;
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a GPT-2 or BERT Model Folder"), m_lastDir);
        if (!dir.isEmpty())
            openModel(dir);
    });
    m_openHeadAction = new QAction(tr("Open This Head in the &Editor"), this);
    m_openHeadAction->setObjectName(QStringLiteral("openHeadInEditor"));
    m_openHeadAction->setEnabled(false);
    connect(m_openHeadAction, &QAction::triggered, this,
            [this] { openHeadInEditor(modelView()->currentLayer(), modelView()->currentHead()); });
    // Inserted after File > Open…: the second action of the menu.
    const QList<QAction *> actions = file->actions();
    file->insertAction(actions.size() > 2 ? actions.at(2) : nullptr, openModelAction);
    file->insertAction(actions.size() > 2 ? actions.at(2) : nullptr, m_openHeadAction);

    createExampleModelAction();

    // The model view's context menu opens the head under the mouse; the heads grid's the
    // current head of the current layer.
    modelView()->viewport()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(modelView()->viewport(), &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        const auto [layer, head] = modelView()->tileAt(pos);
        if (layer < 0)
            return;
        modelView()->setCurrent(layer, head);
        QMenu menu;
        menu.addAction(m_openHeadAction);
        menu.exec(modelView()->viewport()->mapToGlobal(pos));
    });
    headsGrid()->setContextMenuPolicy(Qt::ActionsContextMenu);
    headsGrid()->addAction(m_openHeadAction);
    connect(headsGrid(), &HeadsGridView::headActivated, this,
            [this](int head) { modelView()->setCurrent(m_layer, head); });

    connect(m_modelJobs, &ModelController::loaded, this, [this](const ModelPtr &, const QString &dir) {
        m_modelDir = dir;
        const QString text = m_modelText->text().isEmpty() ? QString::fromUtf8(kFirstSentence) : m_modelText->text();
        // The document changes only when the first run succeeds (showModelRun).
        m_modelJobs->run(text);
    });
    connect(m_modelJobs, &ModelController::loadFailed, this, [this](const QString &, const QString &message) {
        showError(message);
        emit openFailed(m_modelDir, message);
    });
    connect(m_modelJobs, &ModelController::runReady, this, &MainWindow::showModelRun);
    // After runReady: the label names the model (showModelRun), then where its attention ran.
    connect(m_modelJobs, &ModelController::ranOn, this, [this](const QString &backend, const QString &device) {
        m_backendLabel->setText(tr("%1 on %2 — %3").arg(m_modelSummary, backend, device));
    });
    connect(m_modelJobs, &ModelController::runFailed, this, [this](const QString &message) {
        m_lastError = message;
        m_messageLabel->showMessage(message);
        // The views still show the text run before, which is no longer what the box holds:
        // greyed under a banner that says why (the text gives more tokens than the positions).
        if (m_attention && m_transformer)
            setStale(true, message,
                     tr("The views show the text run before: running the model on the text as it is now failed."));
    });
}

void MainWindow::createExampleModelAction()
{
    // At the top of File > Examples, before the projects. The folder is looked for once: it
    // comes with the program (installed, or in the source tree) and does not come and go.
    auto *action = new QAction(tr("Example model: tiny GPT-2"), this);
    action->setObjectName(QStringLiteral("exampleModel"));
    const QString dir = exampleModelDir();
    if (dir.isEmpty()) {
        action->setEnabled(false);
        action->setToolTip(
            plainToolTip(tr("The example model is not installed: no folder holds it (looked in %1).")
                             .arg(QDir::toNativeSeparators(exampleModelCandidates().join(QStringLiteral(", "))))));
    } else {
        action->setToolTip(plainToolTip(QDir::toNativeSeparators(dir)));
    }
    connect(action, &QAction::triggered, this, [this] { openExampleModel(); });
    m_examplesMenu->setToolTipsVisible(true);
    QAction *first = m_examplesMenu->actions().value(0);
    m_examplesMenu->insertAction(first, action);
    m_examplesMenu->insertSeparator(first);
}

bool MainWindow::openExampleModel()
{
    const QString dir = exampleModelDir();
    if (dir.isEmpty()) {
        showError(tr("The example model is not installed: no folder holds it (looked in %1).")
                      .arg(QDir::toNativeSeparators(exampleModelCandidates().join(QStringLiteral(", ")))));
        return false;
    }
    if (!maybeSave())
        return false;
    return openModel(dir);
}

bool MainWindow::openModel(const QString &dir)
{
    if (!QFileInfo(dir).isDir()) {
        showError(tr("%1 is not a folder.").arg(dir));
        return false;
    }
    m_modelJobs->load(dir);
    m_messageLabel->showMessage(tr("Loading the model in %1…").arg(QDir(dir).dirName()));
    return true;
}

void MainWindow::showModelRun(ModelPtr model, ModelRunPtr run, const AttentionSet &set)
{
    const bool sameModel = m_attention && m_transformer == model;
    auto loaded = std::make_shared<LoadedAttention>();
    loaded->path = sameModel ? m_attention->path : QDir(m_modelDir).absolutePath();
    loaded->set = set;
    m_modelRun = run;
    if (!sameModel) {
        // A new model: the attention path sets up the read-only document (title: the folder).
        if (m_modelText->text().isEmpty()) {
            const QSignalBlocker block(m_modelText);
            m_modelText->setText(QString::fromUtf8(kFirstSentence));
        }
        showAttention(loaded);
        m_transformer = model; // after showAttention: leaving the old document clears it
        // In place of showAttention's "Attention file: model": which model, of what kind and shape.
        const ModelConfig &config = model->config();
        m_modelSummary = tr("Model: %1 (%2, %3 layers, %4 heads)")
                             .arg(QFileInfo(loaded->path).fileName(),
                                  config.type == ModelType::Gpt2 ? QStringLiteral("GPT-2") : QStringLiteral("BERT"))
                             .arg(config.layers)
                             .arg(config.heads);
        m_backendLabel->setText(m_modelSummary);
        m_modelRun = run;
        m_modelText->show();
        m_openHeadAction->setEnabled(true);
    } else {
        // Another sentence: the same layer and head stay in view.
        m_attention = loaded;
        m_layer = std::min(m_layer, set.layers() - 1);
        modelView()->clear();
        m_timeLabel->setText(tr("%1 layers, %2 heads, %3 \u00d7 %4 tokens")
                                 .arg(set.layers())
                                 .arg(set.heads())
                                 .arg(set.queries())
                                 .arg(set.keys()));
        m_messageLabel->clear();
        if (m_stale)
            setStale(false);
        refreshAttentionViews(true);
    }
    emit modelRunShown(run);
}

bool MainWindow::openHeadInEditor(int layer, int head)
{
    if (!m_modelRun || layer < 0 || layer >= m_modelRun->layers || head < 0 || head >= m_modelRun->heads)
        return false;
    Project project;
    project.title = tr("%1 layer %2 head %3")
                        .arg(QFileInfo(m_attention ? m_attention->path : m_modelDir).fileName())
                        .arg(layer)
                        .arg(head)
                        .toStdString();
    project.problem = headProblem(*m_modelRun, layer, head);
    project.queryTokens = m_attention ? m_attention->set.queryTokens : m_modelRun->tokens;
    setDocument(new Document(std::move(project)));
    return true;
}

} // namespace attnscope
