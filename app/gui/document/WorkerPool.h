#pragma once

#include <QObject>

#include <functional>
#include <memory>
#include <mutex>

class QThreadPool;

namespace attnscope {

// The worker threads of one controller (attention jobs, model runs, computations, pooled
// tiles). A job hands its result to the owner's thread with a Poster, which delivers only while
// the owner lives. When the pool goes (the window closes), the owner has cancelled what runs;
// the pool waits for the jobs in flight at most kExitWaitMs, and a job that has not finished by
// then (a read blocked in the kernel, a driver that stopped answering) is left to end on its
// own with nowhere to deliver: closing the window never waits without bound.
class WorkerPool
{
public:
    static constexpr int kExitWaitMs = 2000;

    // Results are posted to `owner` (queued to its thread); maxThreads workers run jobs.
    WorkerPool(QObject *owner, int maxThreads);
    ~WorkerPool();
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    // Delivers to the owner's thread from any thread. Copyable: jobs capture it by value, never
    // the pool or the owner, which may be gone when they finish.
    class Poster
    {
    public:
        // Queues f to run on the owner's thread in the owner's context; dropped once the pool
        // has gone (and, as for any queued call, when the owner is deleted before it runs).
        void post(std::function<void()> f) const;

    private:
        friend class WorkerPool;
        struct Target {
            std::mutex mutex;
            QObject *owner = nullptr; // null once the pool has gone
        };
        std::shared_ptr<Target> m_target;
    };
    Poster poster() const { return m_poster; }

    void start(std::function<void()> job);
    // Drops the jobs that have not started.
    void clear();
    // Whether every job finished within timeoutMs (tests; -1 waits without bound).
    bool waitForDone(int timeoutMs);
    // How many pools were left running because a job outlived the exit wait (tests).
    static int abandonedCount();

private:
    Poster m_poster;
    QThreadPool *m_pool; // owned; left running (never deleted) when a job outlives the exit wait
};

} // namespace attnscope
