// How the Vulkan backend fails: every error carries the kind callers branch on (device lost,
// out of memory, too large, unsupported, invalid input); a fence wait that times out frees
// nothing the GPU may still use (the validation layer watches every destroy); function
// tables left half-loaded by a broken loader or driver are torn down without calling a null
// pointer. Faults are injected through VulkanBackendOptions; the Vulkan underneath is real.

#include "../common/BackendChecks.h"
#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"
#include "VulkanTestUtil.h"

#include <QObject>
#include <QTest>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

Q_DECLARE_METATYPE(attnscope::ErrorKind)

class TestVulkanErrors : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();

    void errorKindIsTyped_data();
    void errorKindIsTyped();
    void fenceTimeoutFreesNothingInUse();
    void halfLoadedFunctionTablesDoNotCrash_data();
    void halfLoadedFunctionTablesDoNotCrash();
};

namespace {

Case smallCase()
{
    Case c;
    c.tq = 5;
    c.causal = true;
    c.biases = true;
    return c;
}

// Scores and weights of 300 x 300 keys: 352 KiB each, a softmax row of 1200 bytes.
Case largeCase()
{
    Case c;
    c.tq = 300;
    c.causal = true;
    return c;
}

} // namespace

void TestVulkanErrors::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    vk::resetValidationReport();
}

void TestVulkanErrors::cleanup()
{
    const std::string problems = test::validationProblems();
    vk::resetValidationReport();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkanErrors::errorKindIsTyped_data()
{
    QTest::addColumn<int>("fault");
    QTest::addColumn<qulonglong>("maxRange");
    QTest::addColumn<qulonglong>("maxAllocation");
    QTest::addColumn<bool>("large");
    QTest::addColumn<bool>("invalid");
    QTest::addColumn<ErrorKind>("kind");
    QTest::addColumn<QString>("mentions");
    // Branching on these kinds replaces searching the message for "VK_ERROR_DEVICE_LOST".
    QTest::newRow("device lost") << int(VulkanFault::DeviceLost) << 0ull << 0ull << false << false
                                 << ErrorKind::DeviceLost << "VK_ERROR_DEVICE_LOST";
    QTest::newRow("fence timeout") << int(VulkanFault::Timeout) << 0ull << 0ull << false << false
                                   << ErrorKind::DeviceLost << "VK_TIMEOUT";
    QTest::newRow("out of device memory") << int(VulkanFault::OutOfMemory) << 0ull << 0ull << false << false
                                          << ErrorKind::OutOfMemory << "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    QTest::newRow("row beyond maxStorageBufferRange")
        << int(VulkanFault::None) << 256ull << 0ull << true << false << ErrorKind::TooLarge << "maxStorageBufferRange";
    QTest::newRow("buffer beyond the allocation limit")
        << int(VulkanFault::None) << 0ull << 65536ull << true << false << ErrorKind::TooLarge << "in one allocation";
    QTest::newRow("invalid problem") << int(VulkanFault::None) << 0ull << 0ull << false << true
                                     << ErrorKind::InvalidInput << "weights.k";
}

void TestVulkanErrors::errorKindIsTyped()
{
    QFETCH(int, fault);
    QFETCH(qulonglong, maxRange);
    QFETCH(qulonglong, maxAllocation);
    QFETCH(bool, large);
    QFETCH(bool, invalid);
    QFETCH(ErrorKind, kind);
    QFETCH(QString, mentions);
    VulkanBackendOptions o;
    o.validation = true;
    o.fault = VulkanFault(fault);
    o.maxStorageBufferRange = maxRange;
    o.maxAllocationBytes = maxAllocation;
    auto backend = VulkanBackend::create(o);
    QVERIFY2(backend.ok(), backend.ok() ? "" : backend.message().c_str());
    VulkanBackend &b = **backend;

    AttentionProblem p = makeProblem(large ? largeCase() : smallCase());
    if (invalid)
        p.weights.k.resize(p.weights.k.rows(), p.weights.k.cols() - 1);
    auto t = b.compute(p);
    QVERIFY(!t.ok());
    QCOMPARE(t.kind(), kind);
    QVERIFY2(t.message().find(mentions.toStdString()) != std::string::npos, t.message().c_str());
    // What a user meets carries a code, so the application shows it translated.
    if (kind != ErrorKind::InvalidInput)
        QVERIFY2(!t.error().code.empty(), t.message().c_str());

    const bool lost = kind == ErrorKind::DeviceLost;
    QCOMPARE(b.lost(), lost);
    if (lost) {
        // A lost device stays lost, and says so with the same kind.
        auto again = b.compute(makeProblem(smallCase()));
        QVERIFY(!again.ok());
        QCOMPARE(again.kind(), ErrorKind::DeviceLost);
        QVERIFY2(again.message().find("lost earlier") != std::string::npos, again.message().c_str());
        QCOMPARE(again.error().code, std::string("vulkan.lostEarlier"));
    } else if (VulkanFault(fault) == VulkanFault::None) {
        // A refusal is no device failure: the next problem that fits runs on the GPU.
        const std::string diff = test::checkAgainstReference(b, makeProblem(smallCase()), true);
        QVERIFY2(diff.empty(), diff.c_str());
    }
}

void TestVulkanErrors::fenceTimeoutFreesNothingInUse()
{
    // The submission is still pending when the wait gives up. Freeing its buffers, descriptor
    // sets or command pool then (the old behaviour) is a use-after-free on a real GPU, which
    // the validation layer reports as "in use by VkCommandBuffer" (checked in cleanup()).
    VulkanBackendOptions o;
    o.validation = true;
    o.fault = VulkanFault::Timeout;
    auto backend = VulkanBackend::create(o);
    QVERIFY2(backend.ok(), backend.ok() ? "" : backend.message().c_str());
    Case c = largeCase();
    c.heads = 4;
    auto t = (*backend)->compute(makeProblem(c));
    QVERIFY(!t.ok());
    QCOMPARE(t.kind(), ErrorKind::DeviceLost);
    QVERIFY((*backend)->lost());
    std::string problems = test::validationProblems();
    QVERIFY2(problems.empty(), problems.c_str());
    backend->reset(); // waits for the device before destroying anything
}

void TestVulkanErrors::halfLoadedFunctionTablesDoNotCrash_data()
{
    QTest::addColumn<int>("fault");
    QTest::addColumn<QString>("lacks");
    QTest::newRow("instance table empty") << int(VulkanFault::PartialInstance) << "lacks vkDestroyInstance";
    QTest::newRow("device table without vkDeviceWaitIdle")
        << int(VulkanFault::PartialDevice) << "lacks vkDeviceWaitIdle";
}

void TestVulkanErrors::halfLoadedFunctionTablesDoNotCrash()
{
    QFETCH(int, fault);
    QFETCH(QString, lacks);
    VulkanBackendOptions o;
    o.validation = true;
    o.fault = VulkanFault(fault);
    // The objects created before the table stopped loading are destroyed on the way out;
    // the old destructors called the null pointers and crashed here.
    auto backend = VulkanBackend::create(o);
    QVERIFY(!backend.ok());
    QCOMPARE(backend.kind(), ErrorKind::Unsupported);
    QVERIFY2(backend.message().find(lacks.toStdString()) != std::string::npos, backend.message().c_str());
}

QTEST_GUILESS_MAIN(TestVulkanErrors)
#include "tst_vulkan_errors.moc"
