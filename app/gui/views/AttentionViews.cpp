#include "app/gui/views/AttentionViews.h"

#include "app/gui/document/AttentionController.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PooledHeatmapView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"
#include "app/gui/views/TeachingView.h"
#include "app/render/FigureRenderer.h"

#include <QLabel>
#include <QMenu>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>

namespace attnscope {

namespace {

// A project's notes: wrapped to the width they get, but asking for no room at all, so they never
// make the window larger than a small screen (a 1080p projector at 2x): there they give way to
// the views, and their whole text stays in the tooltip.
class NotesLabel : public QLabel
{
public:
    QSize minimumSizeHint() const override { return {0, 0}; }
};

} // namespace

AttentionViews::AttentionViews(AttentionController *jobs, QWidget *parent)
    : QWidget(parent), m_jobs(jobs), m_tabs(new QTabWidget), m_notes(new NotesLabel), m_grid(new HeadsGridView),
      m_headView(new HeatmapView), m_meanView(new HeatmapView), m_lines(new HeadLinesView),
      m_teaching(new TeachingView), m_modelView(new ModelView), m_statsTable(new StatsTable),
      m_rolloutView(new RolloutView), m_filePooled(new PooledHeatmapView)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0); // the notes ask for no room, not even a gap (NotesLabel)
    m_notes->setObjectName(QStringLiteral("projectNotes"));
    m_notes->setWordWrap(true);
    m_notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->setContentsMargins(8, 4, 8, 4);
    m_notes->setStyleSheet(QStringLiteral("background: #fdf6d8; color: #333;"));
    m_notes->hide();
    layout->addWidget(m_notes);
    layout->addWidget(m_tabs);
    m_meanView->setHead(-1);
    auto *split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_grid);
    split->addWidget(m_headView);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    m_tabs->addTab(split, tr("Heads"));
    m_tabs->addTab(m_lines, tr("Head view"));
    m_tabs->addTab(m_meanView, tr("Mean over heads"));
    m_tabs->addTab(m_teaching, tr("Step by step"));
    m_tabs->addTab(m_modelView, tr("Model"));
    m_tabs->addTab(m_statsTable, tr("Head statistics"));
    m_tabs->addTab(m_rolloutView, tr("Rollout"));
    m_filePooled->setObjectName(QStringLiteral("attentionPooledView"));
    m_tabs->addTab(m_filePooled, tr("Head, pooled"));
    m_tabs->setTabVisible(m_tabs->indexOf(m_filePooled), false);

    connect(m_grid, &HeadsGridView::headActivated, this, [this](int head) {
        setCurrentHead(head);
        m_modelView->setCurrent(m_shown.layer, head);
        emit headActivated(head);
    });
    auto select = [this](int head, int query, int key) {
        if (head >= 0)
            m_teaching->setHead(head);
        m_teaching->setSelection(query, key);
        m_headView->setSelectedCell(QPoint(key, query));
    };
    connect(m_headView, &HeatmapView::cellSelected, this, select);
    connect(m_meanView, &HeatmapView::cellSelected, this, select);
    // A cell clicked in the step view's tables is explained there, and selected in the heatmaps.
    connect(m_teaching, &TeachingView::cellClicked, this, [this](int query, int key) {
        m_headView->setSelectedCell(QPoint(key, query));
        m_meanView->setSelectedCell(QPoint(key, query));
    });
    connect(m_modelView, &ModelView::headActivated, this, &AttentionViews::setHeadActivated);
    // The model view's context menu: the head actions (addHeadAction) on the head under the mouse,
    // made current first, and Find Heads Like This, which shows the statistics sorted by it.
    m_findLike = new QAction(tr("Find Heads Like This"), this);
    m_findLike->setObjectName(QStringLiteral("modelFindHeadsLikeThis"));
    connect(m_findLike, &QAction::triggered, this, [this] {
        m_tabs->setCurrentWidget(m_statsTable); // asks for the statistics where they are not there yet
        m_statsTable->findHeadsLike(m_modelView->currentLayer(), m_modelView->currentHead());
    });
    m_modelView->viewport()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_modelView->viewport(), &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        const auto [layer, head] = m_modelView->tileAt(pos);
        if (layer < 0)
            return;
        m_modelView->setCurrent(layer, head);
        QMenu menu;
        for (QAction *action : m_headActions)
            menu.addAction(action);
        menu.addAction(m_findLike);
        menu.exec(m_modelView->viewport()->mapToGlobal(pos));
    });
    connect(m_statsTable, &StatsTable::headActivated, this, &AttentionViews::setHeadActivated);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (m_setViewsDirty && setViewInFront())
            refreshSetViews(m_setSource, true);
    });

    connect(m_jobs, &AttentionController::thumbnailProgress, m_modelView, &ModelView::setProgress);
    connect(m_jobs, &AttentionController::thumbnailsReady, this, [this](AttentionController::ThumbnailsPtr thumbs) {
        m_modelView->setThumbnails(std::move(thumbs));
        emit setViewsUpdated();
    });
    connect(m_jobs, &AttentionController::statisticsReady, this, [this](AttentionController::StatisticsPtr stats) {
        m_statsTable->setStatistics(std::move(stats));
        emit setViewsUpdated();
    });
    connect(m_jobs, &AttentionController::rolloutReady, this,
            [this](AttentionController::RolloutPtr rollout, const QStringList &q, const QStringList &k,
                   const QString &error) {
                m_rolloutView->setRollout(std::move(rollout), q, k, m_setSource.set.layers(), error);
                emit setViewsUpdated();
            });
}

