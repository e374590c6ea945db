#include "app/gui/sources/TranslationSource.h"

#include "app/gui/views/AlignmentView.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/WindowStatus.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>

#include <algorithm>

namespace attnscope {

namespace {

// What a freshly opened translation model reads before anything is typed.
const char *const kFirstSource = "I have three red apples.";

// A run's layer of one kind as a project (the step view and the tensors it shows): computing it
// gives the run's weights of that layer again.
class TranslationTensors : public TensorProvider
{
public:
    TranslationTensors(TranslationRunPtr run, TranslationAttention kind, std::vector<std::string> queries,
                       std::vector<std::string> keys, QString name)
        : m_run(std::move(run)), m_kind(kind), m_queries(std::move(queries)), m_keys(std::move(keys)),
          m_name(std::move(name))
    {
    }
    Project layerProject(int layer) const override
    {
        Project p;
        p.title = TranslationSource::tr("%1, layer %2").arg(m_name).arg(layer).toStdString();
        p.problem = translationLayerProblem(*m_run, m_kind, layer);
        p.queryTokens = m_queries;
        if (m_kind == TranslationAttention::Cross)
            p.keyTokens = m_keys;
        return p;
    }

private:
    TranslationRunPtr m_run;
    TranslationAttention m_kind;
    std::vector<std::string> m_queries, m_keys;
    QString m_name;
};

} // namespace

TranslationSource::TranslationSource(SourceHost &host, QObject *parent)
    : SetSource(host, parent), m_jobs(new TranslationController(this)), m_rows(new QWidget), m_source(new QLineEdit),
      m_target(new QLineEdit), m_result(plainLabel()), m_kind(new QComboBox), m_alignment(new AlignmentView)
{
    m_jobs->setBackendHost(host.backend);
    m_source->setObjectName(QStringLiteral("translationSource"));
    m_source->setPlaceholderText(tr("Type a sentence in the model's source language: it is translated as you type"));
    m_source->setToolTip(tr("The encoder reads this text; the decoder's cross-attention looks back at its tokens."));
    m_source->setClearButtonEnabled(true);
    m_target->setObjectName(QStringLiteral("translationTarget"));
    m_target->setPlaceholderText(tr("Empty: the model's own translation. Type one to teacher-force it"));
    m_target->setToolTip(tr("A translation typed here is fed to the decoder as it is (teacher forcing), so you see "
                            "where each of its words looks in the source; left empty, the model translates "
                            "greedily and the views show its own words."));
    m_target->setClearButtonEnabled(true);
    m_result->setObjectName(QStringLiteral("translationResult"));
    m_result->setStyleSheet(QStringLiteral("color: #555"));
    m_kind->setObjectName(QStringLiteral("translationAttention"));
    m_kind->addItem(tr("Cross-attention (target → source)"), int(TranslationAttention::Cross));
    m_kind->addItem(tr("Encoder self-attention (source)"), int(TranslationAttention::Encoder));
    m_kind->addItem(tr("Decoder self-attention (target)"), int(TranslationAttention::Decoder));
    m_kind->setToolTip(tr("Which attention the views show: the encoder reading the source, the decoder reading "
                          "the target so far, or the decoder's queries over the encoder's source tokens."));
    auto *grid = new QGridLayout(m_rows);
    grid->setContentsMargins(4, 2, 4, 2);
    auto *sourceLabel = plainLabel(tr("Source:"));
    sourceLabel->setBuddy(m_source);
    auto *targetLabel = plainLabel(tr("Target:"));
    targetLabel->setBuddy(m_target);
    auto *kindLabel = plainLabel(tr("Show:"));
    kindLabel->setBuddy(m_kind);
    grid->addWidget(sourceLabel, 0, 0);
    grid->addWidget(m_source, 0, 1);
    grid->addWidget(kindLabel, 0, 2);
    grid->addWidget(m_kind, 0, 3);
    grid->addWidget(targetLabel, 1, 0);
    grid->addWidget(m_target, 1, 1);
    grid->addWidget(m_result, 1, 2, 1, 2);
    grid->setColumnStretch(1, 1);
    m_rows->hide();
    host.central->insertWidget(0, m_rows);
    m_dock = new QDockWidget(tr("Alignment"), host.window);
    m_dock->setObjectName(QStringLiteral("alignmentDock"));
    m_alignment->setMinimumHeight(260); // two rows of labels and room for the lines between them
    m_dock->setWidget(m_alignment);
    host.window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    m_dock->hide();

    connect(m_source, &QLineEdit::textChanged, this, [this] { request(); });
    connect(m_target, &QLineEdit::textChanged, this, [this] { request(); });
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this] { showKind(false); });
    connect(m_jobs, &TranslationController::loaded, this, [this](const TranslationModelPtr &, const QString &dir) {
        m_loadedDir = dir;
        if (m_source->text().isEmpty()) {
            const QSignalBlocker block(m_source);
            m_source->setText(QString::fromUtf8(kFirstSource));
        }
        request();
    });
    connect(m_jobs, &TranslationController::loadFailed, this, &Source::failed);
    connect(m_jobs, &TranslationController::translationStarted, this, [this] {
        if (inFront() && m_target->text().trimmed().isEmpty())
            m_result->setText(tr("Translating…"));
    });
    connect(m_jobs, &TranslationController::translationReady, this, &TranslationSource::showTranslation);
    connect(m_jobs, &TranslationController::ranOn, this, [this](const QString &backend, const QString &device) {
        if (inFront())
            m_host.status->setBackend(tr("%1 on %2 — %3").arg(m_summary, backend, device));
    });
    connect(m_jobs, &TranslationController::translationFailed, this, [this](const QString &message) {
        m_host.status->setLastError(message);
        m_host.status->message(message);
        m_result->setText(QString());
        if (inFront() && attention())
            m_host.banner->setStale(
                tr("The views show the translation before: translating the text as it is now failed."), message);
    });
}

