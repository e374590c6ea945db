#pragma once

#include "app/gui/views/HeatmapView.h"
#include "app/render/ShownAttention.h"

#include <QWidget>

#include <tuple>
#include <utility>
#include <vector>

class QAction;
class QLabel;
class QTabWidget;

namespace attnscope {

class AttentionController;
class HeadLinesView;
class ModelView;
class PooledHeatmapView;
class RolloutView;
class StatsTable;
class TeachingView;

// Every view of what is shown (ShownAttention), in tabs: the heads grid beside the enlarged
// head, the head view, the mean over heads, the step-by-step view (a project's tensors only),
// the model view, the head statistics, the rollout, and a long file's heads pooled. Whatever
// the source (a project, an attention file, a model run), the window hands it what to show
// and the views draw it; the set-wide views (model, statistics, rollout) are filled by the
// AttentionController's jobs, only when one of them is in front for a project (an edit's
// compute must not pay for them).
class AttentionViews : public QWidget
{
    Q_OBJECT

public:
    AttentionViews(AttentionController *jobs, QWidget *parent = nullptr);

    // The layer the heads views draw (its weights read, or a project's tensors).
    void setAttention(const ShownAttention &shown);
    const ShownAttention &attention() const { return m_shown; }
    void setCurrentHead(int head);
    int currentHead() const;
    void setCurrentLayer(int layer); // the model view's highlighted layer
    void setSettings(const HeatmapViewSettings &settings);
    void setOverlay(bool overlay);
    // Asks for the model view, the statistics and the rollout of `source` (every layer): now when
    // `always` (a file, a model run) or one of them is in front, else when one comes to the front.
    void refreshSetViews(const ShownAttention &source, bool always);
    // Drops the set-wide views' contents (another document).
    void clearSetViews();
    // A long file: its heads are shown pooled instead of the tabs that copy a layer's maps.
    void setLong(bool on);
    // Whether the step-by-step tab is offered (a source with intermediate tensors).
    void setStepsShown(bool shown);
    // The heads grid with the enlarged head in front, or a long file's pooled head.
    void showHead(int head);
    bool setViewInFront() const; // the model view, the statistics or the rollout
    // An action on one head (Open This Head in the Editor): in the heads grid's context menu (the
    // current head) and the model view's (the head under the mouse, made current first), where
    // Find Heads Like This follows them.
    void addHeadAction(QAction *action);
    // The model view's Find Heads Like This: the statistics in front, sorted by likeness to the
    // model view's current head.
    QAction *findHeadsLikeAction() const { return m_findLike; }

    QTabWidget *tabs() const { return m_tabs; }
    // The shown project's "notes" (an example's explanation), in the interface's language; hidden
    // when it has none.
    QLabel *notes() const { return m_notes; }
    HeadsGridView *grid() const { return m_grid; }
    HeatmapView *headView() const { return m_headView; }
    HeatmapView *meanView() const { return m_meanView; }
    HeadLinesView *lines() const { return m_lines; }
    TeachingView *teaching() const { return m_teaching; }
    ModelView *modelView() const { return m_modelView; }
    StatsTable *statsTable() const { return m_statsTable; }
    RolloutView *rolloutView() const { return m_rolloutView; }
    PooledHeatmapView *filePooled() const { return m_filePooled; }

signals:
    void headActivated(int head);               // in the heads grid (made current here)
    void currentHeadChanged(int head);          // setCurrentHead(), whoever asked
    void setHeadActivated(int layer, int head); // in the model view or the statistics
    // The model view, the statistics or the rollout received new contents.
    void setViewsUpdated();

private:
    void requestThumbnails();

    AttentionController *m_jobs;
    std::vector<QAction *> m_headActions;
    QAction *m_findLike = nullptr;
    ShownAttention m_shown;
    ShownAttention m_setSource; // what the set-wide views describe, or are to describe
    HeatmapViewSettings m_settings;
    bool m_setViewsDirty = true;
    std::tuple<int, int, int, int> m_thumbnailLook{-1, -1, -1, -1}; // colour map, scope, scale, sink apart
    QTabWidget *m_tabs;
    QLabel *m_notes;
    HeadsGridView *m_grid;
    HeatmapView *m_headView;
    HeatmapView *m_meanView;
    HeadLinesView *m_lines;
    TeachingView *m_teaching;
    ModelView *m_modelView;
    StatsTable *m_statsTable;
    RolloutView *m_rolloutView;
    PooledHeatmapView *m_filePooled;
};

} // namespace attnscope
