// The ComputeController: results off the GUI thread, coalesced requests, superseded results
// dropped, errors reported. Runs the real CPU backend.

#include "app/engine/BackendChoice.h"
#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"
#include "app/gui/document/JobRunner.h"
#include "app/gui/document/MemoryBudget.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/RandomProblem.h"

#include "../common/TestUtil.h"

#include <QDeadlineTimer>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

#include <sys/resource.h>

using namespace attnscope;

namespace {

Project tutorial()
{
    return *Document::readProject(
        test::sourcePath(QStringLiteral("resources/examples/self-attention-tutorial.attnscope.json")));
}

Project large(std::uint64_t seed)
{
    RandomProblemOptions o;
    o.tokens = 512;
    o.modelDim = 256;
    o.heads = 8;
    o.seed = seed;
    return randomProject(o);
}

// The real CPU engine behind a gate: compute() waits until the test opens the gate once, so
// which computation runs when is decided by the test, not by timing.
class GatedBackend : public AttentionBackend
{
public:
    explicit GatedBackend(std::shared_ptr<QSemaphore> gate) : m_gate(std::move(gate)) {}
    std::string name() const override { return m_cpu.name(); }
    std::string deviceName() const override { return m_cpu.deviceName(); }
    Result<AttentionTrace> compute(const AttentionProblem &problem) override
    {
        m_gate->acquire();
        // Cancelled while it waited: as the real engine does at its first checkpoint.
        if (cancelRequested())
            return Error{"cancelled", ErrorKind::Cancelled};
        return m_cpu.compute(problem);
    }

private:
    std::shared_ptr<QSemaphore> m_gate;
    CpuBackend m_cpu;
};

// A backend that needs more memory than any estimate said (scratch space the size of
// `scratchBytes`) before computing on the CPU, as a driver or a newer engine might.
class ScratchHungryBackend : public AttentionBackend
{
public:
    explicit ScratchHungryBackend(std::size_t scratchBytes) : m_scratchBytes(scratchBytes) {}
    std::string name() const override { return m_cpu.name(); }
    std::string deviceName() const override { return m_cpu.deviceName(); }
    Result<AttentionTrace> compute(const AttentionProblem &problem) override
    {
        std::vector<char> scratch(m_scratchBytes, 1);
        auto trace = m_cpu.compute(problem);
        if (trace)
            trace->output(0, 0) += float(scratch[m_scratchBytes / 2] - 1);
        return trace;
    }

private:
    std::size_t m_scratchBytes;
    CpuBackend m_cpu;
};

// Lowers the address-space limit for one scope, so that a large allocation really fails.
class AddressSpaceLimit
{
public:
    explicit AddressSpaceLimit(rlim_t bytes)
    {
        getrlimit(RLIMIT_AS, &m_saved);
        rlimit lower = m_saved;
        lower.rlim_cur = bytes;
        m_ok = setrlimit(RLIMIT_AS, &lower) == 0;
    }
    ~AddressSpaceLimit() { setrlimit(RLIMIT_AS, &m_saved); }
    bool ok() const { return m_ok; }

private:
    rlimit m_saved{};
    bool m_ok = false;
};

std::int64_t virtualMemoryBytes()
{
    QFile f(QStringLiteral("/proc/self/statm"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return f.readAll().split(' ').value(0).toLongLong() * sysconf(_SC_PAGESIZE);
}

} // namespace

class TestCompute : public QObject
{
    Q_OBJECT

private slots:
    void computesOnTheWorker();
    void coalescesRequestsOfOneTurn();
    void dropsSupersededResults();
    void reportsInvalidProblems();
    void backendChoice();
    void showsFinishedResultWhileNewerWaits();
    void newerRequestCancelsLongCompute();
    void newerRequestStopsRunningCpuCompute();
    void closingCancelsTheRunningCompute();
    void closingDoesNotWaitForAStuckWorker();
    void fallbackNoticeOutlivesACancelledCompute();
    void reportsAllocationFailure();
    void addressSpaceLimitRefusesBeforeAllocating();
    void refusesTraceBeyondBudget();
    void computesRangesOnTheWorker();
};

void TestCompute::computesOnTheWorker()
{
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy done(&c, &ComputeController::computed);
    const quint64 g = c.request(tutorial());
    QCOMPARE(done.count(), 0); // nothing computed synchronously
    QVERIFY(done.wait(10000));
    auto r = done.at(0).at(0).value<ComputedTracePtr>();
    QCOMPARE(r->generation, g);
    QCOMPARE(r->backendName, QStringLiteral("cpu"));
    QVERIFY(!r->deviceName.isEmpty());
    QVERIFY(r->milliseconds >= 0.0);
    // The tutorial's first output row is about [1.9366, 6.6831, 1.5951].
    QVERIFY(std::abs(r->trace.output(0, 0) - 1.9366f) < 1e-3f);
    QVERIFY(std::abs(r->trace.output(0, 1) - 6.6831f) < 1e-3f);
    auto direct = CpuBackend().compute(tutorial().problem);
    QVERIFY(direct.ok());
    QVERIFY(direct->weights[0] == r->trace.weights[0]);
}

void TestCompute::coalescesRequestsOfOneTurn()
{
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy done(&c, &ComputeController::computed);
    Project p = tutorial();
    quint64 last = 0;
    for (int i = 0; i < 5; ++i) {
        p.problem.xq(0, 0) = float(i);
        last = c.request(p);
    }
    QVERIFY(c.waitForIdle());
    QCOMPARE(done.count(), 1);
    auto r = done.at(0).at(0).value<ComputedTracePtr>();
    QCOMPARE(r->generation, last);
    QCOMPARE(r->project.problem.xq(0, 0), 4.0f);
}

void TestCompute::dropsSupersededResults()
{
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy done(&c, &ComputeController::computed);
    QSignalSpy busy(&c, &ComputeController::busyChanged);
    c.request(large(1));
    QTRY_VERIFY(c.isBusy()); // the first computation has started
    c.request(large(2));
    const quint64 last = c.request(large(3));
    QVERIFY(c.waitForIdle(60000));
    // The first result finished while a newer request waited: it is shown (newer than what
    // was on screen); the second request never ran; the last result comes last.
    QVERIFY(done.count() >= 1 && done.count() <= 2);
    QCOMPARE(done.last().at(0).value<ComputedTracePtr>()->generation, last);
    for (int i = 1; i < done.count(); ++i)
        QVERIFY(done.at(i).at(0).value<ComputedTracePtr>()->generation >
                done.at(i - 1).at(0).value<ComputedTracePtr>()->generation);
    QVERIFY(!c.isBusy());
    QCOMPARE(busy.last().at(0).toBool(), false);
}

void TestCompute::reportsInvalidProblems()
{
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy failed(&c, &ComputeController::failed);
    QSignalSpy done(&c, &ComputeController::computed);
    Project p = tutorial();
    p.problem.weights.q = MatrixF::Zero(4, 2);
    const quint64 g = c.request(p);
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("weights.q")));
    QCOMPARE(failed.at(0).at(1).value<quint64>(), g);
    QCOMPARE(done.count(), 0);
}

