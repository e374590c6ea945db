#include "app/gui/sources/ModelRunSource.h"

#include "app/gui/document/ExampleModel.h"
#include "app/gui/views/GenerationPanel.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/WindowStatus.h"
#include "app/render/ErrorText.h"
#include "core/formats/TraceExport.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

namespace attnscope {

namespace {

// What a freshly opened model reads before anything is typed.
const char *const kFirstSentence = "The cat sat on the mat.";
const char *const kFirstChineseSentence = "床前明月光，疑是地上霜。床前明月光，疑是地上霜。";

// A run's layer as a project: its attention input, every head, W_O, the scale and the mask, with
// the tokens as the views label them. Computing it gives the run's weights of that layer again,
// with the scores, Q, K, V and context the step view shows.
class RunTensors : public TensorProvider
{
public:
    RunTensors(ModelRunPtr run, std::vector<std::string> tokens, QString name)
        : m_run(std::move(run)), m_tokens(std::move(tokens)), m_name(std::move(name))
    {
    }
    Project layerProject(int layer) const override
    {
        Project p;
        p.title = ModelRunSource::tr("%1, layer %2").arg(m_name).arg(layer).toStdString();
        p.problem = layerProblem(*m_run, layer);
        p.queryTokens = m_tokens;
        return p;
    }

private:
    ModelRunPtr m_run;
    std::vector<std::string> m_tokens;
    QString m_name;
};

} // namespace

ModelRunSource::ModelRunSource(SourceHost &host, QObject *parent)
    : SetSource(host, parent), m_jobs(new ModelController(this)), m_textRow(new QWidget), m_text(new QLineEdit),
      m_hint(plainLabel()), m_compare(new QAction(tr("Compare With Another &Text…"), this)),
      m_generation(new GenerationController(this)), m_panel(new GenerationPanel)
{
    m_compare->setObjectName(QStringLiteral("compareWithAnotherText"));
    m_compare->setToolTip(tr("This text on this model as A, and another text to type as B: the views then show "
                             "B − A, head by head."));
    m_compare->setVisible(false);
    host.viewMenu->insertAction(host.viewMenuSlot, m_compare);
    connect(m_compare, &QAction::triggered, this, &ModelRunSource::compareRequested);
    m_jobs->setBackendHost(host.backend); // runs on the backend the user chose
    m_text->setObjectName(QStringLiteral("modelText"));
    m_text->setPlaceholderText(tr("Type any text: the model reads it as you type, in any language"));
    m_text->setToolTip(tr("The text the model runs on. Every layer and head shows its attention over these "
                          "tokens; write a sentence twice to see heads that copy what came before."));
    m_text->setClearButtonEnabled(true);
    m_text->setText(host.typedText);
    auto *label = plainLabel(tr("Text the model reads:"));
    label->setBuddy(m_text);
    m_hint->setObjectName(QStringLiteral("modelHint"));
    m_hint->setStyleSheet(QStringLiteral("color: #555"));
    auto *row = new QHBoxLayout(m_textRow);
    row->setContentsMargins(4, 2, 4, 2);
    row->addWidget(label);
    row->addWidget(m_text, 1);
    row->addWidget(m_hint);
    auto *compare = new QToolButton;
    compare->setObjectName(QStringLiteral("compareWithAnotherTextButton"));
    compare->setDefaultAction(m_compare);
    compare->setToolButtonStyle(Qt::ToolButtonTextOnly);
    row->addWidget(compare);
    m_textRow->hide();
    host.central->insertWidget(0, m_textRow);
    // The Generation dock, on the right beside the views; shown while this source is in front.
    m_dock = new QDockWidget(tr("Generation"), host.window);
    m_dock->setObjectName(QStringLiteral("generationDock"));
    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(m_panel);
    m_dock->setWidget(scroll);
    host.window->addDockWidget(Qt::RightDockWidgetArea, m_dock);
    m_dock->hide();
    connect(m_panel, &GenerationPanel::generateRequested, this,
            [this] { requestSteps(m_panel->settings().maxNewTokens); });
    connect(m_panel, &GenerationPanel::stepRequested, this, [this] { requestSteps(1); });
    connect(m_panel, &GenerationPanel::stopRequested, m_generation, &GenerationController::stop);
    connect(m_panel, &GenerationPanel::clearRequested, this, [this] {
        m_generation->reset();
        m_generated.clear();
        m_panel->setShot(nullptr);
        m_jobs->run(m_text->text());
    });
    connect(m_panel, &GenerationPanel::forceRequested, this, [this](int step, std::int32_t id) {
        const GenerationShotPtr shot = m_generation->lastShot();
        if (!shot)
            return;
        // The same length as before: the forced token, then as many steps as followed it.
        GenerationSettings s = m_panel->settings();
        const int steps = int(shot->generation.steps.size());
        s.maxNewTokens = std::max(steps, step + 1);
        m_generation->force(step, id, s, steps - step - 1);
    });
    connect(m_panel, &GenerationPanel::saveRequested, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(m_host.window, tr("Save the Generation into a Folder"), m_host.lastDir);
        if (dir.isEmpty())
            return;
        if (Status s = saveGeneration(dir); !s) {
            m_host.status->setLastError(errorText(s.error()));
            m_host.status->message(errorText(s.error()));
        } else {
            m_host.status->message(tr("Saved tokens.json and attentions.npy in %1").arg(QDir(dir).dirName()), 4000);
        }
    });
    connect(m_generation, &GenerationController::runningChanged, m_panel, &GenerationPanel::setRunning);
    connect(m_generation, &GenerationController::stepped, this, &ModelRunSource::showGeneration);
    connect(m_generation, &GenerationController::ended, this, &ModelRunSource::generationStopped);
    connect(m_generation, &GenerationController::stopped, this, &ModelRunSource::generationStopped);
    connect(m_generation, &GenerationController::failed, this, [this](const QString &message) {
        m_host.status->setLastError(message);
        m_host.status->message(message);
    });

