#include "app/gui/document/ComputeController.h"

#include "app/gui/document/MemoryBudget.h"
#include "app/render/ErrorText.h"
#include "core/ErrorCode.h"
#include "core/attention/Validation.h"
#include "core/io/MemoryLimits.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMetaObject>
#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <exception>
#include <new>

namespace attnscope {

namespace {

// What the time of one full computation grows with: its floating-point operations, plus a
// few per score cell for the softmax and the views' ranges.
double workOf(const AttentionProblem &p)
{
    const double cells = double(p.tq()) * double(p.tk()) * double(p.spec.heads);
    return cells * (2.0 * double(p.spec.headDimQK + p.spec.headDimV) + 30.0) +
           2.0 * double(p.tq() + 2 * p.tk()) * double(std::max(p.dq(), p.dkv())) * double(p.qkWidth());
}

// Smaller computations take mostly fixed overheads; their speed says little about larger ones.
constexpr double kLearnFromWork = 5e7;

} // namespace

ComputeController::ComputeController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<ComputedTracePtr>();
    qRegisterMetaType<ErrorKind>();
    m_lane.setBusyCallback([this](bool busy) { emit busyChanged(busy); });
    // A newer request stops the computation in flight only when it would run on for more than
    // kCancelAfterMs (judged from the speed of the ones before): a drag over a small project
    // still shows its states as they come.
    m_lane.setCancelPolicy([this](const JobState &running) {
        const double elapsedMs = double(QDateTime::currentMSecsSinceEpoch() - running.startedMs);
        return running.cost * m_msPerWork - elapsedMs > kCancelAfterMs;
    });
}

ComputeController::~ComputeController()
{
    // Nobody will see what runs now: m_lane stops it rather than wait for it to finish (and then
    // waits for it a bounded time).
    m_pending.reset();
}

void ComputeController::setBackendRequest(BackendRequest request, const QString &vulkanDevice)
{
    m_request = request;
    m_vulkanDevice = vulkanDevice;
    m_host->setRequest(request, vulkanDevice);
    m_backendPending = true;
    schedule();
}

void ComputeController::setBackendOptions(const BackendOptions &options)
{
    m_host->setOptions(options);
}

void ComputeController::setBackend(std::shared_ptr<AttentionBackend> backend)
{
    m_backendPending = false;
    m_host->setBackend(std::move(backend));
}

quint64 ComputeController::request(const Project &project)
{
    m_pending = project;
    m_pendingGeneration = ++m_generation;
    schedule();
    return m_generation;
}

void ComputeController::schedule()
{
    // A zero-delay timer gathers every edit of this event-loop turn into one computation.
    if (m_scheduled)
        return;
    m_scheduled = true;
    QTimer::singleShot(0, this, [this] {
        m_scheduled = false;
        submit();
    });
}

double ComputeController::progress() const
{
    const JobState *running = m_lane.running();
    return running ? running->progress.load(std::memory_order_relaxed) : 0.0;
}

qint64 ComputeController::runningMilliseconds() const
{
    const JobState *running = m_lane.running();
    return running ? QDateTime::currentMSecsSinceEpoch() - running->startedMs : 0;
}

void ComputeController::submit()
{
    if (!m_pending && !m_backendPending)
        return;
    std::optional<Project> project = std::exchange(m_pending, std::nullopt);
    m_backendPending = false;
    const quint64 generation = m_pendingGeneration;
    const double work = project ? workOf(project->problem) : 0.0;
    m_lane.submit(
        [this, host = m_host, project = std::move(project), budget = m_budget,
         generation](JobState &state) mutable -> JobLane::Deliver {
            Outcome o;
            BackendHost::Lease lease = host->lease();
            if (lease.backend) {
                o.backendReplaced = lease.replaced;
                o.backend = lease.backend;
                o.backendName = QString::fromStdString(lease.backend->name());
                o.deviceName = QString::fromStdString(lease.backend->deviceName());
                o.backendNotice = errorText(lease.notice);
            } else if (lease.replaced) {
                o.backendError = errorText(lease.error);
            }
            if (project && lease.backend) {
                lease.backend->setComputeControl({&state.cancel, &state.progress});
                auto computed = computeOnWorker(*lease.backend, std::move(*project), budget, generation, state);
                lease.backend->setComputeControl({});
                if (computed) {
                    o.result = std::move(*computed);
                } else {
                    o.error = errorText(computed.error());
                    o.kind = computed.kind();
                }
            } else if (project) {
                o.error = errorText(lease.error);
                o.kind = lease.error.kind;
            }
            const qint64 elapsedMs = QDateTime::currentMSecsSinceEpoch() - state.startedMs;
            const double cost = state.cost;
            return [this, generation, o = std::move(o), elapsedMs, cost] {
                // Learn the speed of the machine from larger computations (their fixed
                // overheads say little).
                if (o.result && cost >= kLearnFromWork)
                    m_msPerWork = double(elapsedMs) / cost;
                finished(generation, o);
            };
        },
        work);
}

