#include "app/gui/document/ComputeController.h"

#include "app/gui/document/MemoryBudget.h"
#include "app/render/ErrorText.h"
#include "core/ErrorCode.h"
#include "core/io/MemoryLimits.h"

#include <QCoreApplication>
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
}

ComputeController::~ComputeController()
{
    m_pending.reset();
    // Nobody will see what runs now: stop it rather than wait for it to finish.
    if (m_flight)
        m_flight->cancel.store(true, std::memory_order_relaxed);
    // m_pool waits for it a bounded time, then leaves it (WorkerPool).
}

void ComputeController::setBackendRequest(BackendRequest request, const QString &vulkanDevice)
{
    m_request = request;
    m_vulkanDevice = vulkanDevice;
    m_pendingBackend = std::make_pair(request, vulkanDevice);
    cancelIfLong();
    if (!m_scheduled) {
        m_scheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_scheduled = false;
            startNext();
        });
    }
}

void ComputeController::setBackend(std::shared_ptr<AttentionBackend> backend)
{
    m_pendingBackend.reset();
    m_backend = std::move(backend);
}

quint64 ComputeController::request(const Project &project)
{
    m_pending = project;
    m_pendingGeneration = ++m_generation;
    cancelIfLong();
    // A zero-delay timer gathers every edit of this event-loop turn into one computation.
    if (!m_scheduled) {
        m_scheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_scheduled = false;
            startNext();
        });
    }
    return m_generation;
}

void ComputeController::cancelIfLong()
{
    if (!m_running || !m_flight)
        return;
    const double remainingMs = m_runningWork * m_msPerWork - double(m_runningTimer.elapsed());
    if (remainingMs > kCancelAfterMs)
        m_flight->cancel.store(true, std::memory_order_relaxed);
}

double ComputeController::progress() const
{
    return m_running && m_flight ? m_flight->progress.load(std::memory_order_relaxed) : 0.0;
}

qint64 ComputeController::runningMilliseconds() const
{
    return m_running ? m_runningTimer.elapsed() : 0;
}

void ComputeController::startNext()
{
    if (m_running || (!m_pending && !m_pendingBackend))
        return;
    m_running = true;
    m_runningTimer.start();
    m_runningWork = m_pending ? workOf(m_pending->problem) : 0.0;
    auto flight = std::make_shared<Flight>();
    m_flight = flight;
    emit busyChanged(true);

    std::optional<std::pair<BackendRequest, QString>> backendRequest = std::exchange(m_pendingBackend, std::nullopt);
    std::optional<Project> project = std::exchange(m_pending, std::nullopt);
    const quint64 generation = m_pendingGeneration;
    std::shared_ptr<AttentionBackend> backend = m_backend;
    QPointer<ComputeController> self(this);

    m_pool.start([self, poster = m_pool.poster(), backendRequest, project = std::move(project), generation, backend,
                  flight]() mutable {
        QString backendError, backendNotice;
        ErrorKind backendErrorKind = ErrorKind::Internal;
        bool backendReplaced = false;
        if (backendRequest || !backend) {
            BackendOptions options;
            if (backendRequest)
                options.vulkanDevice = backendRequest->second.toStdString();
            auto selection = createBackend(backendRequest ? backendRequest->first : BackendRequest::Auto, options);
            if (selection) {
                backend = std::move(selection->backend);
                backendNotice = errorText(selection->noticeError);
                backendReplaced = true;
            } else {
                backendError = errorText(selection.error());
                backendErrorKind = selection.kind();
            }
        }
        std::shared_ptr<ComputedTrace> result;
        QString error;
        ErrorKind errorKind = ErrorKind::Internal;
        if (project && backend) {
            backend->setComputeControl({&flight->cancel, &flight->progress});
            auto computed = computeOnWorker(*backend, std::move(*project), generation, *flight);
            backend->setComputeControl({});
            if (computed) {
                result = std::move(*computed);
            } else {
                error = errorText(computed.error());
                errorKind = computed.kind();
            }
        } else if (project) {
            error = backendError;
            errorKind = backendErrorKind;
        }
        poster.post(
            [self, backend, backendReplaced, backendError, backendNotice, generation, result, error, errorKind] {
                if (!self)
                    return;
                if (backendReplaced) {
                    self->m_backend = backend;
                    emit self->backendChanged(QString::fromStdString(backend->name()),
                                              QString::fromStdString(backend->deviceName()), backendNotice);
                } else if (!backendError.isEmpty()) {
                    emit self->backendChanged(QString(), QString(), backendError);
                }
                self->finished(generation, result, error, errorKind);
            });
    });
}

Result<std::shared_ptr<ComputedTrace>> ComputeController::computeOnWorker(AttentionBackend &backend, Project project,
                                                                          quint64 generation, const Flight &flight)
{
    // Refused before allocating: the trace alone would not fit the machine's memory.
    const std::int64_t need = traceBytes(project.problem), budget = memoryBudgetBytes();
    if (need > budget)
        return codedError("memory.trace", {formatBytes(need), formatBytes(budget)}, ErrorKind::TooLarge);
    try {
        QElapsedTimer timer;
        timer.start();
        auto trace = backend.compute(project.problem);
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        // Superseded: nobody sees this result, and the ranges (a pass over every cell) are not
        // begun. A fallback notice it left stays with the backend for the next computation.
        const Error cancelled{"the computation was cancelled", ErrorKind::Cancelled};
        if ((!trace && trace.kind() == ErrorKind::Cancelled) || flight.cancel.load(std::memory_order_relaxed))
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

void ComputeController::finished(quint64 generation, std::shared_ptr<ComputedTrace> result, QString error,
                                 ErrorKind kind)
{
    m_running = false;
    m_flight.reset();
    if (result && m_runningWork >= kLearnFromWork)
        m_msPerWork = double(m_runningTimer.elapsed()) / m_runningWork;
    // A result newer than the one on screen is shown even when a newer request waits: a
    // drag that outpaces the computation still shows its newest finished state. Never an
    // older one after a newer.
    if (result && generation > m_shownGeneration) {
        m_shownGeneration = generation;
        emit computed(std::move(result));
    } else if (!result && kind == ErrorKind::Cancelled) {
        emit cancelled(generation);
    } else if (!result && !error.isEmpty() && generation == m_generation) {
        // A failure of a superseded request says nothing about the document as it is now.
        emit failed(error, generation, kind);
    }
    if (m_pending || m_pendingBackend) {
        startNext();
    } else {
        emit busyChanged(false);
    }
}

bool ComputeController::waitForIdle(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while ((m_running || m_pending || m_scheduled) && timer.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    return !(m_running || m_pending || m_scheduled);
}

} // namespace attnscope