    connect(m_text, &QLineEdit::textChanged, this, [this](const QString &text) {
        // On the latest model loaded, which may not be shown yet (its first run is in flight).
        m_host.typedText = text;
        // Another prompt: the generation after the old one goes.
        m_generation->reset();
        m_generated.clear();
        m_panel->setShot(nullptr);
        if (m_model)
            m_jobs->run(text);
    });
    connect(m_jobs, &ModelController::loaded, this, [this](const ModelPtr &model, const QString &dir) {
        m_loadedDir = dir;
        m_generation->reset();
        m_generated.clear();
        m_panel->setShot(nullptr);
        if (model->config().type == ModelType::Bert) {
            m_panel->setAvailable(false, tr("BERT has no language-model head: it reads text but cannot generate."));
        } else {
            m_panel->setAvailable(true);
            // The decoding the folder asks for (generation_config.json); greedy where it says nothing.
            auto defaults = readGenerationDefaults(QDir(dir).absolutePath().toStdString());
            if (!defaults)
                m_host.status->message(errorText(defaults.error()));
            m_panel->setDefaults(defaults ? *defaults : GenerationSettings{});
        }
        // What is shown changes only when the first run succeeds (showRun).
        m_jobs->run(m_text->text().isEmpty() ? QString::fromUtf8(kFirstSentence) : m_text->text());
    });
    connect(m_jobs, &ModelController::loadFailed, this, &Source::failed);
    connect(m_jobs, &ModelController::runReady, this, &ModelRunSource::showRun);
    // After runReady: the label names the model (showRun), then where its attention ran.
    connect(m_jobs, &ModelController::ranOn, this, [this](const QString &backend, const QString &device) {
        if (inFront())
            m_host.status->setBackend(tr("%1 on %2 — %3").arg(m_summary, backend, device));
    });
    connect(m_jobs, &ModelController::runFailed, this, [this](const QString &message) {
        m_host.status->setLastError(message);
        m_host.status->message(message);
        // The views still show the text run before, which is no longer what the box holds:
        // greyed under a banner that says why (the text gives more tokens than the positions).
        if (inFront())
            m_host.banner->setStale(
                tr("The views show the text run before: running the model on the text as it is now failed."), message);
    });
}

ModelRunSource::~ModelRunSource()
{
    m_generation->reset();
    m_jobs->close();
    delete m_textRow;
    delete m_dock;
}

void ModelRunSource::load(const QString &dir)
{
    m_jobs->load(dir);
    m_host.status->message(tr("Loading the model in %1…").arg(QDir(dir).dirName()));
}

void ModelRunSource::setInFront(bool front)
{
    SetSource::setInFront(front);
    m_textRow->setVisible(front);
    if (m_dock)
        m_dock->setVisible(front);
    m_compare->setVisible(front);
}