void TestCompute::backendChoice()
{
    ComputeController c;
    QSignalSpy changed(&c, &ComputeController::backendChanged);
    c.setBackendRequest(BackendRequest::Cpu);
    QVERIFY(changed.wait(10000));
    QCOMPARE(changed.at(0).at(0).toString(), QStringLiteral("cpu"));
    c.setBackendRequest(BackendRequest::Auto);
    QVERIFY(changed.wait(30000));
    QVERIFY(!changed.at(1).at(0).toString().isEmpty()); // auto always finds something
}

void TestCompute::showsFinishedResultWhileNewerWaits()
{
    // A drag that outpaces the computation: every finished result newer than the one on
    // screen is shown at once, instead of nothing until the drag stops.
    ComputeController c;
    auto gate = std::make_shared<QSemaphore>(0);
    // Declared after the controller, so destroyed first: a failing check never leaves the
    // worker waiting at the gate while the controller waits for the worker.
    const std::unique_ptr<QSemaphore, void (*)(QSemaphore *)> opener(gate.get(),
                                                                     [](QSemaphore *g) { g->release(100); });
    c.setBackend(std::make_shared<GatedBackend>(gate));
    QSignalSpy done(&c, &ComputeController::computed);
    Project p = tutorial();
    const quint64 first = c.request(p);
    QTRY_VERIFY(c.isBusy()); // the worker waits at the gate with the first request
    p.problem.xq(0, 0) = 5.0f;
    c.request(p);
    p.problem.xq(0, 0) = 6.0f;
    const quint64 last = c.request(p); // coalesced with the one before: one computation
    gate->release();
    QVERIFY(done.wait(10000));
    QCOMPARE(done.count(), 1);
    QCOMPARE(done.at(0).at(0).value<ComputedTracePtr>()->generation, first);
    QVERIFY(c.isBusy()); // the newest request computes now
    gate->release();
    QTRY_COMPARE(done.count(), 2);
    auto r = done.at(1).at(0).value<ComputedTracePtr>();
    QCOMPARE(r->generation, last);
    QCOMPARE(r->project.problem.xq(0, 0), 6.0f);
    QVERIFY(c.waitForIdle());
    QCOMPARE(done.count(), 2);
}

