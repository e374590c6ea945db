#include "app/gui/document/WorkerPool.h"

#include <QMetaObject>
#include <QThreadPool>

#include <mutex>
#include <vector>

namespace attnscope {

namespace {

// Pools left running at exit, kept reachable (they are not leaks: their jobs still run). The
// list is never destroyed: a leak checker runs after static destructors and must still find it.
std::mutex g_abandonedMutex;
std::vector<QThreadPool *> &abandonedPools()
{
    static auto *pools = new std::vector<QThreadPool *>;
    return *pools;
}

} // namespace

WorkerPool::WorkerPool(QObject *owner, int maxThreads) : m_pool(new QThreadPool)
{
    m_poster.m_target = std::make_shared<Poster::Target>();
    m_poster.m_target->owner = owner;
    m_pool->setMaxThreadCount(maxThreads);
    // Workers wait for the next job instead of being started anew each time (a Vulkan device
    // stays on the thread that made it).
    m_pool->setExpiryTimeout(-1);
}

WorkerPool::~WorkerPool()
{
    {
        // After this no job delivers: the owner is being destroyed.
        std::lock_guard lock(m_poster.m_target->mutex);
        m_poster.m_target->owner = nullptr;
    }
    m_pool->clear();
    if (m_pool->waitForDone(kExitWaitMs)) {
        delete m_pool;
        return;
    }
    // Deleting the pool would wait for the job without bound. It keeps its own captures alive
    // and has nowhere to deliver; the process may end before it does. Its thread ends with it.
    m_pool->setExpiryTimeout(0);
    std::lock_guard lock(g_abandonedMutex);
    abandonedPools().push_back(m_pool);
}

void WorkerPool::Poster::post(std::function<void()> f) const
{
    std::lock_guard lock(m_target->mutex);
    // Under the lock the owner cannot be destroyed (its pool's destructor takes the same lock).
    if (m_target->owner)
        QMetaObject::invokeMethod(m_target->owner, std::move(f), Qt::QueuedConnection);
}

void WorkerPool::start(std::function<void()> job)
{
    m_pool->start(std::move(job));
}

void WorkerPool::clear()
{
    m_pool->clear();
}

bool WorkerPool::waitForDone(int timeoutMs)
{
    return m_pool->waitForDone(timeoutMs);
}

int WorkerPool::abandonedCount()
{
    std::lock_guard lock(g_abandonedMutex);
    return int(abandonedPools().size());
}

} // namespace attnscope