void ModelRunSource::showRun(const ModelPtr &model, ModelRunPtr run, const AttentionSet &set)
{
    // A run of another sequence than the generation shown (one step further by now) is stale.
    if (!m_generated.empty() && (run->ids != m_generated || m_generation->isRunning()))
        return;
    const bool first = !attention(), sameModel = !first && m_model == model;
    auto loaded = std::make_shared<LoadedAttention>();
    // The forward over a generation's sequence keeps its newest row framed.
    if (!m_generated.empty() && run->ids == m_generated)
        loaded->newRow = run->length - 1;
    loaded->path = sameModel ? attention()->path : QDir(m_loadedDir).absolutePath();
    loaded->set = set;
    loaded->provider = std::make_shared<RunTensors>(run, set.queryTokens, QFileInfo(loaded->path).fileName());
    m_run = std::move(run);
    if (!sameModel) {
        m_model = model;
        // Which model, of what kind and shape, in place of a file's container and type.
        const ModelConfig &config = model->config();
        const QString family = QString::fromUtf8(config.displayName());
        m_summary = config.keyValueHeads() == config.heads
                        ? tr("Model: %1 (%2, %3 layers, %4 heads)")
                              .arg(QFileInfo(loaded->path).fileName(), family)
                              .arg(config.layers)
                              .arg(config.heads)
                        : tr("Model: %1 (%2, %3 layers, %4 query heads sharing %5 key/value heads)")
                              .arg(QFileInfo(loaded->path).fileName(), family)
                              .arg(config.layers)
                              .arg(config.heads)
                              .arg(config.keyValueHeads());
        // A built-in example's README says which heads learnt something: said beside the box.
        const std::optional<ExampleModelId> example = exampleModelAt(loaded->path);
        QString hint;
        if (example == ExampleModelId::TinyGpt2)
            hint = tr("Worth a look: layer 0 head 3 (the previous token), layer 1 head 0 (induction: write the "
                      "sentence twice)");
        else if (example == ExampleModelId::TinyQwen3)
            hint = tr("Worth a look: layer 0 head 2 (the previous token), layer 1 (induction: type a Chinese "
                      "sentence twice)");
        m_hint->setText(hint);
        m_hint->setVisible(example.has_value());
        if (m_text->text().isEmpty()) {
            const QSignalBlocker block(m_text);
            // The Chinese example starts on a line of Li Bai's it has read, typed twice.
            m_text->setText(
                QString::fromUtf8(example == ExampleModelId::TinyQwen3 ? kFirstChineseSentence : kFirstSentence));
            m_host.typedText = m_text->text();
        }
    }
    setAttention(std::move(loaded), sameModel);
    if (first) {
        emit ready(); // the window brings it to the front
    } else if (!sameModel && inFront()) {
        // Another model in this window: its label and title.
        m_host.status->setBackend(m_summary);
        announce();
        emit titleChanged();
    }
    emit runShown(m_run);
}

std::optional<Project> ModelRunSource::headProject(int layer, int head) const
{
    // Not while a generation's steps are shown: the run is then of another sequence.
    if (m_run && attention() && m_run->length != attention()->set.queries())
        return std::nullopt;
    if (!m_run || layer < 0 || layer >= m_run->layers || head < 0 || head >= m_run->heads)
        return std::nullopt;
    Project project;
    project.title =
        tr("%1 layer %2 head %3").arg(QFileInfo(attention()->path).fileName()).arg(layer).arg(head).toStdString();
    project.problem = headProblem(*m_run, layer, head);
    project.queryTokens = attention()->set.queryTokens;
    return project;
}

void ModelRunSource::requestSteps(int steps)
{
    if (!m_model)
        return;
    GenerationSettings s = m_panel->settings();
    const GenerationShotPtr shot = m_generation->lastShot();
    if (m_generation->hasGeneration() && m_generation->model() == m_model && m_generation->prompt() == m_text->text()) {
        // More of the generation shown: `steps` beyond the steps it has.
        s.maxNewTokens = (shot ? std::int64_t(shot->generation.steps.size()) : 0) + steps;
        m_generation->more(s, steps);
        return;
    }
    s.maxNewTokens = steps;
    m_generated.clear();
    m_generation->start(m_model, m_text->text(), s, steps, m_host.budget);
    m_host.status->message(tr("Generating after \u201c%1\u201d\u2026").arg(m_text->text().left(40)));
}

void ModelRunSource::showGeneration(const GenerationShotPtr &shot)
{
    if (!shot || shot->set.isEmpty() || !attention())
        return;
    auto loaded = std::make_shared<LoadedAttention>(*attention());
    loaded->set = shot->set;
    loaded->provider.reset(); // the steps view reads the run of the whole sequence, once it is made
    loaded->newRow = shot->generation.steps.empty() ? -1 : shot->set.queries() - 1;
    m_generated = shot->generation.ids;
    setAttention(std::move(loaded), true);
    m_panel->setShot(shot);
    const std::size_t steps = shot->generation.steps.size();
    if (steps > 0)
        m_host.status->message(tr("Generated %n token(s)", nullptr, int(steps)));
    emit generationShown(shot);
}

void ModelRunSource::generationStopped(const GenerationShotPtr &shot)
{
    if (!shot)
        return;
    showGeneration(shot);
    // The run of the whole sequence: what the editor and the steps view read (its maps equal the
    // steps' rows).
    if (!shot->generation.steps.empty())
        m_jobs->runIds(shot->generation.ids);
}

Status ModelRunSource::saveGeneration(const QString &dir) const
{
    const GenerationShotPtr shot = m_generation->lastShot();
    if (!shot || shot->generation.steps.empty())
        return Error{tr("There is no generation to save.").toStdString(), ErrorKind::InvalidInput};
    const AttentionSet &set = shot->set;
    std::vector<MatrixF> maps;
    maps.reserve(std::size_t(set.layers() * set.heads()));
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h)
            maps.push_back(set.map(0, l, h));
    std::vector<const MatrixF *> parts;
    for (const MatrixF &m : maps)
        parts.push_back(&m);
    const NpyFolderTensor attentions{
        "attentions", {set.layers(), set.heads(), set.queries(), set.keys()}, parts, nullptr};
    return writeNpyFolder({attentions}, dir.toStdString(), {{"tokens.json", generationTokensJson(shot->generation)}});
}

} // namespace attnscope
