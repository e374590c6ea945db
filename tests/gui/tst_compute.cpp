// The ComputeController: results off the GUI thread, coalesced requests, superseded results
// dropped, errors reported. Runs the real CPU backend.

#include "app/gui/document/ComputeController.h"
#include "app/gui/document/Document.h"
#include "core/CpuBackend.h"
#include "core/RandomProblem.h"

#include "../common/TestUtil.h"

#include <QSignalSpy>
#include <QTest>

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
    // The first result was superseded while it ran; the second never ran.
    QCOMPARE(done.count(), 1);
    QCOMPARE(done.at(0).at(0).value<ComputedTracePtr>()->generation, last);
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

QTEST_GUILESS_MAIN(TestCompute)
#include "tst_compute.moc"
