#include "app/gui/sources/ComparisonSource.h"

#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"

#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ComparisonPanels.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PlainText.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/gui/views/WindowStatus.h"
#include "app/render/ErrorText.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/QkDump.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QTabWidget>
#include <QVBoxLayout>

#include <new>

namespace attnscope {

namespace {

enum Lane { ReadA, ReadB, Compare, SideLayer };

QString translate(const char *text)
{
    return QCoreApplication::translate("attnscope::ComparisonSource", text);
}

QString letter(int which)
{
    return which == 0 ? translate("A") : translate("B");
}

// The canonical folder of a model side, so that two spellings of one folder load it once.
QString folderOf(const ComparisonSide &side)
{
    const QString canonical = QFileInfo(side.path).canonicalFilePath();
    return canonical.isEmpty() ? QDir::cleanPath(QFileInfo(side.path).absoluteFilePath()) : canonical;
}

} // namespace

bool ComparisonSide::isModel() const
{
    return model || QFileInfo(path).isDir();
}

bool ComparisonSide::isProject() const
{
    return project || (!isModel() && path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) &&
                       !QkDump::isDump(path.toStdString()));
}

QString ComparisonSide::problem(const QString &name) const
{
    if (project)
        return {}; // in memory: nothing to read
    if (path.trimmed().isEmpty())
        return translate("%1: choose an attention file, a project or a model folder.").arg(name);
    if (!model && !QFileInfo::exists(path))
        return translate("%1: %2 does not exist.").arg(name, QDir::toNativeSeparators(path));
    if (isModel())
        return text.trimmed().isEmpty() ? translate("%1: type the text the model reads.").arg(name) : QString();
    const std::string p = path.toStdString();
    if (!isAttentionFilePath(p) && !QkDump::isDump(p) && !isProject())
        return translate("%1: %2 is not an attention file (.npy, .npz, .safetensors), a Q/K dump or a project "
                         "(.attnscope.json).")
            .arg(name, QFileInfo(path).fileName());
    return {};
}

