#include "app/gui/document/PooledJobs.h"

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

} // namespace

PooledJobs::PooledJobs(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<PooledTilePtr>();
    qRegisterMetaType<ErrorKind>();
    m_lane.setBusyCallback([this](bool busy) { emit busyChanged(busy); });
}

PooledJobs::~PooledJobs() = default; // m_lane cancels what runs and waits for it a bounded time

void PooledJobs::setSource(std::shared_ptr<const PooledTileSource> source)
{
    m_source = std::move(source);
    ++m_sourceGeneration;
    // Nothing of the set before is computed any more.
    m_lane.cancel();
}

quint64 PooledJobs::request(const PooledBlock &block)
{
    if (!m_source)
        return 0;
    auto progress = std::make_shared<PoolProgress>();
    const quint64 id = m_lane.newest() + 1; // the id submit() gives this job
    // The one running answers a view the user has left: the lane stops it now.
    m_lane.submit([this, id, block, progress, source = m_source,
                   generation = m_sourceGeneration](JobState &state) -> JobLane::Deliver {
        auto result = source->computeTile(block, &state.cancel, progress.get());
        std::shared_ptr<PooledTile> tile;
        QString error;
        ErrorKind kind = ErrorKind::Internal;
        if (result) {
            tile = std::move(*result);
            tile->source = generation;
        } else {
            error = errorText(result.error());
            kind = result.kind();
        }
        return [this, id, tile, error, kind, generation] {
            m_progress.erase(id);
            if (tile && generation == m_sourceGeneration)
                emit tileReady(tile, id);
            else if (kind == ErrorKind::Cancelled)
                emit cancelled(id);
            else if (!tile && generation == m_sourceGeneration)
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
