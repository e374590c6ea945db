#include "app/gui/document/LongAttention.h"

#include "app/gui/document/MemoryBudget.h"
#include "core/io/MemoryLimits.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <algorithm>
#include <new>

namespace attnscope {

namespace {

// cellOf[t] is the bin of item t when `count` items are split into `bins` bins as core's
// pooled computation splits them (binStart).
std::vector<int> binsOf(std::int64_t count, std::int64_t bins)
{
    std::vector<int> cellOf(static_cast<std::size_t>(count));
    for (std::int64_t b = 0; b < bins; ++b)
        for (std::int64_t t = binStart(b, count, bins); t < binStart(b + 1, count, bins); ++t)
            cellOf[std::size_t(t)] = int(b);
    return cellOf;
}

} // namespace

bool isLongAttention(const AttentionSet &set)
{
    if (set.isEmpty())
        return false;
    const std::int64_t cells = saturatingMul(saturatingMul(set.queries(), set.keys()), set.heads());
    // A layer shown in full is its float maps and at least as much again in the views.
    return cells > pooledCellThreshold() || saturatingMul(cells, 8) > memoryBudgetBytes();
}

Result<std::shared_ptr<PooledTile>>
AttentionFileTiles::computeTile(const PooledBlock &block, const std::atomic<bool> *cancel, PoolProgress *progress) const
{
    QElapsedTimer timer;
    timer.start();
    if (block.q0 < 0 || block.k0 < 0 || block.q1 > m_set.queries() || block.k1 > m_set.keys() || block.rows() < 1 ||
        block.keys() < 1 || block.bins < 1)
        return Error{"block: queries " + std::to_string(block.q0) + ".." + std::to_string(block.q1) + " x keys " +
                         std::to_string(block.k0) + ".." + std::to_string(block.k1) + " is outside the " +
                         std::to_string(m_set.queries()) + " x " + std::to_string(m_set.keys()) + " maps",
                     ErrorKind::InvalidInput};
    try {
        const std::int64_t nq = std::min(block.bins, block.rows()), nk = std::min(block.bins, block.keys());
        const std::vector<int> rowCell = binsOf(block.rows(), nq), keyCell = binsOf(block.keys(), nk);
        auto tile = std::make_shared<PooledTile>();
        tile->block = block;
        const int heads = m_set.heads();
        if (progress) {
            progress->total = std::int64_t(heads) * block.rows();
            progress->done = 0;
        }
        std::vector<float> row(static_cast<std::size_t>(block.keys()));
        for (int h = 0; h < heads; ++h) {
            MatrixF cells = MatrixF::Zero(nq, nk); // weights are >= 0: 0 is max's identity
            for (std::int64_t i = block.q0; i < block.q1; ++i) {
                if (cancel && cancel->load(std::memory_order_relaxed))
                    return Error{"cancelled", ErrorKind::Cancelled};
                m_set.rowSegment(0, m_layer, h, i, block.k0, block.k1, row.data());
                const int a = rowCell[std::size_t(i - block.q0)];
                for (std::int64_t j = 0; j < block.keys(); ++j) {
                    float &cell = cells(a, keyCell[std::size_t(j)]);
                    cell = std::max(cell, row[std::size_t(j)]);
                }
                if (progress)
                    progress->done.fetch_add(1, std::memory_order_relaxed);
            }
            tile->heads.push_back(std::move(cells));
        }
        tile->mean = MatrixF::Zero(nq, nk);
        for (const MatrixF &h : tile->heads)
            tile->mean += h;
        tile->mean /= float(heads);
        // Rows read from a file rewritten meanwhile are zeros or another file's: say so instead.
        if (Status s = m_set.checkSource(); !s)
            return s.error();
        tile->milliseconds = double(timer.nsecsElapsed()) / 1e6;
        return tile;
    } catch (const std::bad_alloc &) {
        return Error{
            QCoreApplication::translate("attnscope::PooledJobs", "out of memory while computing the pooled attention")
                .toStdString(),
            ErrorKind::OutOfMemory};
    }
}

std::shared_ptr<const Project> AttentionFileTiles::shapeProject(const AttentionSet &set, const QString &title)
{
    auto p = std::make_shared<Project>();
    p->title = title.toStdString();
    const bool cross = set.queries() != set.keys() || set.queryTokens != set.keyTokens;
    p->problem.spec.mode = cross ? AttentionMode::Cross : AttentionMode::Self;
    p->problem.spec.heads = set.heads();
    p->problem.xq = MatrixF::Zero(set.queries(), 1);
    if (cross)
        p->problem.xkv = MatrixF::Zero(set.keys(), 1);
    p->queryTokens = set.queryTokens;
    if (cross)
        p->keyTokens = set.keyTokens;
    return p;
}

} // namespace attnscope
