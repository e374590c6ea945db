#pragma once

#include "app/engine/BackendChoice.h"
#include "app/gui/document/BackendHost.h"
#include "app/gui/document/JobRunner.h"
#include "app/gui/document/MemoryBudget.h"
#include "app/render/ShownAttention.h"
#include "core/attention/AttentionTrace.h"
#include "core/formats/ProjectFile.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

namespace attnscope {

// One finished computation: the trace and the project it was computed from (so views never
// pair a trace with labels or a mask of a newer shape) with the views' ranges, computed on the
// worker (LayerTensors), and what ran it. The views show it as ShownAttention::ofTensors().
struct ComputedTrace : LayerTensors {
    quint64 generation = 0;
    QString backendName;
    QString deviceName;
    double milliseconds = 0.0;
    QString notice; // a fallback that happened during this computation, said once
};
using ComputedTracePtr = std::shared_ptr<const ComputedTrace>;

// Runs backend->compute() on a job lane (JobRunner.h), never on the GUI thread, with the views'
// ranges, on the backend the user chose (BackendHost, shared with model runs and pooled tiles).
// Requests made in the same event-loop turn, or while a computation runs, are coalesced: only
// the newest waiting project is computed next. A finished result newer than
// the last one shown is shown even while a newer request waits (never an older one after a
// newer); a failure is reported only for the newest request. Allocation failures on the
// worker are caught and reported, and a trace larger than the memory budget is refused.
//
// A newer request stops the computation in flight when it would otherwise run on for more
// than kCancelAfterMs (judged from the speed of the computations before it): it reports
// cancelled() and never its result. A shorter one finishes and is shown, so a drag over a
// small project still shows its states as they come.
class ComputeController : public QObject
{
    Q_OBJECT

public:
    explicit ComputeController(QObject *parent = nullptr);
    ~ComputeController() override; // cancels the running computation and waits for it

    // Creates the backend on the worker (Vulkan start-up can take a while). A notice
    // ("no Vulkan device: using the CPU") or an error is reported by backendChanged.
    // vulkanDevice: an index or name substring (BackendOptions::vulkanDevice); empty: the best.
    void setBackendRequest(BackendRequest request, const QString &vulkanDevice = {});
    // What every backend made from now on starts from (BackendOptions: runtime fallback, Vulkan
    // validation, limits and injected faults), the device aside, which setBackendRequest names.
    void setBackendOptions(const BackendOptions &options);
    // Tests: compute with this backend (a wrapper around a real one) from the next request on.
    void setBackend(std::shared_ptr<AttentionBackend> backend);
    // The backend every computing job of the window shares (model runs, pooled tiles).
    const std::shared_ptr<BackendHost> &backendHost() const { return m_host; }
    BackendRequest backendRequest() const { return m_request; }
    QString vulkanDevice() const { return m_vulkanDevice; }

    // Schedules a computation of this project; returns its generation.
    quint64 request(const Project &project);
    // On a worker, outside any controller's queue (a comparison's project side): computes
    // `project` as a controller would, on a lease of `host`, refused beyond `budget`.
    static Result<std::shared_ptr<ComputedTrace>> computeOnce(BackendHost &host, Project project,
                                                              const MemoryBudget &budget, JobState &state);
    // What a computation's trace is checked against before anything is allocated: the budget
    // held when it starts (a request waiting to start is checked against a budget set after it).
    const MemoryBudget &memoryBudget() const { return m_budget; }
    void setMemoryBudget(const MemoryBudget &budget) { m_budget = budget; }

    static constexpr double kCancelAfterMs = 100.0;

    bool isBusy() const { return m_lane.isRunning(); }
    // The running computation's fraction done (0..1) and how long it has run; 0 when idle.
    double progress() const;
    qint64 runningMilliseconds() const;
    quint64 latestGeneration() const { return m_generation; }
    // Blocks until nothing runs or waits (tests and shutdown).
    bool waitForIdle(int timeoutMs = 30000);

signals:
    void computed(attnscope::ComputedTracePtr result);
    // The computation of `generation` (the newest request) failed; `kind` says how (device
    // lost, out of memory, too large, ...), `message` says it in full.
    void failed(const QString &message, quint64 generation, attnscope::ErrorKind kind);
    // backendName is empty when the request failed; notice then holds the error.
    void backendChanged(const QString &backendName, const QString &deviceName, const QString &notice);
    void busyChanged(bool busy);
    // The computation of `generation` was stopped because a newer request superseded it.
    void cancelled(quint64 generation);

private:
    // What a finished job hands back to the GUI thread.
    struct Outcome {
        bool backendReplaced = false;
        const void *backend = nullptr; // which backend ran (compared, never dereferenced)
        QString backendName, deviceName, backendNotice, backendError;
        std::shared_ptr<ComputedTrace> result;
        QString error;
        ErrorKind kind = ErrorKind::Internal;
    };

    void schedule();
    void submit();
    void finished(quint64 generation, const Outcome &outcome);
    static Result<std::shared_ptr<ComputedTrace>> computeOnWorker(AttentionBackend &backend, Project project,
                                                                  const MemoryBudget &budget, quint64 generation,
                                                                  const JobState &state);

    std::shared_ptr<BackendHost> m_host = std::make_shared<BackendHost>();
    JobLane m_lane{this, JobLane::Delivery::Every}; // every result newer than the one shown is shown
    BackendRequest m_request = BackendRequest::Auto;
    QString m_vulkanDevice;
    MemoryBudget m_budget;
    bool m_backendPending = false;
    const void *m_announced = nullptr; // the backend backendChanged last named

    std::optional<Project> m_pending;
    quint64 m_pendingGeneration = 0;
    quint64 m_generation = 0;
    quint64 m_shownGeneration = 0;
    bool m_scheduled = false;
    double m_runningWork = 0.0; // workOf() the project in flight
    // Milliseconds per unit of work, learnt from finished computations; the first guess is
    // a slow machine's (1 GFLOP/s).
    double m_msPerWork = 1e-6;
};

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::ComputedTracePtr)
Q_DECLARE_METATYPE(attnscope::ErrorKind)