TranslationSource::~TranslationSource()
{
    m_jobs->close();
    delete m_rows;
    delete m_dock;
}

void TranslationSource::load(const QString &dir)
{
    m_jobs->load(dir);
    m_host.status->message(tr("Loading the translation model in %1…").arg(QDir(dir).dirName()));
}

QString TranslationSource::kindName(TranslationAttention kind)
{
    return kind == TranslationAttention::Encoder   ? tr("encoder")
           : kind == TranslationAttention::Decoder ? tr("decoder")
                                                   : tr("cross-attention");
}

TranslationAttention TranslationSource::kind() const
{
    return TranslationAttention(m_kind->currentData().toInt());
}

void TranslationSource::setKind(TranslationAttention kind)
{
    m_kind->setCurrentIndex(m_kind->findData(int(kind)));
}

void TranslationSource::request()
{
    m_host.typedText = m_source->text();
    if (m_jobs->model())
        m_jobs->translate(m_source->text(), m_target->text());
}

void TranslationSource::setInFront(bool front)
{
    SetSource::setInFront(front);
    m_rows->setVisible(front);
    if (m_dock)
        m_dock->setVisible(front);
}

void TranslationSource::setLayer(int layer)
{
    SetSource::setLayer(layer);
    updateAlignment();
}

void TranslationSource::showTranslation(const TranslationModelPtr &model, const Translation &translation)
{
    const bool first = !attention(), sameModel = !first && m_model == model;
    m_translation = translation;
    if (!sameModel) {
        m_model = model;
        const TranslationConfig &c = model->config();
        m_summary = tr("Translation model: %1 (Marian, encoder %2 layers × %3 heads, decoder %4 layers × %5 heads)")
                        .arg(QFileInfo(m_loadedDir).fileName())
                        .arg(c.encoder.layers)
                        .arg(c.encoder.heads)
                        .arg(c.decoder.layers)
                        .arg(c.decoder.heads);
    }
    const QString text = QString::fromStdString(model->targetText(translation.run->target.ids));
    m_result->setText(translation.greedy ? tr("Translation: %1").arg(text) : QString());
    showKind(sameModel);
    if (first) {
        emit ready();
    } else if (!sameModel && inFront()) {
        m_host.status->setBackend(m_summary);
        announce();
        emit titleChanged();
    }
    emit translationShown();
}

void TranslationSource::showKind(bool keepView)
{
    if (!m_translation.run)
        return;
    const TranslationAttention k = kind();
    const AttentionSet &set = m_translation.sets[std::size_t(k)];
    auto loaded = std::make_shared<LoadedAttention>();
    loaded->path = QDir(m_loadedDir).absolutePath();
    loaded->set = set;
    const QString name = QFileInfo(loaded->path).fileName();
    loaded->provider = std::make_shared<TranslationTensors>(m_translation.run, k, set.queryTokens, set.keyTokens,
                                                            tr("%1 %2").arg(name, kindName(k)));
    setAttention(std::move(loaded), keepView);
    updateAlignment();
}

void TranslationSource::updateAlignment()
{
    if (!m_translation.run)
        return;
    const AttentionSet &cross = m_translation.sets[std::size_t(TranslationAttention::Cross)];
    // The decoder layer in view; the last one while the encoder's layers are shown.
    const int layers = cross.layers();
    const int layer = kind() == TranslationAttention::Encoder ? layers - 1 : std::clamp(this->layer(), 0, layers - 1);
    std::vector<MatrixF> heads;
    for (int h = 0; h < cross.heads(); ++h)
        heads.push_back(cross.map(0, layer, h));
    QStringList source, target;
    for (const std::string &t : cross.keyTokens)
        source << QString::fromStdString(t);
    for (const std::string &t : cross.queryTokens)
        target << QString::fromStdString(t);
    const std::vector<std::int32_t> &ids = m_translation.run->source.ids;
    const auto eos = std::find(ids.begin(), ids.end(), m_translation.run->config.eosId);
    m_alignment->setCross(std::move(heads), source, target, eos == ids.end() ? -1 : int(eos - ids.begin()));
    if (m_dock)
        m_dock->setWindowTitle(tr("Alignment: cross-attention of decoder layer %1").arg(layer));
}

std::optional<Project> TranslationSource::headProject(int layer, int head) const
{
    if (!m_translation.run || !attention())
        return std::nullopt;
    const TranslationAttention k = kind();
    const AttentionSet &set = m_translation.sets[std::size_t(k)];
    if (layer < 0 || layer >= set.layers() || head < 0 || head >= set.heads())
        return std::nullopt;
    Project project;
    project.title = tr("%1 %2 layer %3 head %4")
                        .arg(QFileInfo(attention()->path).fileName(), kindName(k))
                        .arg(layer)
                        .arg(head)
                        .toStdString();
    project.problem = translationHeadProblem(*m_translation.run, k, layer, head);
    project.queryTokens = set.queryTokens;
    if (k == TranslationAttention::Cross)
        project.keyTokens = set.keyTokens;
    return project;
}

} // namespace attnscope