ComparisonSource::ComparisonSource(SourceHost &host, ComparisonSide a, ComparisonSide b, QObject *parent)
    : SetSource(host, parent), m_sides{std::move(a), std::move(b)}, m_topRow(new QWidget),
      m_sideBySide(new SideBySideView), m_statsTable(new ComparisonStatsTable)
{
    // One model loaded once when both sides read one folder.
    const bool shared = m_sides[0].isModel() && m_sides[1].isModel() && folderOf(m_sides[0]) == folderOf(m_sides[1]);
    if (shared && !m_sides[1].model)
        m_sides[1].model = m_sides[0].model;

    m_topRow->setObjectName(QStringLiteral("comparisonRow"));
    auto *row = new QHBoxLayout(m_topRow);
    row->setContentsMargins(4, 2, 4, 2);
    for (int i = 0; i < 2; ++i) {
        const ComparisonSide &side = m_sides[size_t(i)];
        auto *label = plainLabel(tr("%1:").arg(letter(i)));
        row->addWidget(label);
        if (!side.isModel()) {
            auto *file = plainLabel(side.project ? tr("%1 (as edited)").arg(nameOf(i)) : nameOf(i));
            file->setToolTip(plainToolTip(QDir::toNativeSeparators(side.path)));
            row->addWidget(file, 1);
            continue;
        }
        auto *edit = new QLineEdit(side.text);
        m_texts[size_t(i)] = edit;
        edit->setObjectName(i == 0 ? QStringLiteral("comparisonTextA") : QStringLiteral("comparisonTextB"));
        edit->setPlaceholderText(tr("Text the model reads for %1").arg(letter(i)));
        edit->setToolTip(tr("Both texts must give as many tokens to be compared position by position; where "
                            "their tokens differ, the labels say both (“cat→dog”)."));
        label->setBuddy(edit);
        row->addWidget(edit, 1);
        connect(edit, &QLineEdit::textChanged, this, [this, i](const QString &text) {
            m_sides[size_t(i)].text = text; // the panel's titles change with the comparison shown
            if (m_models[size_t(i)]->model())
                m_models[size_t(i)]->run(text);
        });
    }
    m_showBox = new QComboBox;
    m_showBox->setObjectName(QStringLiteral("comparisonShow"));
    m_showBox->addItem(tr("B \u2212 A"));
    m_showBox->addItem(tr("A"));
    m_showBox->addItem(tr("B"));
    m_showBox->setToolTip(tr("What every view shows (the heads, the enlarged head, the mean, the model view) and "
                             "what Export Figure exports: the difference or either run."));
    auto *showLabel = plainLabel(tr("Show:"));
    showLabel->setBuddy(m_showBox);
    row->addWidget(showLabel);
    row->addWidget(m_showBox);
    connect(m_showBox, &QComboBox::currentIndexChanged, this, [this](int index) { setShown(Shown(index)); });
    m_sideBySideBox = new QCheckBox(tr("Side by side"));
    m_sideBySideBox->setObjectName(QStringLiteral("comparisonSideBySideToggle"));
    m_sideBySideBox->setChecked(true);
    m_sideBySideBox->setToolTip(
        tr("The current head of A, of B and of B \u2212 A next to each other, above the views."));
    row->addWidget(m_sideBySideBox);
    connect(m_sideBySideBox, &QCheckBox::toggled, this,
            [this](bool on) { m_sideBySide->setVisible(on && inFront() && m_comparison); });
    m_topRow->hide();
    m_sideBySide->hide();
    host.central->insertWidget(0, m_topRow);
    host.central->insertWidget(1, m_sideBySide, 0);
    m_sideBySide->setSettings(host.viewBar->settings());
    connect(host.viewBar, &ViewToolBar::settingsChanged, this,
            [this] { m_sideBySide->setSettings(m_host.viewBar->settings()); });
    connect(host.views, &AttentionViews::currentHeadChanged, this, &ComparisonSource::syncHead);
    connect(m_statsTable, &ComparisonStatsTable::headActivated, this, &Source::headRequested);

    for (int i = 0; i < 2; ++i) {
        if (!m_sides[size_t(i)].isModel())
            continue;
        auto *jobs = new ModelController(this);
        m_models[size_t(i)] = jobs;
        jobs->setBackendHost(host.backend); // runs on the backend the user chose
        connect(jobs, &ModelController::runReady, this,
                [this, i](const ModelPtr &, ModelRunPtr, const AttentionSet &set) { sideReady(i, set); });
        connect(jobs, &ModelController::runFailed, this, [this, i](const QString &message) { sideFailed(i, message); });
        connect(jobs, &ModelController::loadFailed, this,
                [this, i](const QString &, const QString &message) { sideFailed(i, message); });
        connect(jobs, &ModelController::loaded, this, [this, i, shared](const ModelPtr &model, const QString &) {
            m_models[size_t(i)]->run(m_sides[size_t(i)].text);
            if (i == 0 && shared && !m_sides[1].model) {
                m_sides[1].model = model;
                startSide(1);
            }
        });
    }
    startSide(0);
    if (!shared || m_sides[1].model)
        startSide(1); // else once A's model is loaded
    m_host.status->message(tr("Comparing %1 and %2\u2026").arg(sideTitle(0), sideTitle(1)));
}

ComparisonSource::~ComparisonSource()
{
    for (ModelController *jobs : m_models)
        if (jobs)
            jobs->close();
    delete m_topRow;
    delete m_sideBySide;
    delete m_statsTable; // a tab's page while in front, else nobody's
}

SideBySideView *ComparisonSource::sideBySide() const
{
    return m_sideBySide;
}

ComparisonStatsTable *ComparisonSource::statisticsTable() const
{
    return m_statsTable;
}

void ComparisonSource::startSide(int which)
{
    const ComparisonSide &side = m_sides[size_t(which)];
    ModelController *jobs = m_models[size_t(which)];
    if (!jobs) {
        readFile(which);
    } else if (side.model) {
        jobs->setModel(side.model);
        jobs->run(side.text);
    } else {
        jobs->load(side.path);
    }
}

void ComparisonSource::readFile(int which)
{
    if (m_sides[size_t(which)].isProject()) {
        computeProject(which);
        return;
    }
    const QString path = m_sides[size_t(which)].path;
    m_lanes[which == 0 ? ReadA : ReadB].submit([this, which, path](JobState &) -> JobLane::Deliver {
        const std::string p = path.toStdString();
        auto set = QkDump::isDump(p) ? readQkDumpSet(p) : readAttentionFile(p);
        if (!set)
            return [this, which, message = errorText(set.error())] { sideFailed(which, message); };
        return [this, which, set = std::move(*set)] { sideReady(which, set); };
    });
}

