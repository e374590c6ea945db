#pragma once

#include "app/gui/document/PooledJobs.h"

#include <atomic>
#include <memory>

namespace attnscope {

// Where PooledJobs gets its tiles when they do not come from a project's computation: an
// attention file's maps read from the mapped file (AttentionFileTiles). Runs on PooledJobs'
// worker thread, so it must be safe to call from any thread; it polls `cancel` (may be null)
// and reports `progress` (may be null) as core's pooled computation does.
class PooledTileSource
{
public:
    virtual ~PooledTileSource() = default;
    // The block's cells for every head (max-pooled as PooledBlock describes: exact where the
    // block is no larger than its bins) and their mean over heads; Cancelled once cancel is set.
    virtual Result<std::shared_ptr<PooledTile>> computeTile(const PooledBlock &block, const std::atomic<bool> *cancel,
                                                            PoolProgress *progress) const = 0;
};

} // namespace attnscope
