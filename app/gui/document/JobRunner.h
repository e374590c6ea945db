#pragma once

#include <QObject>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace attnscope {

// What a job sees while it runs: its cancel flag, raised when a newer request supersedes it or
// its owner goes (core's work polls it and stops with ErrorKind::Cancelled), and its progress
// (0..1), which it may write for the window to show.
struct JobState {
    std::atomic<bool> cancel{false};
    std::atomic<double> progress{0.0};
    qint64 startedMs = 0; // when it started (QDateTime's epoch milliseconds), set before it runs
    double cost = 0.0;    // what the submitter said the job weighs (for a cancel policy)
};

// The one runner of the window's background work: the computations of a project, model runs,
// pooled tiles, attention files being read, thumbnails, statistics and rollout. Every job runs
// on one pool of worker threads shared by the whole application, never on the GUI thread.
//
// Work is submitted on a lane (one per kind of work of a controller). A lane runs one job at a
// time and only its newest request matters: a new request replaces the one waiting, which never
// runs, and cancels the one running (a lane's cancel policy may let a job that is about to end
// finish instead). A job returns what to deliver; the delivery runs on the owner's thread, for the
// newest job only (or, with Delivery::Every, for every job that finished, the owner choosing).
// When the owner goes, the lane cancels its job and waits for it a bounded time (kExitWaitMs): a
// job that has not ended by then (a read blocked in the kernel, a driver that stopped answering)
// is left to end on its own with nowhere to deliver, so closing a window never waits without end.
class JobLane
{
public:
    static constexpr int kExitWaitMs = 2000;

    enum class Delivery {
        NewestOnly, // a superseded or cancelled job delivers nothing
        Every,      // every finished job's delivery runs (the owner compares generations)
    };
    using Deliver = std::function<void()>;
    using Work = std::function<Deliver(JobState &state)>;

    explicit JobLane(QObject *owner, Delivery delivery = Delivery::NewestOnly);
    ~JobLane();
    JobLane(const JobLane &) = delete;
    JobLane &operator=(const JobLane &) = delete;

    // Delivers to the owner's thread from any thread (a job's progress, say). Copyable: jobs
    // capture it by value, never the lane or the owner, which may be gone when they finish.
    class Poster
    {
    public:
        // Queues f to run on the owner's thread; dropped once the lane has gone.
        void post(std::function<void()> f) const;

    private:
        friend class JobLane;
        struct Target;
        std::shared_ptr<Target> m_target;
    };
    Poster poster() const { return m_poster; }

    // Submits work as the lane's newest request and returns its id (1, 2, ...); `cost` is
    // handed to the cancel policy through JobState::cost.
    quint64 submit(Work work, double cost = 0.0);
    // Whether submit() cancels the job running (default: always). Called on the owner's thread.
    void setCancelPolicy(std::function<bool(const JobState &running)> cancelRunning);
    // Called on the owner's thread when the lane becomes busy (a job starts) or idle.
    void setBusyCallback(std::function<void(bool busy)> busy) { m_busy = std::move(busy); }
    // Nothing submitted so far delivers any more: the waiting job is dropped, the running one
    // cancelled.
    void cancel();

    bool isBusy() const { return m_running != nullptr || m_pending.has_value(); }
    bool isRunning() const { return m_running != nullptr; }
    quint64 newest() const { return m_newest; }
    quint64 runningId() const { return m_running ? m_runningId : 0; }
    // The job running, or null: its progress and start time.
    const JobState *running() const { return m_running.get(); }
    // Processes events until the lane is idle or timeoutMs passed (tests and shutdown).
    bool waitForIdle(int timeoutMs);

    // How many jobs were left running because they outlived their lane's exit wait (tests).
    static int abandonedCount();

private:
    struct Pending {
        quint64 id = 0;
        Work work;
        double cost = 0.0;
    };
    void startNext();
    void finished(quint64 id, const std::shared_ptr<JobState> &state, const Deliver &deliver);

    Delivery m_delivery;
    Poster m_poster;
    std::function<bool(const JobState &)> m_cancelRunning;
    std::function<void(bool)> m_busy;
    std::optional<Pending> m_pending;
    std::shared_ptr<JobState> m_running;
    quint64 m_runningId = 0;
    quint64 m_newest = 0;
    quint64 m_cancelledBelow = 0; // jobs with a smaller id deliver nothing (cancel())
};

// Runs `job` on the same worker threads, for work nobody waits for and nothing supersedes (writing
// the recent-files list). It must not touch the GUI; it is dropped once the application object
// has gone.
void runDetached(std::function<void()> job);

} // namespace attnscope