void ComparisonSource::computeProject(int which)
{
    const ComparisonSide &side = m_sides[size_t(which)];
    // Computed as the editor computes it (ComputeController), on the backend the user chose; the
    // set is the one the editor's views show (ShownAttention::ofTensors: one layer, its labels).
    m_lanes[which == 0 ? ReadA : ReadB].submit([this, which, path = side.path, project = side.project,
                                                host = m_host.backend,
                                                budget = m_host.budget](JobState &state) -> JobLane::Deliver {
        Result<Project> read = project ? Result<Project>(*project) : Document::readProject(path);
        if (!read)
            return [this, which, message = errorText(read.error())] { sideFailed(which, message); };
        auto computed = ComputeController::computeOnce(*host, std::move(*read), budget, state);
        if (!computed && computed.kind() == ErrorKind::Cancelled)
            return {};
        if (!computed)
            return [this, which, message = errorText(computed.error())] { sideFailed(which, message); };
        ShownAttention shown = ShownAttention::ofTensors(std::move(*computed));
        return [this, which, set = std::move(shown.set)] { sideReady(which, set); };
    });
}

void ComparisonSource::sideReady(int which, const AttentionSet &set)
{
    m_sets[size_t(which)] = set;
    compare();
}

void ComparisonSource::sideFailed(int which, const QString &message)
{
    refuse(tr("%1: %2").arg(letter(which), message));
}

void ComparisonSource::compare()
{
    if (!m_sets[0] || !m_sets[1])
        return;
    m_lanes[Compare].submit(
        [this, a = *m_sets[0], b = *m_sets[1], budget = m_host.budget.bytes()](JobState &) -> JobLane::Deliver {
            try {
                auto compared = compareSets(a, b, budget);
                if (!compared)
                    return [this, message = errorText(compared.error())] { refuse(message); };
                auto comparison = std::make_shared<const AttentionComparison>(std::move(*compared));
                std::vector<HeadDifference> stats = comparisonStatistics(*comparison);
                return [this, comparison, stats = std::move(stats)] { show(comparison, stats); };
            } catch (const std::bad_alloc &) {
                return [this] { refuse(tr("Memory ran out comparing A and B.")); };
            }
        });
}

void ComparisonSource::show(ComparisonPtr comparison, std::vector<HeadDifference> stats)
{
    const bool first = !m_comparison;
    m_comparison = std::move(comparison);
    m_statsTable->setStatistics(std::move(stats));
    showKind(!first);
    if (first) {
        emit ready(); // the window brings it to the front
    } else if (inFront()) {
        m_host.status->setLastError({});
        m_host.status->setBackend(origin());
    }
    m_sideBySide->setTitles(sideTitle(0), sideTitle(1));
    m_sideBySide->setGreyed(false);
    readSideBySide();
    emit compared(m_comparison);
}

void ComparisonSource::refuse(const QString &reason)
{
    emit refused(reason);
    if (!m_comparison) {
        emit failed(m_sides[0].path, reason); // the window changes nothing
        return;
    }
    m_host.status->setLastError(reason);
    if (!inFront())
        return;
    m_host.status->message(reason);
    // The views keep the last comparison, greyed under the reason.
    m_sideBySide->setGreyed(true); // with the views, under the reason
    m_host.banner->setStale(tr("The views show the last comparison: A and B as they are now cannot be compared."),
                            reason);
}

const AttentionSet *ComparisonSource::setOf(Shown shown) const
{
    if (!m_comparison)
        return nullptr;
    switch (shown) {
    case Shown::A:
        return &m_comparison->a;
    case Shown::B:
        return &m_comparison->b;
    case Shown::Difference:
        break;
    }
    return &m_comparison->difference;
}

void ComparisonSource::showKind(bool keepView)
{
    const AttentionSet *set = setOf(m_shown);
    if (!set)
        return;
    auto loaded = std::make_shared<LoadedAttention>();
    loaded->path = QFileInfo(m_sides[0].path).absoluteFilePath();
    loaded->set = *set;
    setAttention(std::move(loaded), keepView);
}

