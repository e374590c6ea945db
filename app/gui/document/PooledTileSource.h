#pragma once

#include "app/gui/document/BackendHost.h"
#include "app/gui/document/PooledJobs.h"
#include "core/formats/ProjectFile.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

// What a pooled view shows: the set's shape and its labels (Tq and Tk entries, or empty).
struct PooledShape {
    std::int64_t queries = 0, keys = 0; // Tq, Tk
    int heads = 0;
    std::vector<std::string> queryLabels, keyLabels;
    bool operator==(const PooledShape &) const = default;
};

// Where a pooled view gets its tiles: one source per attention set, whatever produced it (a long
// project computed block by block, an attention file's maps read from the mapped file). It says
// the set's shape and computes any block's pooled cells. computeTile runs on a worker (JobLane),
// so it must be safe to call from any thread; it polls `cancel` (may be null) and reports
// `progress` (may be null) as core's pooled computation does.
class PooledTileSource
{
public:
    virtual ~PooledTileSource() = default;
    const PooledShape &shape() const { return m_shape; }
    // The block's cells for every head (max-pooled as PooledBlock describes: exact where the
    // block is no larger than its bins) and the max-pooled mean over heads; Cancelled once
    // cancel is set.
    virtual Result<std::shared_ptr<PooledTile>> computeTile(const PooledBlock &block, const std::atomic<bool> *cancel,
                                                            PoolProgress *progress) const = 0;

protected:
    // What a tile that ran out of memory reports, whichever source computed it.
    static Error outOfMemory();

    PooledShape m_shape;
};

// A long project: each block computed exactly by the backend the user chose (the BackendHost's,
// computePooled), never holding Tq x Tk per head.
class ProjectTiles : public PooledTileSource
{
public:
    ProjectTiles(std::shared_ptr<const Project> project, std::shared_ptr<BackendHost> host);
    Result<std::shared_ptr<PooledTile>> computeTile(const PooledBlock &block, const std::atomic<bool> *cancel,
                                                    PoolProgress *progress) const override;

private:
    std::shared_ptr<const Project> m_project;
    std::shared_ptr<BackendHost> m_host;
};

} // namespace attnscope