void TestCompute::newerRequestCancelsLongCompute()
{
    // A computation that would run on for long (this one is judged at a slow machine's speed:
    // nothing has finished yet) is stopped by a newer request: its result is never shown,
    // cancelled() names it, and the newest request is computed.
    ComputeController c;
    auto gate = std::make_shared<QSemaphore>(0);
    const std::unique_ptr<QSemaphore, void (*)(QSemaphore *)> opener(gate.get(),
                                                                     [](QSemaphore *g) { g->release(100); });
    c.setBackend(std::make_shared<GatedBackend>(gate));
    QSignalSpy done(&c, &ComputeController::computed);
    QSignalSpy cancelled(&c, &ComputeController::cancelled);
    QSignalSpy failed(&c, &ComputeController::failed);
    // Judged at 6 s of work, so that the time the test takes to see it start (seconds on a loaded
    // machine) never makes it look about to end: 512 tokens were judged at 0.5 s, and a stall
    // of 0.4 s under CI's load let it finish instead (cancelled.wait failed).
    RandomProblemOptions o;
    o.tokens = 2048;
    o.modelDim = 256;
    o.heads = 8;
    o.seed = 1;
    Project p = randomProject(o);
    const quint64 first = c.request(p);
    QTRY_VERIFY(c.isBusy());
    p.problem.xq(0, 0) += 1.0f;
    const quint64 last = c.request(p);
    gate->release(2);
    QVERIFY(cancelled.wait(30000));
    QCOMPARE(cancelled.at(0).at(0).value<quint64>(), first);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
    QCOMPARE(done.at(0).at(0).value<ComputedTracePtr>()->generation, last);
    QVERIFY(c.waitForIdle());
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(failed.count(), 0); // a cancelled computation is no failure
}

