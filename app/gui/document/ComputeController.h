#pragma once

#include "app/engine/BackendChoice.h"
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
    QString notice; // a fallback that happened during this computation, said once
};
using ComputedTracePtr = std::shared_ptr<const ComputedTrace>;

// Runs backend->compute() on one worker thread, never on the GUI thread. Requests made in
// the same event-loop turn, or while a computation runs, are coalesced: only the newest
// waiting project is computed next, and a result that a newer request has superseded is
// dropped instead of being shown.
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
    void failed(const QString &message, quint64 generation);
    // backendName is empty when the request failed; notice then holds the error.
    void backendChanged(const QString &backendName, const QString &deviceName, const QString &notice);
    void busyChanged(bool busy);

private:
    void startNext();
    void finished(quint64 generation, std::shared_ptr<ComputedTrace> result, QString error);

    QThreadPool m_pool;
    std::shared_ptr<AttentionBackend> m_backend; // used only on the worker
    BackendRequest m_request = BackendRequest::Auto;
    QString m_vulkanDevice;
    std::optional<std::pair<BackendRequest, QString>> m_pendingBackend;
    std::optional<Project> m_pending;
    quint64 m_pendingGeneration = 0;
    quint64 m_generation = 0;
    bool m_running = false;
    bool m_scheduled = false;
};

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::ComputedTracePtr)