Result<std::shared_ptr<ComputedTrace>> ComputeController::computeOnce(BackendHost &host, Project project,
                                                                      const MemoryBudget &budget, JobState &state)
{
    BackendHost::Lease lease = host.lease();
    if (!lease.backend)
        return lease.error;
    lease.backend->setComputeControl({&state.cancel, &state.progress});
    auto computed = computeOnWorker(*lease.backend, std::move(project), budget, 0, state);
    lease.backend->setComputeControl({});
    return computed;
}

Result<std::shared_ptr<ComputedTrace>> ComputeController::computeOnWorker(AttentionBackend &backend, Project project,
                                                                          const MemoryBudget &budget,
                                                                          quint64 generation, const JobState &state)
{
    // Refused before allocating: the trace alone would not fit the memory budget.
    const std::int64_t need = traceBytes(project.problem), allowed = budget.bytes();
    if (need > allowed)
        return codedError("memory.trace", {formatBytes(need), formatBytes(allowed)}, ErrorKind::TooLarge);
    try {
        QElapsedTimer timer;
        timer.start();
        auto trace = backend.compute(project.problem);
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        // Superseded: nobody sees this result, and the ranges (a pass over every cell) are not
        // begun. A fallback notice it left stays with the backend for the next computation.
        const Error cancelled{"the computation was cancelled", ErrorKind::Cancelled};
        if ((!trace && trace.kind() == ErrorKind::Cancelled) || state.cancel.load(std::memory_order_relaxed))
            return cancelled;
        const Error notice = takeBackendNoticeError(backend);
        if (!trace) {
            Error e = trace.error();
            if (!notice.message.empty())
                e.message += "\n" + notice.message;
            return e;
        }
        auto result = std::make_shared<ComputedTrace>();
        result->project = std::move(project);
        result->trace = std::move(*trace);
        result->generation = generation;
        // What really ran: a problem the GPU could not take was computed on the CPU this once.
        const ComputeRun ran = lastComputeRun(backend);
        result->backendName = QString::fromStdString(ran.backend);
        result->deviceName = QString::fromStdString(ran.device);
        result->milliseconds = ms;
        result->notice = errorText(notice);
        // The views' ranges (shared scale: every head) and the mean over heads, here and not
        // on the GUI thread.
        result->ranges = TraceRanges::of(result->trace);
        return result;
    } catch (const std::bad_alloc &) {
        return Error{tr("out of memory while computing (%1 of intermediate tensors): make the project smaller")
                         .arg(QString::fromStdString(formatBytes(need)))
                         .toStdString(),
                     ErrorKind::OutOfMemory};
    } catch (const std::exception &e) {
        return Error{std::string("computation failed: ") + e.what(), ErrorKind::Internal};
    }
}

void ComputeController::finished(quint64 generation, const Outcome &o)
{
    // A backend another job made (a model run's) is named as soon as a computation uses it.
    if (o.backendReplaced || (o.backend && o.backend != m_announced)) {
        m_announced = o.backend;
        emit backendChanged(o.backendName, o.deviceName, o.backendNotice);
    } else if (!o.backendError.isEmpty())
        emit backendChanged(QString(), QString(), o.backendError);
    // A result newer than the one on screen is shown even when a newer request waits: a
    // drag that outpaces the computation still shows its newest finished state. Never an
    // older one after a newer.
    if (o.result && generation > m_shownGeneration) {
        m_shownGeneration = generation;
        emit computed(o.result);
    } else if (!o.result && o.kind == ErrorKind::Cancelled) {
        emit cancelled(generation);
    } else if (!o.result && !o.error.isEmpty() && generation == m_generation) {
        // A failure of a superseded request says nothing about the document as it is now.
        emit failed(o.error, generation, o.kind);
    }
}

bool ComputeController::waitForIdle(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    auto busy = [this] { return m_lane.isBusy() || m_pending || m_scheduled; };
    while (busy() && timer.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    return !busy();
}

} // namespace attnscope
