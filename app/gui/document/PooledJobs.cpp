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

Result<std::shared_ptr<PooledTile>> computeTile(AttentionBackend &backend, const Project &project,
                                                const PooledBlock &block, const std::atomic<bool> *cancel,
                                                PoolProgress *progress)
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
        auto pooled = backend.computePooled(project.problem, options);
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
    m_lane.setBusyCallback([this](bool busy) { emit busyChanged(busy); });
}

PooledJobs::~PooledJobs() = default; // m_lane cancels what runs and waits for it a bounded time

void PooledJobs::setProject(std::shared_ptr<const Project> project)
{
    m_project = std::move(project);
    ++m_projectGeneration;
    // Nothing of the project before is computed any more.
    m_lane.cancel();
}

quint64 PooledJobs::request(const PooledBlock &block)
{
    if (!m_project)
        return 0;
    auto progress = std::make_shared<PoolProgress>();
    const quint64 id = m_lane.newest() + 1; // the id submit() gives this job
    // The one running answers a view the user has left: the lane stops it now.
    m_lane.submit([this, id, host = m_host, block, progress, project = m_project, source = m_source,
                   generation = m_projectGeneration](JobState &state) -> JobLane::Deliver {
        Result<std::shared_ptr<PooledTile>> result = Error{};
        if (source) {
            result = source->computeTile(block, &state.cancel, progress.get());
        } else {
            BackendHost::Lease lease = host->lease();
            result = lease.backend ? computeTile(*lease.backend, *project, block, &state.cancel, progress.get())
                                   : Result<std::shared_ptr<PooledTile>>(lease.error);
        }
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
        return [this, id, tile, error, kind, generation] {
            m_progress.erase(id);
            if (tile && generation == m_projectGeneration)
                emit tileReady(tile, id);
            else if (kind == ErrorKind::Cancelled)
                emit cancelled(id);
            else if (!tile && generation == m_projectGeneration)
                emit failed(error, kind, id);
        };
    });
    m_progress[id] = std::move(progress);
    return id;
}

double PooledJobs::progress() const
{
    const auto it = m_progress.find(m_lane.runningId());
    if (it == m_progress.end())
        return 0.0;
    const std::int64_t total = it->second->total.load();
    return total > 0 ? double(it->second->done.load()) / double(total) : 0.0;
}

qint64 PooledJobs::runningMilliseconds() const
{
    const JobState *running = m_lane.running();
    return running ? nowMs() - running->startedMs : 0;
}

bool PooledJobs::waitForIdle(int timeoutMs)
{
    return m_lane.waitForIdle(timeoutMs);
}

} // namespace attnscope