void ComparisonSource::setShown(Shown shown)
{
    if (m_showBox->currentIndex() != int(shown)) {
        const QSignalBlocker block(m_showBox);
        m_showBox->setCurrentIndex(int(shown));
    }
    if (shown == m_shown)
        return;
    m_shown = shown;
    showKind(true);
    emit titleChanged();
}

void ComparisonSource::setInFront(bool front)
{
    SetSource::setInFront(front);
    m_topRow->setVisible(front);
    m_sideBySide->setVisible(front && m_sideBySideBox->isChecked() && m_comparison);
    QTabWidget *tabs = m_host.views->tabs();
    if (front) {
        // After the heads, before the set-wide views.
        tabs->insertTab(tabs->indexOf(m_host.views->modelView()), m_statsTable, tr("Differences"));
        tabs->setTabToolTip(tabs->indexOf(m_statsTable),
                            tr("Every head's change from A to B, the most changed first; a click shows that head."));
        readSideBySide();
    } else if (tabs->indexOf(m_statsTable) >= 0) {
        tabs->removeTab(tabs->indexOf(m_statsTable));
        m_statsTable->hide();
    }
}

void ComparisonSource::announce()
{
    // Nothing to remember in File > Open Recent: a comparison is not a file.
    m_host.status->message(tr("Comparing %1 and %2").arg(sideTitle(0), sideTitle(1)), 4000);
}

void ComparisonSource::setLayer(int layer)
{
    const int before = this->layer();
    SetSource::setLayer(layer);
    if (this->layer() != before)
        readSideBySide();
}

void ComparisonSource::readSideBySide()
{
    if (!m_comparison || !inFront())
        return;
    m_lanes[SideLayer].submit([this, c = m_comparison, layer = layer()](JobState &state) -> JobLane::Deliver {
        ShownAttention shown[3];
        const AttentionSet *sets[3] = {&c->a, &c->b, &c->difference};
        for (int i = 0; i < 3; ++i) {
            shown[i].set = *sets[i];
            shown[i].layer = std::clamp(layer, 0, sets[i]->layers() - 1);
            shown[i].maps = readLayer(shown[i], shown[i].layer, &state.cancel);
            if (!shown[i].maps)
                return {}; // cancelled: a newer layer or comparison is read
        }
        return [this, a = shown[0], b = shown[1], d = shown[2]] {
            m_sideBySide->setLayers(a, b, d);
            syncHead();
            emit sideBySideShown();
        };
    });
}

void ComparisonSource::syncHead()
{
    m_sideBySide->setHead(m_host.views->currentHead());
}

QString ComparisonSource::nameOf(int which) const
{
    const ComparisonSide &side = m_sides[size_t(which)];
    if (side.project && side.path.isEmpty())
        return QString::fromStdString(side.project->title);
    return QFileInfo(side.path).fileName();
}

QString ComparisonSource::sideTitle(int which) const
{
    const ComparisonSide &side = m_sides[size_t(which)];
    if (side.project)
        return tr("%1: %2 (as edited)").arg(letter(which), nameOf(which));
    return tr("%1: %2").arg(letter(which), side.isModel() ? side.text : nameOf(which));
}

QString ComparisonSource::title() const
{
    const QString a = nameOf(0), b = nameOf(1);
    return a == b ? tr("Comparison on %1 \u2014 AttnScope").arg(a)
                  : tr("Comparison of %1 and %2 \u2014 AttnScope").arg(a, b);
}

ShownAttention ComparisonSource::requested() const
{
    ShownAttention source = SetSource::requested();
    // What figures are titled after.
    switch (m_shown) {
    case Shown::A:
        source.title = tr("A");
        break;
    case Shown::B:
        source.title = tr("B");
        break;
    case Shown::Difference:
        source.title = tr("B \u2212 A");
        break;
    }
    return source;
}

QString ComparisonSource::exportStem() const
{
    switch (m_shown) {
    case Shown::A:
        return tr("comparison-a");
    case Shown::B:
        return tr("comparison-b");
    case Shown::Difference:
        break;
    }
    return tr("comparison-difference");
}

QString ComparisonSource::origin() const
{
    const QString a = nameOf(0), b = nameOf(1);
    if (a == b && m_sides[0].isProject())
        return tr("Comparison of two states of %1").arg(a);
    return a == b ? tr("Comparison of two texts on %1").arg(a) : tr("Comparison: A %1, B %2").arg(a, b);
}

} // namespace attnscope
