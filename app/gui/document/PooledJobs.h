#pragma once

#include "app/gui/document/JobRunner.h"
#include "core/attention/PooledAttention.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>

namespace attnscope {

class PooledTileSource;

// A block of a project's attention, pooled: query rows [q0, q1) against keys [k0, k1), in at
// most `bins` x `bins` cells (PoolOptions' block). A block no larger than its bins is exact.
struct PooledBlock {
    std::int64_t q0 = 0, q1 = 0, k0 = 0, k1 = 0;
    std::int64_t bins = 512;
    bool operator==(const PooledBlock &) const = default;
    std::int64_t rows() const { return q1 - q0; }
    std::int64_t keys() const { return k1 - k0; }
};

// One computed block: the max-pooled weights of every head and of their mean over heads.
struct PooledTile {
    PooledBlock block;
    quint64 source = 0;         // PooledJobs' source generation it belongs to
    std::vector<MatrixF> heads; // [H] Nq x Nk
    MatrixF mean;               // the max-pooled mean over heads of the weights (PoolOptions::headMean)
    double milliseconds = 0.0;
};
using PooledTilePtr = std::shared_ptr<const PooledTile>;

// Computes pooled blocks of one tile source (a long project, a long attention file: see
// PooledTileSource.h) on a job lane (JobRunner.h), never on the GUI thread. Only the newest
// request matters: a new one sets the running computation's cancel flag (it returns Cancelled
// within about one key tile's work) and replaces any that waits. Results come back as signals;
// the GUI never waits on the worker.
class PooledJobs : public QObject
{
    Q_OBJECT

public:
    explicit PooledJobs(QObject *parent = nullptr);
    ~PooledJobs() override; // cancels the running computation and waits for it a bounded time

    // The set later requests pool; cancels what runs. Null: none.
    void setSource(std::shared_ptr<const PooledTileSource> source);
    const std::shared_ptr<const PooledTileSource> &source() const { return m_source; }
    quint64 sourceGeneration() const { return m_sourceGeneration; }

    // Schedules `block`; returns its id (0 without a source).
    quint64 request(const PooledBlock &block);

    bool isBusy() const { return m_lane.isRunning(); }
    // The running computation: its id, how far it is (0..1) and for how long it has run.
    quint64 runningId() const { return m_lane.runningId(); }
    double progress() const;
    qint64 runningMilliseconds() const;
    // Blocks until nothing runs or waits (tests only).
    bool waitForIdle(int timeoutMs = 60000);

signals:
    void tileReady(attnscope::PooledTilePtr tile, quint64 id);
    // A newer request superseded this one and it stopped before its end.
    void cancelled(quint64 id);
    void failed(const QString &message, attnscope::ErrorKind kind, quint64 id);
    void busyChanged(bool busy);

private:
    JobLane m_lane{this, JobLane::Delivery::Every}; // a tile of the shown set is kept even when superseded
    std::shared_ptr<const PooledTileSource> m_source;
    quint64 m_sourceGeneration = 0;
    // Each submitted job's progress, as the pooled computation counts it (by job id).
    std::map<quint64, std::shared_ptr<PoolProgress>> m_progress;
};

} // namespace attnscope

Q_DECLARE_METATYPE(attnscope::PooledTilePtr)
