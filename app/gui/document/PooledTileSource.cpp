#include "app/gui/document/PooledTileSource.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <exception>
#include <new>

namespace attnscope {

ProjectTiles::ProjectTiles(std::shared_ptr<const Project> project, std::shared_ptr<BackendHost> host)
    : m_project(std::move(project)), m_host(std::move(host))
{
    m_shape.queries = m_project->problem.tq();
    m_shape.keys = m_project->problem.tk();
    m_shape.heads = m_project->problem.spec.heads;
    m_shape.queryLabels = m_project->queryTokens;
    m_shape.keyLabels = m_project->keyLabels();
}

Error PooledTileSource::outOfMemory()
{
    return Error{
        QCoreApplication::translate("attnscope::PooledJobs", "out of memory while computing the pooled attention")
            .toStdString(),
        ErrorKind::OutOfMemory};
}

Result<std::shared_ptr<PooledTile>> ProjectTiles::computeTile(const PooledBlock &block, const std::atomic<bool> *cancel,
                                                              PoolProgress *progress) const
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
        BackendHost::Lease lease = m_host->lease();
        if (!lease.backend)
            return lease.error;
        auto pooled = lease.backend->computePooled(m_project->problem, options);
        if (!pooled)
            return pooled.error();
        auto tile = std::make_shared<PooledTile>();
        tile->block = block;
        tile->heads = std::move(pooled->pooled);
        tile->mean = std::move(pooled->headMean);
        tile->milliseconds = double(timer.nsecsElapsed()) / 1e6;
        return tile;
    } catch (const std::bad_alloc &) {
        return outOfMemory();
    } catch (const std::exception &e) {
        return Error{std::string("computation failed: ") + e.what(), ErrorKind::Internal};
    }
}

} // namespace attnscope
