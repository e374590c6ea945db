#include "app/gui/document/LongAttention.h"

#include "core/analysis/Pooling.h"
#include "core/io/MemoryLimits.h"

#include <QElapsedTimer>

namespace attnscope {

bool isLongAttention(const AttentionSet &set, const MemoryBudget &budget)
{
    if (set.isEmpty())
        return false;
    const std::int64_t cells = saturatingMul(saturatingMul(set.queries(), set.keys()), set.heads());
    // A layer shown in full is its float maps and at least as much again in the views. Maps
    // computed from queries and keys have no file to stay in: a quarter as many cells already
    // show pooled, so the window holds a fraction of what a dump's layer would unfold to.
    const std::int64_t limit = set.isFromQk() ? budget.pooledCells / 4 : budget.pooledCells;
    return cells > limit || saturatingMul(cells, 8) > budget.bytes();
}

AttentionFileTiles::AttentionFileTiles(AttentionSet set, int layer, std::shared_ptr<BackendHost> host)
    : m_set(std::move(set)), m_layer(layer), m_host(std::move(host))
{
    m_shape.queries = m_set.queries();
    m_shape.keys = m_set.keys();
    m_shape.heads = m_set.heads();
    m_shape.queryLabels = m_set.queryTokens;
    m_shape.keyLabels = m_set.keyTokens;
}

Result<std::shared_ptr<PooledTile>>
AttentionFileTiles::computeTile(const PooledBlock &block, const std::atomic<bool> *cancel, PoolProgress *progress) const
{
    QElapsedTimer timer;
    timer.start();
    SetPoolOptions options;
    options.bins = block.bins;
    options.headMean = true;
    options.cancel = cancel;
    options.progress = progress;
    BackendHost::Lease lease;
    if (m_host && m_set.isFromQk()) {
        lease = m_host->lease();
        if (!lease.backend)
            return lease.error;
        options.backend = lease.backend;
    }
    auto pooled = poolSetBlock(m_set, 0, m_layer, SetBlock{block.q0, block.q1, block.k0, block.k1}, options);
    if (!pooled) {
        if (pooled.error().kind == ErrorKind::OutOfMemory)
            return outOfMemory();
        return pooled.error();
    }
    auto tile = std::make_shared<PooledTile>();
    tile->block = block;
    tile->heads = std::move(pooled->heads);
    tile->mean = std::move(pooled->headMean);
    tile->milliseconds = double(timer.nsecsElapsed()) / 1e6;
    return tile;
}

} // namespace attnscope
