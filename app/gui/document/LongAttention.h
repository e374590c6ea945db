#pragma once

#include "app/gui/document/MemoryBudget.h"
#include "app/gui/document/PooledTileSource.h"
#include "core/analysis/AttentionSet.h"

#include <memory>

namespace attnscope {

// Long attention files (issue 11). A set whose layer holds more than budget.pooledCells cells
// over its heads, or whose layer as float maps would not fit budget.bytes(), is never copied
// into float or double matrices: the thumbnails and statistics stream its rows from the mapped
// file, the heads open pooled (PooledHeatmapView fed by AttentionFileTiles), and the rollout,
// which needs T x T doubles, is refused above the budget (core's checkRolloutCost).
// A set computed from queries and keys is long from a quarter of budget.pooledCells on.
bool isLongAttention(const AttentionSet &set, const MemoryBudget &budget);

// One layer of an attention set as PooledJobs' tile source: every block is read from the
// set's (mapped) maps row segment by row segment and max-pooled on the fly (core's
// poolSetBlock), so a tile costs its cells and a row per head, never a map; the mean over
// heads is the max over each block of the head-averaged weights.
// A set computed from queries and keys (a Q/K dump, a long model run) is pooled by the engine of
// `host` when one is given (the Vulkan pooled passes read q and k), else by the CPU engine.
class AttentionFileTiles : public PooledTileSource
{
public:
    AttentionFileTiles(AttentionSet set, int layer, std::shared_ptr<BackendHost> host = nullptr);
    Result<std::shared_ptr<PooledTile>> computeTile(const PooledBlock &block, const std::atomic<bool> *cancel,
                                                    PoolProgress *progress) const override;
    int layer() const { return m_layer; }

private:
    AttentionSet m_set;
    int m_layer = 0;
    std::shared_ptr<BackendHost> m_host;
};

} // namespace attnscope