void TestCompute::newerRequestStopsRunningCpuCompute()
{
    // The real CPU engine, stopped part-way: a full computation runs first (the controller
    // learns the machine's speed from it too), then a newer edit arrives once the next one
    // reports a tenth of its work done.
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy done(&c, &ComputeController::computed);
    QSignalSpy cancelled(&c, &ComputeController::cancelled);
    QSignalSpy failed(&c, &ComputeController::failed);
    RandomProblemOptions o;
    o.tokens = 2048;
    o.modelDim = 512;
    o.heads = 8; // 33.5M cells per matrix: about a second on two cores
    Project p = randomProject(o);
    c.request(p);
    QVERIFY(done.wait(120000));

    p.problem.xq(0, 0) += 1.0f;
    const quint64 superseded = c.request(p);
    QTRY_VERIFY_WITH_TIMEOUT(c.progress() > 0.0, 60000); // progress is reported as it runs
    QTRY_VERIFY_WITH_TIMEOUT(c.progress() >= 0.1 || !c.isBusy(), 60000);
    QVERIFY(c.isBusy());
    p.problem.xq(0, 0) += 1.0f;
    const quint64 newest = c.request(p);
    QVERIFY(cancelled.wait(120000));
    QCOMPARE(cancelled.at(0).at(0).value<quint64>(), superseded);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 120000);
    QCOMPARE(done.at(1).at(0).value<ComputedTracePtr>()->generation, newest);
    QCOMPARE(failed.count(), 0);
}

// Records whether it was asked to stop while it waited at its gate.
class CancelRecordingBackend : public AttentionBackend
{
public:
    CancelRecordingBackend(std::shared_ptr<QSemaphore> gate, std::shared_ptr<std::atomic<bool>> sawCancel)
        : m_gate(std::move(gate)), m_sawCancel(std::move(sawCancel))
    {
    }
    std::string name() const override { return "cpu"; }
    std::string deviceName() const override { return "gated"; }
    Result<AttentionTrace> compute(const AttentionProblem &) override
    {
        m_gate->acquire();
        *m_sawCancel = cancelRequested();
        return Error{"cancelled", ErrorKind::Cancelled};
    }
    // Whether the controller has asked it to stop (read from the test's thread).
    bool isCancelRequested() const { return cancelRequested(); }

private:
    std::shared_ptr<QSemaphore> m_gate;
    std::shared_ptr<std::atomic<bool>> m_sawCancel;
};

void TestCompute::closingCancelsTheRunningCompute()
{
    // Closing the window (destroying the controller) stops the computation in flight instead of
    // waiting for it to finish.
    auto gate = std::make_shared<QSemaphore>(0);
    auto sawCancel = std::make_shared<std::atomic<bool>>(false);
    auto c = std::make_unique<ComputeController>();
    auto backend = std::make_shared<CancelRecordingBackend>(gate, sawCancel);
    c->setBackend(backend);
    c->request(large(1));
    QTRY_VERIFY(c->isBusy());
    // Opens the gate once the worker held there has been asked to stop (the deadline only
    // bounds a failure: the gate then opens anyway and the test fails on sawCancel).
    std::thread opener([gate, backend] {
        const QDeadlineTimer deadline(60000);
        while (!backend->isCancelRequested() && !deadline.hasExpired())
            std::this_thread::yield();
        gate->release();
    });
    c.reset(); // waits for the worker, which the opener lets go
    opener.join();
    QVERIFY(sawCancel->load());
}

void TestCompute::closingDoesNotWaitForAStuckWorker()
{
    // A worker that does not stop when asked (a read blocked in the kernel, a driver that stopped
    // answering) used to hold the window's close for good: the controller's destructor waited
    // for it. Now it waits a bounded time and leaves the worker to finish with nowhere to
    // deliver. A watchdog opens the gate if the destructor has not returned by far: the test
    // then fails instead of hanging.
    auto gate = std::make_shared<QSemaphore>(0);
    auto sawCancel = std::make_shared<std::atomic<bool>>(false);
    auto destroyed = std::make_shared<QSemaphore>(0);
    auto watchdogOpened = std::make_shared<std::atomic<bool>>(false);
    const int abandonedBefore = JobLane::abandonedCount();
    auto c = std::make_unique<ComputeController>();
    c->setBackend(std::make_shared<CancelRecordingBackend>(gate, sawCancel));
    QSignalSpy done(c.get(), &ComputeController::computed);
    c->request(large(1));
    QTRY_VERIFY(c->isBusy());
    std::thread watchdog([=] {
        if (!destroyed->tryAcquire(1, 60000)) {
            *watchdogOpened = true;
            gate->release();
        }
    });
    c.reset(); // the worker is still at its gate
    destroyed->release();
    watchdog.join();
    QVERIFY2(!watchdogOpened->load(), "closing waited for a worker that did not stop");
    QCOMPARE(JobLane::abandonedCount(), abandonedBefore + 1);
    // The worker finishes later and delivers to nobody (no crash, nothing arrives).
    gate->release();
    QTRY_VERIFY(sawCancel->load());
    QCoreApplication::processEvents();
}

