#include "app/gui/document/ComputeController.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMetaObject>
#include <QPointer>
#include <QTimer>

namespace attnscope {

ComputeController::ComputeController(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<ComputedTracePtr>();
    // One worker: backends need not be thread-safe, and a Vulkan device stays on one thread.
    m_pool.setMaxThreadCount(1);
    m_pool.setExpiryTimeout(-1);
}

ComputeController::~ComputeController()
{
    m_pending.reset();
    m_pool.waitForDone();
}

void ComputeController::setBackendRequest(BackendRequest request, const QString &vulkanDevice)
{
    m_request = request;
    m_vulkanDevice = vulkanDevice;
    m_pendingBackend = std::make_pair(request, vulkanDevice);
    if (!m_scheduled) {
        m_scheduled = true;
        QTimer::singleShot(0, this, [this] {
            m_scheduled = false;
            startNext();
        });
    }
}

quint64 ComputeController::request(const Project &project)
{
    m_pending = project;
    m_pendingGeneration = ++m_generation;
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

void ComputeController::startNext()
{
    if (m_running || (!m_pending && !m_pendingBackend))
        return;
    m_running = true;
    emit busyChanged(true);

    std::optional<std::pair<BackendRequest, QString>> backendRequest = std::exchange(m_pendingBackend, std::nullopt);
    std::optional<Project> project = std::exchange(m_pending, std::nullopt);
    const quint64 generation = m_pendingGeneration;
    std::shared_ptr<AttentionBackend> backend = m_backend;
    QPointer<ComputeController> self(this);

    m_pool.start([self, backendRequest, project = std::move(project), generation, backend]() mutable {
        QString backendError, backendNotice;
        bool backendReplaced = false;
        if (backendRequest || !backend) {
            BackendOptions options;
            if (backendRequest)
                options.vulkanDevice = backendRequest->second.toStdString();
            auto selection = createBackend(backendRequest ? backendRequest->first : BackendRequest::Auto, options);
            if (selection) {
                backend = std::move(selection->backend);
                backendNotice = QString::fromStdString(selection->notice);
                backendReplaced = true;
            } else {
                backendError = QString::fromStdString(selection.message());
            }
        }
        std::shared_ptr<ComputedTrace> result;
        QString error;
        if (project && backend) {
            QElapsedTimer timer;
            timer.start();
            auto trace = backend->compute(project->problem);
            const double ms = double(timer.nsecsElapsed()) / 1e6;
            if (trace) {
                result = std::make_shared<ComputedTrace>();
                result->project = std::move(*project);
                result->trace = std::move(*trace);
                result->generation = generation;
                result->backendName = QString::fromStdString(backend->name());
                result->deviceName = QString::fromStdString(backend->deviceName());
                result->milliseconds = ms;
                result->notice = QString::fromStdString(takeBackendNotice(*backend));
            } else {
                error = QString::fromStdString(trace.message());
                const std::string notice = takeBackendNotice(*backend);
                if (!notice.empty())
                    error += QLatin1Char('\n') + QString::fromStdString(notice);
            }
        } else if (project) {
            error = backendError;
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, backend, backendReplaced, backendError, backendNotice, generation, result, error] {
                if (!self)
                    return;
                if (backendReplaced) {
                    self->m_backend = backend;
                    emit self->backendChanged(QString::fromStdString(backend->name()),
                                              QString::fromStdString(backend->deviceName()), backendNotice);
                } else if (!backendError.isEmpty()) {
                    emit self->backendChanged(QString(), QString(), backendError);
                }
                self->finished(generation, result, error);
            },
            Qt::QueuedConnection);
    });
}

void ComputeController::finished(quint64 generation, std::shared_ptr<ComputedTrace> result, QString error)
{
    m_running = false;
    // Superseded: a newer request is waiting, so this result would show an older document.
    const bool superseded = generation != m_generation;
    if (!superseded) {
        if (result)
            emit computed(std::move(result));
        else if (!error.isEmpty())
            emit failed(error, generation);
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
