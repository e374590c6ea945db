#pragma once

#include "app/engine/BackendChoice.h"
#include "app/render/TraceRanges.h"
#include "core/AttentionTrace.h"
#include "core/ProjectFile.h"

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <memory>
#include <optional>

namespace attnscope {

// One finished computation: the trace and the project it was computed from (so views never
// pair a trace with labels or a mask of a newer shape), with what ran it.
struct ComputedTrace {
    Project project;
    AttentionTrace trace;
    quint64 generation = 0;
    QString backendName;
    QString deviceName;
    double milliseconds = 0.0;
    QString notice;     // a fallback that happened during this computation, said once
    TraceRanges ranges; // computed on the worker, so the views only read them
};
using ComputedTracePtr = std::shared_ptr<const ComputedTrace>;

// Runs backend->compute() on one worker thread, never on the GUI thread, with the views'
// ranges. Requests made in the same event-loop turn, or while a computation runs, are
// coalesced: only the newest waiting project is computed next. A finished result newer than
// the last one shown is shown even while a newer request waits (never an older one after a
// newer); a failure is reported only for the newest request. Allocation failures on the
// worker are caught and reported, and a trace larger than the memory budget is refused.
class ComputeController : public QObject
{
    Q_OBJECT

public:
    explicit ComputeController(QObject *parent = nullptr);
    ~ComputeController() override; // waits for the running computation

    // Creates the backend on the worker (Vulkan start-up can take a while). A notice
    // ("no Vulkan device: using the CPU") or an error is reported by backendChanged.
    // vulkanDevice: an index or name substring (BackendOptions::vulkanDevice); empty: the best.
    void setBackendRequest(BackendRequest request, const QString &vulkanDevice = {});
    // Tests: compute with this backend (a wrapper around a real one) from the next request on.
    void setBackend(std::shared_ptr<AttentionBackend> backend);
    BackendRequest backendRequest() const { return m_request; }
    QString vulkanDevice() const { return m_vulkanDevice; }

    // Schedules a computation of this project; returns its generation.
    quint64 request(const Project &project);

    bool isBusy() const { return m_running; }
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

private:
    void startNext();
    void finished(quint64 generation, std::shared_ptr<ComputedTrace> result, QString error, ErrorKind kind);
    static Result<std::shared_ptr<ComputedTrace>> computeOnWorker(AttentionBackend &backend, Project project,
                                                                  quint64 generation);

    QThreadPool m_pool;
    std::shared_ptr<AttentionBackend> m_backend; // used only on the worker
    BackendRequest m_request = BackendRequest::Auto;
    QString m_vulkanDevice;
    std::optional<std::pair<BackendRequest, QString>> m_pendingBackend;
    std::optional<Project> m_pending;
    quint64 m_pendingGeneration = 0;
    quint64 m_generation = 0;
    quint64 m_shownGeneration = 0;
    bool m_running = false;
    bool m_scheduled = false;
};

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::ComputedTracePtr)
Q_DECLARE_METATYPE(attnscope::ErrorKind)