// A GPU stand-in whose device is lost once the test opens its gate.
class LosingBackend : public AttentionBackend
{
public:
    explicit LosingBackend(std::shared_ptr<QSemaphore> gate) : m_gate(std::move(gate)) {}
    std::string name() const override { return "vulkan"; }
    std::string deviceName() const override { return "stand-in GPU"; }
    Result<AttentionTrace> compute(const AttentionProblem &) override
    {
        m_gate->acquire();
        return Error{"vkQueueSubmit: VK_ERROR_DEVICE_LOST", ErrorKind::DeviceLost};
    }

private:
    std::shared_ptr<QSemaphore> m_gate;
};

void TestCompute::fallbackNoticeOutlivesACancelledCompute()
{
    // The GPU is lost during a computation that a newer edit has superseded: the CPU answer is
    // cancelled, but the notice that the CPU computes from now on is shown with the next result.
    auto gate = std::make_shared<QSemaphore>(0);
    const std::unique_ptr<QSemaphore, void (*)(QSemaphore *)> opener(gate.get(),
                                                                     [](QSemaphore *g) { g->release(100); });
    ComputeController c;
    c.setBackend(std::make_shared<FallbackBackend>(std::make_unique<LosingBackend>(gate)));
    QSignalSpy done(&c, &ComputeController::computed);
    QSignalSpy cancelled(&c, &ComputeController::cancelled);
    Project p = large(1);
    const quint64 first = c.request(p);
    QTRY_VERIFY(c.isBusy());
    p.problem.xq(0, 0) += 1.0f;
    const quint64 last = c.request(p); // sets the running computation's cancel flag
    gate->release();
    QVERIFY(cancelled.wait(30000));
    QCOMPARE(cancelled.at(0).at(0).value<quint64>(), first);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 30000);
    const auto r = done.at(0).at(0).value<ComputedTracePtr>();
    QCOMPARE(r->generation, last);
    QCOMPARE(r->backendName, QStringLiteral("cpu"));
    QVERIFY2(r->notice.contains(QStringLiteral("from now on")), qPrintable(r->notice));
}

void TestCompute::reportsAllocationFailure()
{
    ATTNSCOPE_SKIP_IF_ADDRESS_SPACE_LIMITS_UNUSABLE();
    // The estimate passes, then an allocation really fails (the address space is limited):
    // the failure is reported (kind OutOfMemory) instead of ending the application.
    ComputeController c;
    c.setBackend(std::make_shared<ScratchHungryBackend>(std::size_t(2) << 30));
    QSignalSpy failed(&c, &ComputeController::failed);
    QSignalSpy done(&c, &ComputeController::computed);
    MemoryBudget generous;
    generous.fixedBytes = std::int64_t(1) << 40; // the estimate lets it through
    c.setMemoryBudget(generous);
    {
        AddressSpaceLimit limit(rlim_t(virtualMemoryBytes() + (std::int64_t(768) << 20)));
        QVERIFY(limit.ok());
        c.request(tutorial());
        QVERIFY(failed.wait(60000));
    }
    c.setMemoryBudget(MemoryBudget());
    QCOMPARE(done.count(), 0);
    QCOMPARE(failed.at(0).at(2).value<ErrorKind>(), ErrorKind::OutOfMemory);
    QVERIFY2(failed.at(0).at(0).toString().contains(QStringLiteral("memory")),
             qPrintable(failed.at(0).at(0).toString()));
    // The worker goes on: the next request computes.
    c.setBackend(std::make_shared<CpuBackend>());
    c.request(tutorial());
    QVERIFY(done.wait(10000));
}

