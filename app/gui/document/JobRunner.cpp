#include "app/gui/document/JobRunner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QMetaObject>
#include <QThread>
#include <QThreadPool>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace attnscope {

namespace {

std::atomic<int> g_abandoned{0};
std::atomic<bool> g_closed{false}; // the application object has gone: nothing starts any more

// The application's one pool of worker threads. Never the global QThreadPool, whose destructor
// waits for every job without bound: this one is deleted when the application object goes, and
// only when its jobs have ended within the exit wait; otherwise it stays (reachable, for leak
// checkers) until the process ends.
QThreadPool *workerThreads()
{
    static QThreadPool *pool = [] {
        auto *p = new QThreadPool;
        // Enough for a computation, a model run, a pooled tile and two of the attention views'
        // jobs side by side; each CPU engine sizes its own OpenMP team within the job.
        p->setMaxThreadCount(std::max(4, QThread::idealThreadCount()));
        qAddPostRoutine([] {
            g_closed = true;
            if (pool->waitForDone(JobLane::kExitWaitMs)) {
                delete pool;
                pool = nullptr;
            }
        });
        return p;
    }();
    return g_closed ? nullptr : pool;
}

} // namespace

struct JobLane::Poster::Target {
    std::mutex mutex;
    std::condition_variable ended;
    QObject *owner = nullptr; // null once the lane has gone
    int running = 0;          // jobs of the lane on a worker (0 or 1)
};

void JobLane::Poster::post(std::function<void()> f) const
{
    std::lock_guard lock(m_target->mutex);
    // Under the lock the owner cannot be destroyed (its lane's destructor takes the same lock).
    if (m_target->owner)
        QMetaObject::invokeMethod(m_target->owner, std::move(f), Qt::QueuedConnection);
}

JobLane::JobLane(QObject *owner, Delivery delivery) : m_delivery(delivery)
{
    m_poster.m_target = std::make_shared<Poster::Target>();
    m_poster.m_target->owner = owner;
}

JobLane::~JobLane()
{
    m_pending.reset();
    if (m_running)
        m_running->cancel.store(true);
    std::unique_lock lock(m_poster.m_target->mutex);
    // After this no job delivers: the owner is being destroyed.
    m_poster.m_target->owner = nullptr;
    const bool ended = m_poster.m_target->ended.wait_for(lock, std::chrono::milliseconds(kExitWaitMs),
                                                         [this] { return m_poster.m_target->running == 0; });
    if (!ended)
        ++g_abandoned; // it keeps its own captures alive and has nowhere to deliver
}

int JobLane::abandonedCount()
{
    return g_abandoned.load();
}

void JobLane::setCancelPolicy(std::function<bool(const JobState &)> cancelRunning)
{
    m_cancelRunning = std::move(cancelRunning);
}

quint64 JobLane::submit(Work work, double cost)
{
    const quint64 id = ++m_newest;
    m_pending = Pending{id, std::move(work), cost};
    if (m_running && (!m_cancelRunning || m_cancelRunning(*m_running)))
        m_running->cancel.store(true);
    if (!m_running)
        startNext();
    return id;
}

void JobLane::cancel()
{
    m_pending.reset();
    if (m_running)
        m_running->cancel.store(true);
    m_cancelledBelow = m_newest + 1;
}

void JobLane::startNext()
{
    if (m_running || !m_pending)
        return;
    Pending job = std::move(*m_pending);
    m_pending.reset();
    auto state = std::make_shared<JobState>();
    state->startedMs = QDateTime::currentMSecsSinceEpoch();
    state->cost = job.cost;
    m_running = state;
    m_runningId = job.id;
    if (m_busy)
        m_busy(true);
    {
        std::lock_guard lock(m_poster.m_target->mutex);
        ++m_poster.m_target->running;
    }
    QThreadPool *threads = workerThreads();
    if (!threads) { // the application object has gone: nothing runs any more
        m_running.reset();
        std::lock_guard lock(m_poster.m_target->mutex);
        --m_poster.m_target->running;
        return;
    }
    threads->start([this, poster = m_poster, id = job.id, state, work = std::move(job.work)] {
        Deliver deliver;
        try {
            deliver = work(*state);
        } catch (...) {
            // Work catches what it can report (memory running out); anything else must not end
            // the worker thread, and the lane must still hear that the job ended.
        }
        // `this` is used on the owner's thread only, where the poster runs it while the lane lives.
        poster.post([this, id, state, deliver = std::move(deliver)] { finished(id, state, deliver); });
        std::lock_guard lock(poster.m_target->mutex);
        --poster.m_target->running;
        poster.m_target->ended.notify_all();
    });
}

void JobLane::finished(quint64 id, const std::shared_ptr<JobState> &state, const Deliver &deliver)
{
    if (m_running == state)
        m_running.reset();
    const bool current = id >= m_cancelledBelow;
    if (deliver && current &&
        (m_delivery == Delivery::Every || (id == m_newest && !state->cancel.load(std::memory_order_relaxed))))
        deliver();
    // The delivery may have submitted more work; start what waits, or say the lane is idle.
    if (m_running)
        return;
    if (m_pending)
        startNext();
    else if (m_busy)
        m_busy(false);
}

void runDetached(std::function<void()> job)
{
    if (QThreadPool *threads = workerThreads())
        threads->start(std::move(job));
}

bool JobLane::waitForIdle(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (isBusy() && (timeoutMs < 0 || timer.elapsed() < timeoutMs))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    return !isBusy();
}

} // namespace attnscope