void AttentionViews::setAttention(const ShownAttention &shown)
{
    m_shown = shown;
    m_grid->setAttention(shown);
    m_headView->setAttention(shown);
    m_meanView->setAttention(shown);
    m_lines->setAttention(shown);
    m_teaching->setAttention(shown);
    QString notes;
    if (const LayerTensors *tensors = shown.shownTensors()) {
        const auto &extra = tensors->project.extra;
        if (extra.is_object() && extra.contains("notes") && extra["notes"].is_string())
            notes = titleInLanguage(QString::fromStdString(extra["notes"].get<std::string>()));
    }
    m_notes->setText(notes);
    m_notes->setToolTip(notes);
    m_notes->setVisible(!notes.isEmpty());
    const int heads = shown.heads();
    if (heads > 0 && m_grid->currentHead() >= heads)
        setCurrentHead(heads - 1);
}

void AttentionViews::setCurrentHead(int head)
{
    m_grid->setCurrentHead(head);
    m_headView->setHead(head);
    m_lines->setHead(head);
    m_teaching->setHead(head);
    emit currentHeadChanged(head);
}

int AttentionViews::currentHead() const
{
    return m_grid->currentHead();
}

void AttentionViews::setCurrentLayer(int layer)
{
    m_modelView->setCurrent(layer, m_grid->currentHead());
}

void AttentionViews::setSettings(const HeatmapViewSettings &s)
{
    m_settings = s;
    m_grid->setSettings(s);
    m_headView->setSettings(s);
    HeatmapViewSettings mean = s;
    mean.quantity = HeatmapQuantity::Weights; // the mean of signed scores says little
    m_meanView->setSettings(mean);
    m_rolloutView->setColorMap(s.colorMap);
    m_rolloutView->setColorScale(s.colorScale);
    m_filePooled->setColorMap(s.colorMap);
    m_filePooled->setColorScale(s.colorScale);
    m_filePooled->setScope(s.scope);
    requestThumbnails();
}

void AttentionViews::setOverlay(bool overlay)
{
    m_lines->setOverlay(overlay);
}

bool AttentionViews::setViewInFront() const
{
    QWidget *front = m_tabs->currentWidget();
    return front == m_modelView || front == m_statsTable || front == m_rolloutView;
}

void AttentionViews::refreshSetViews(const ShownAttention &source, bool always)
{
    m_setSource = source;
    m_modelView->setLayerFacts(source.set.layerFacts);
    // A difference (a comparison's B − A) is no attention: lines as thick as a weight, entropy,
    // sink mass and rollout of it mean nothing, so those tabs go while one is shown (the
    // comparison brings its own table).
    const bool weights = !source.set.isSigned();
    m_tabs->setTabVisible(m_tabs->indexOf(m_lines), weights); // lines as thick as a weight
    m_tabs->setTabVisible(m_tabs->indexOf(m_statsTable), weights);
    m_tabs->setTabVisible(m_tabs->indexOf(m_rolloutView), weights);
    if (!weights) {
        m_statsTable->setStatistics(nullptr);
        m_rolloutView->clear();
    }
    if (!always && !setViewInFront()) {
        m_setViewsDirty = true;
        return;
    }
    m_setViewsDirty = false;
    if (source.set.isEmpty())
        return;
    m_thumbnailLook = {-1, -1, -1, -1};
    requestThumbnails();
    if (!weights)
        return;
    m_jobs->requestStatistics(source.set);
    m_jobs->requestRollout(source);
}

void AttentionViews::clearSetViews()
{
    m_modelView->clear();
    m_statsTable->setStatistics(nullptr);
    m_rolloutView->clear();
    m_setViewsDirty = true;
    m_thumbnailLook = {-1, -1, -1, -1};
}

void AttentionViews::requestThumbnails()
{
    if (m_setViewsDirty || m_setSource.set.isEmpty())
        return;
    const std::tuple look{int(m_settings.colorMap), int(m_settings.scope), int(m_settings.colorScale),
                          int(m_settings.sinkApart)};
    if (m_thumbnailLook == look)
        return; // toggling values or the overlay changes nothing here
    m_thumbnailLook = look;
    m_jobs->requestThumbnails(m_setSource, m_settings.colorMap, m_settings.scope, m_settings.colorScale,
                              m_settings.sinkApart);
}

void AttentionViews::addHeadAction(QAction *action)
{
    m_headActions.push_back(action);
    m_grid->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_grid->addAction(action);
}

void AttentionViews::setLong(bool on)
{
    // The tabs that copy a layer's maps in full: the heads grid, the head view, the mean.
    for (int i = 0; i < 3; ++i)
        m_tabs->setTabVisible(i, !on);
    m_tabs->setTabVisible(m_tabs->indexOf(m_filePooled), on);
    if (on)
        m_filePooled->setColorMap(m_settings.colorMap);
    else
        m_filePooled->setSource(nullptr);
}

void AttentionViews::setStepsShown(bool shown)
{
    m_tabs->setTabVisible(m_tabs->indexOf(m_teaching), shown);
}

void AttentionViews::showHead(int head)
{
    if (m_tabs->isTabVisible(m_tabs->indexOf(m_filePooled))) {
        m_filePooled->setHead(head);
        m_tabs->setCurrentWidget(m_filePooled);
        return;
    }
    m_tabs->setCurrentIndex(0); // the heads grid with the enlarged head
}

} // namespace attnscope