void TestCompute::addressSpaceLimitRefusesBeforeAllocating()
{
    ATTNSCOPE_SKIP_IF_ADDRESS_SPACE_LIMITS_UNUSABLE();
    // Under an address-space limit the machine's budget (core/io/MemoryLimits.h) shrinks with it:
    // a 2 GiB trace is refused by its size (kind TooLarge) before anything is allocated.
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy changed(&c, &ComputeController::backendChanged);
    QVERIFY(changed.wait(10000));
    QSignalSpy failed(&c, &ComputeController::failed);
    RandomProblemOptions o;
    o.tokens = 8192;
    o.modelDim = 16;
    o.heads = 4; // scores and weights: 2 x 4 x 8192 x 8192 floats = 2 GiB
    const Project huge = randomProject(o);
    {
        AddressSpaceLimit limit(rlim_t(virtualMemoryBytes() + (std::int64_t(768) << 20)));
        QVERIFY(limit.ok());
        c.request(huge);
        QVERIFY(failed.wait(60000));
    }
    QCOMPARE(failed.at(0).at(2).value<ErrorKind>(), ErrorKind::TooLarge);
    QVERIFY2(failed.at(0).at(0).toString().contains(QStringLiteral("allows")),
             qPrintable(failed.at(0).at(0).toString()));
}

void TestCompute::refusesTraceBeyondBudget()
{
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy failed(&c, &ComputeController::failed);
    MemoryBudget tight;
    tight.fixedBytes = std::int64_t(1) << 20;
    c.setMemoryBudget(tight);
    RandomProblemOptions o;
    o.tokens = 512;
    o.modelDim = 16;
    o.heads = 2; // 4 MiB of scores and weights
    c.request(randomProject(o));
    QVERIFY(failed.wait(10000));
    QCOMPARE(failed.at(0).at(2).value<ErrorKind>(), ErrorKind::TooLarge);
    QVERIFY2(failed.at(0).at(0).toString().contains(QStringLiteral("MiB")), qPrintable(failed.at(0).at(0).toString()));
}

void TestCompute::computesRangesOnTheWorker()
{
    ComputeController c;
    c.setBackendRequest(BackendRequest::Cpu);
    QSignalSpy done(&c, &ComputeController::computed);
    Project p =
        *Document::readProject(test::sourcePath(QStringLiteral("resources/examples/multihead-causal.attnscope.json")));
    c.request(p);
    QVERIFY(done.wait(10000));
    auto r = done.at(0).at(0).value<ComputedTracePtr>();
    const AttentionTrace &t = r->trace;
    const TraceRanges &ranges = r->ranges;
    QCOMPARE(int(ranges.maxAbsScore.size()), t.heads());
    QCOMPARE(int(ranges.maxWeight.size()), t.heads());
    MatrixF mean = MatrixF::Zero(t.weights[0].rows(), t.weights[0].cols());
    for (int h = 0; h < t.heads(); ++h) {
        double a = 0.0;
        for (Eigen::Index i = 0; i < t.scores[size_t(h)].size(); ++i)
            a = std::max(a, std::abs(double(t.scores[size_t(h)].data()[i])));
        QCOMPARE(ranges.maxAbsScore[size_t(h)], a);
        double w = 0.0; // over allowed cells only
        for (Eigen::Index i = 0; i < t.allowed.rows(); ++i)
            for (Eigen::Index j = 0; j < t.allowed.cols(); ++j)
                if (t.allowed(i, j))
                    w = std::max(w, double(t.weights[size_t(h)](i, j)));
        QCOMPARE(ranges.maxWeight[size_t(h)], w);
        mean += t.weights[size_t(h)];
    }
    mean /= float(t.heads());
    QVERIFY(ranges.meanWeights);
    QVERIFY(ranges.meanWeights->isApprox(mean));
}

QTEST_GUILESS_MAIN(TestCompute)
#include "tst_compute.moc"
