#include "app/gui/document/PooledJobs.h"

#include "app/gui/document/ComputeController.h"
#include "app/gui/document/PooledTileSource.h"
#include "app/render/ErrorText.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMetaObject>
#include <QPointer>

#include <exception>
#include <new>

namespace attnscope {

namespace {

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

Result<std::shared_ptr<PooledTile>> computeTile(const Project &project, const PooledBlock &block,
                                                const std::atomic<bool> *cancel, PoolProgress *progress)
{
    PoolOptions options;
    options.bins = block.bins;
    options.mode = PoolMode::Max; // a single strong weight stays visible however far out
    options.queryBegin = block.q0;
    options.queryEnd = block.q1;
    options.keyBegin = block.k0;
    options.keyEnd = block.k1;
    options.cancel = cancel;
    options.progress = progress;
    // The head mean pooled from the heads' weights themselves: the max over a block of their
    // mean, which the mean of the heads' pooled cells is not.
    options.headMean = true;
    try {
        QElapsedTimer timer;
        timer.start();
        auto pooled = computePooledCpu(project.problem, options);
        if (!pooled)
            return pooled.error();
        auto tile = std::make_shared<PooledTile>();
        tile->block = block;
        tile->heads = std::move(pooled->pooled);
        tile->mean = std::move(pooled->headMean);
        tile->milliseconds = double(timer.nsecsElapsed()) / 1e6;
        return tile;
    } catch (const std::bad_alloc &) {
        return Error{
            QCoreApplication::translate("attnscope::PooledJobs", "out of memory while computing the pooled attention")
                .toStdString(),
            ErrorKind::OutOfMemory};
    } catch (const std::exception &e) {
        return Error{std::string("computation failed: ") + e.what(), ErrorKind::Internal};
    }
}

} // namespace

PooledJobs::PooledJobs(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<PooledTilePtr>();
    qRegisterMetaType<ErrorKind>();
}

PooledJobs::~PooledJobs()
{
    m_pending.reset();
    if (m_running)
        *m_running->cancel = true;
    // m_pool waits for it a bounded time, then leaves it (WorkerPool).
}

void PooledJobs::setProject(std::shared_ptr<const Project> project)
{
    m_project = std::move(project);
    ++m_projectGeneration;
    m_pending.reset();
    if (m_running)
        *m_running->cancel = true;
}

quint64 PooledJobs::request(const PooledBlock &block)
{
    const quint64 id = ++m_nextId;
    m_pending = std::make_pair(id, block);
    // The one running answers a view the user has left: stop it now.
    if (m_running)
        *m_running->cancel = true;
    else
        startNext();
    return id;
}

double PooledJobs::progress() const
{
    if (!m_running)
        return 0.0;
    const std::int64_t total = m_running->progress->total.load();
    return total > 0 ? double(m_running->progress->done.load()) / double(total) : 0.0;
}

qint64 PooledJobs::runningMilliseconds() const
{
    return m_running ? nowMs() - m_running->startedMs : 0;
}

void PooledJobs::startNext()
{
    if (m_running || !m_pending || !m_project)
        return;
    Job job;
    job.id = m_pending->first;
    job.block = m_pending->second;
    job.cancel = std::make_shared<std::atomic<bool>>(false);
    job.progress = std::make_shared<PoolProgress>();
    job.startedMs = nowMs();
    m_pending.reset();
    m_running = job;
    emit busyChanged(true);

    QPointer<PooledJobs> self(this);
    m_pool.start([self, poster = m_pool.poster(), job, project = m_project, source = m_source,
                  generation = m_projectGeneration] {
        auto result = source ? source->computeTile(job.block, job.cancel.get(), job.progress.get())
                             : computeTile(*project, job.block, job.cancel.get(), job.progress.get());
        std::shared_ptr<PooledTile> tile;
        QString error;
        ErrorKind kind = ErrorKind::Internal;
        if (result) {
            tile = std::move(*result);
            tile->project = generation;
        } else {
            error = errorText(result.error());
            kind = result.kind();
        }
        poster.post([self, id = job.id, tile, error, kind, generation] {
            if (!self)
                return;
            self->m_running.reset();
            if (tile && generation == self->m_projectGeneration)
                emit self->tileReady(tile, id);
            else if (kind == ErrorKind::Cancelled)
                emit self->cancelled(id);
            else if (!tile && generation == self->m_projectGeneration)
                emit self->failed(error, kind, id);
            if (self->m_pending && self->m_project)
                self->startNext();
            else
                emit self->busyChanged(false);
        });
    });
}

bool PooledJobs::waitForIdle(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while ((m_running || (m_pending && m_project)) && timer.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    return !(m_running || (m_pending && m_project));
}

} // namespace attnscope
