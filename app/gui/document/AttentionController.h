#pragma once

#include "app/gui/document/AttentionJobs.h"
#include "app/gui/document/BackendHost.h"
#include "app/gui/document/ComputeController.h" // ErrorKind as a signal argument
#include "app/gui/document/JobRunner.h"

#include <QObject>

#include <functional>
#include <memory>

namespace attnscope {

// Runs the attention views' work on job lanes (JobRunner.h), never on the GUI thread: reading an
// attention file, reading one layer's maps (readLayer), the thumbnails of every map, the statistics of
// every head and the rollout. Each kind of job has its lane, so a newer request of that kind
// supersedes the older one (cancelled where it can be, its result never delivered) while jobs of
// different kinds run side by side. Results
// arrive as signals on the GUI thread. Allocation failures on a worker become errors.
class AttentionController : public QObject
{
    Q_OBJECT

public:
    explicit AttentionController(QObject *parent = nullptr);
    ~AttentionController() override; // cancels what runs; waits for it a bounded time (JobLane)

    void open(const QString &path);
    // The scores of an opened file as attention (softmaxRows), said as opened() with the same path
    // and file, or openFailed() (memory).
    void applySoftmax(LoadedAttentionPtr scores);
    // Reads `layer` of the set for the views (layerReady). Where the source can compute the layer's
    // tensors again (source.provider) and they fit the memory budget, they are computed on the
    // backend host and come with it (a model run's scores, Q, K, V for the step view); otherwise,
    // and whenever words are merged, the weights alone are read.
    void requestLayer(const ShownAttention &source, int layer);
    // Where a provider's layers are computed: the backend the user chose (none: the layer's weights
    // are read and no tensors computed).
    void setBackendHost(std::shared_ptr<BackendHost> host) { m_host = std::move(host); }
    // `sinkApart`: the first key apart from each thumbnail (AttentionJobs::Thumbnails).
    void requestThumbnails(const ShownAttention &source, ColorMapKind colorMap, ScaleScope scope,
                           ColorScaleKind colorScale, bool sinkApart = false);
    void requestStatistics(const AttentionSet &set);
    void requestRollout(const ShownAttention &source);
    // What the rollout's cost is checked against (AttentionJobs::rollout), from the next request on.
    const MemoryBudget &memoryBudget() const { return m_budget; }
    void setMemoryBudget(const MemoryBudget &budget) { m_budget = budget; }
    // Drops every waiting result (a project replaced the attention document).
    void cancelAll();

    bool isBusy() const;
    // Blocks until no job runs (tests and shutdown); results still arrive as events.
    bool waitForIdle(int timeoutMs = 60000);

    using ThumbnailsPtr = std::shared_ptr<const AttentionJobs::Thumbnails>;
    using StatisticsPtr = std::shared_ptr<const std::vector<HeadStats>>;
    // Attention rollout as the views draw it: float, with its largest value, both made on
    // the worker (an 8192-token rollout is 64M cells: converting it stalled the window).
    struct RolloutMatrix {
        MatrixF values;
        double max = 0.0;
    };
    using RolloutPtr = std::shared_ptr<const RolloutMatrix>;

signals:
    void opened(attnscope::LoadedAttentionPtr attention);
    void openFailed(const QString &path, const QString &message, attnscope::ErrorKind kind);
    // shown with its layer read (shown.weights() is set).
    void layerReady(attnscope::ShownAttention shown);
    void thumbnailsReady(attnscope::AttentionController::ThumbnailsPtr thumbnails);
    // How far the newest thumbnails are (0..100), while they are computed.
    void thumbnailProgress(int percent);
    void statisticsReady(attnscope::AttentionController::StatisticsPtr statistics);
    // rollout is null when it could not be computed; error then says why.
    // A job other than the open and the rollout failed (memory ran out building the views).
    void jobFailed(const QString &message);
    void rolloutReady(attnscope::AttentionController::RolloutPtr rollout, const QStringList &queryLabels,
                      const QStringList &keyLabels, const QString &error);
    // A job read a mapped attention file that changed on disk meanwhile (the script that made
    // it ran again): what it computed is not the file's, so this comes instead of its result.
    void sourceChanged(const QString &message);

private:
    enum Kind { Open, Layer, Thumbs, Stats, Rollout, KindCount };
    // Starts `work` as the newest job of its kind; the delivery it returns runs on the GUI
    // thread afterwards unless a newer job of that kind was requested meanwhile.
    void start(Kind kind, std::function<std::function<void()>(const std::atomic<bool> &cancel)> work);
    // What a job that read `set` delivers when the set's file changed under it (sourceChanged),
    // or null when the file is as it was.
    // Static: it runs on a worker, where the controller may be gone.
    static std::function<void()> changedSource(AttentionController *self, const AttentionSet &set);

    // A provider's layer computed again on the host's backend; null when it is not (words merged,
    // too large, cancelled, or the backend failed: the weights are read instead), `why` then saying
    // so where the source has a provider.
    static std::shared_ptr<const LayerTensors> computeTensors(BackendHost *host, const ShownAttention &source,
                                                              int layer, const MemoryBudget &budget,
                                                              const std::atomic<bool> &cancel, QString *why);

    MemoryBudget m_budget;
    std::shared_ptr<BackendHost> m_host;
    JobLane m_lanes[KindCount] = {JobLane(this), JobLane(this), JobLane(this), JobLane(this), JobLane(this)};
    static_assert(KindCount == 5, "one lane per kind of job");
};

} // namespace attnscope
