// Backend choice and every fallback path that can be exercised in-process: device creation
// failure, device lost and out of memory during a compute (injected), the auto policy on a
// CPU-type device, device selection by index and name, and bad requests. The "no loader" and
// "no driver" paths need a fresh process and are in tst_vulkan_cli.

#include "../common/ProblemCases.h"
#include "../common/TestUtil.h"
#include "../common/VulkanFaults.h"
#include "VulkanTestUtil.h"

#include "app/engine/BackendChoice.h"
#include "core/attention/ReferenceAttention.h"

#include <QObject>
#include <QScopeGuard>
#include <QTest>

using namespace attnscope;
using attnscope::test::Case;
using attnscope::test::makeProblem;

class TestVulkanFallback : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();

    void explicitVulkanUsesVulkan();
    void autoPolicy();
    void creationFailure();
    void runtimeFailureFallsBackOnce_data();
    void runtimeFailureFallsBackOnce();
    void tooLargeProblemFallsBackForThatCallOnly_data();
    void tooLargeProblemFallsBackForThatCallOnly();
    void explicitVulkanReportsRuntimeFailure();
    void environmentInjectsNoFault();
    void invalidProblemDoesNotFallBack();
    void deviceSelection();
    void describeDevicesListsLimits();
    void deviceListingIsData();

private:
    BackendOptions validated() const
    {
        BackendOptions o;
        o.vulkan.validation = true;
        return o;
    }
    bool m_onlyCpuDevices = false;
};

namespace {

std::string verify(AttentionBackend &backend, const AttentionProblem &p)
{
    auto ref = referenceAttention(p);
    auto t = backend.compute(p);
    if (!t)
        return t.message();
    return test::compareTrace(*t, *ref, true);
}

AttentionProblem sample()
{
    Case c;
    c.tq = 5;
    c.causal = true;
    c.biases = true;
    return makeProblem(c);
}

} // namespace

void TestVulkanFallback::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
    auto devices = listVulkanDevices();
    QVERIFY(devices.ok());
    m_onlyCpuDevices = true;
    for (const auto &d : *devices)
        if (d.type != vk::DeviceType::Cpu && d.type != vk::DeviceType::Other)
            m_onlyCpuDevices = false;
    qunsetenv("ATTNSCOPE_VULKAN_DEVICE");
    vk::resetValidationReport();
}

void TestVulkanFallback::cleanup()
{
    qunsetenv("ATTNSCOPE_VULKAN_DEVICE");
    const std::string problems = test::validationProblems();
    vk::resetValidationReport();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkanFallback::explicitVulkanUsesVulkan()
{
    auto s = createBackend(BackendRequest::Vulkan, validated());
    QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
    QCOMPARE(s->backend->name(), std::string("vulkan"));
    QVERIFY(s->notice.empty());
    const std::string diff = verify(*s->backend, sample());
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanFallback::autoPolicy()
{
    auto s = createBackend(BackendRequest::Auto, validated());
    QVERIFY(s.ok());
    if (m_onlyCpuDevices) {
        // lavapipe is slower than Eigen: auto stays on the CPU and says why.
        QCOMPARE(s->backend->name(), std::string("cpu"));
        QVERIFY2(s->notice.find("slower than the Eigen engine") != std::string::npos, s->notice.c_str());
    } else {
        QCOMPARE(s->backend->name(), std::string("vulkan"));
        QVERIFY(s->notice.empty());
    }
    // Naming a device is asking for it, even a CPU one.
    BackendOptions named = validated();
    named.vulkanDevice = "0";
    auto n = createBackend(BackendRequest::Auto, named);
    QVERIFY(n.ok());
    QCOMPARE(n->backend->name(), std::string("vulkan"));
    QVERIFY(n->notice.empty());
    // So does the environment variable.
    qputenv("ATTNSCOPE_VULKAN_DEVICE", "0");
    auto e = createBackend(BackendRequest::Auto, validated());
    QVERIFY(e.ok());
    QCOMPARE(e->backend->name(), std::string("vulkan"));
}

void TestVulkanFallback::creationFailure()
{
    BackendOptions o = validated();
    o.vulkanDevice = "0";
    o.vulkan.fault = VulkanFault::CreateDevice;
    auto forced = createBackend(BackendRequest::Vulkan, o);
    QVERIFY(!forced.ok());
    QVERIFY2(forced.message().find("Vulkan backend unavailable") != std::string::npos, forced.message().c_str());
    QCOMPARE(forced.kind(), ErrorKind::Unsupported);
    QVERIFY2(forced.message().find("vkCreateDevice") != std::string::npos, forced.message().c_str());

    auto autoSel = createBackend(BackendRequest::Auto, o);
    QVERIFY(autoSel.ok());
    QCOMPARE(autoSel->backend->name(), std::string("cpu"));
    QVERIFY2(autoSel->notice.find("Vulkan failed to start") != std::string::npos, autoSel->notice.c_str());
    QVERIFY2(autoSel->notice.find("vkCreateDevice") != std::string::npos, autoSel->notice.c_str());
    const std::string diff = verify(*autoSel->backend, sample());
    QVERIFY2(diff.empty(), diff.c_str());
}

void TestVulkanFallback::runtimeFailureFallsBackOnce_data()
{
    QTest::addColumn<int>("fault");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<bool>("permanent");
    QTest::newRow("device lost") << int(VulkanFault::DeviceLost) << "VK_ERROR_DEVICE_LOST" << true;
    QTest::newRow("fence timeout") << int(VulkanFault::Timeout) << "VK_TIMEOUT" << true;
    // Out of memory is about this problem's size: the device stays in use (the injected
    // fault fails every compute, so every one of them falls back, each with its notice).
    QTest::newRow("out of memory") << int(VulkanFault::OutOfMemory) << "VK_ERROR_OUT_OF_DEVICE_MEMORY" << false;
}

void TestVulkanFallback::runtimeFailureFallsBackOnce()
{
    QFETCH(int, fault);
    QFETCH(QString, expected);
    QFETCH(bool, permanent);
    BackendOptions o = validated();
    o.vulkanDevice = "0";
    o.vulkan.fault = VulkanFault(fault);
    auto s = createBackend(BackendRequest::Auto, o);
    QVERIFY(s.ok());
    QCOMPARE(s->backend->name(), std::string("vulkan"));
    QVERIFY(takeBackendNotice(*s->backend).empty());

    // The compute that meets the failure already returns the CPU's correct result...
    const std::string diff = verify(*s->backend, sample());
    QVERIFY2(diff.empty(), diff.c_str());
    QCOMPARE(s->backend->name(), std::string(permanent ? "cpu" : "vulkan"));
    const ComputeRun ran = lastComputeRun(*s->backend);
    QCOMPARE(ran.backend, std::string("cpu"));
    QVERIFY(ran.fellBack);
    // ... and the user is told why, once.
    const std::string notice = takeBackendNotice(*s->backend);
    QVERIFY2(notice.find(expected.toStdString()) != std::string::npos, notice.c_str());
    QVERIFY2(notice.find(permanent ? "computing on the CPU from now on" : "computed on the CPU") != std::string::npos,
             notice.c_str());
    QVERIFY(takeBackendNotice(*s->backend).empty());
    const std::string again = verify(*s->backend, sample());
    QVERIFY2(again.empty(), again.c_str());
    QCOMPARE(takeBackendNotice(*s->backend).empty(), permanent);
    QCOMPARE(s->backend->name(), std::string(permanent ? "cpu" : "vulkan"));
}

void TestVulkanFallback::tooLargeProblemFallsBackForThatCallOnly_data()
{
    QTest::addColumn<qulonglong>("maxRange");
    QTest::addColumn<qulonglong>("maxAllocation");
    QTest::newRow("a row beyond maxStorageBufferRange") << 256ull << 0ull;
    QTest::newRow("a buffer beyond the allocation limit") << 0ull << 65536ull;
}

void TestVulkanFallback::tooLargeProblemFallsBackForThatCallOnly()
{
    // One oversized problem used to drop the GPU for the rest of the session.
    QFETCH(qulonglong, maxRange);
    QFETCH(qulonglong, maxAllocation);
    BackendOptions o = validated();
    o.vulkanDevice = "0";
    o.vulkan.maxStorageBufferRange = maxRange;
    o.vulkan.maxAllocationBytes = maxAllocation;
    auto s = createBackend(BackendRequest::Auto, o);
    QVERIFY(s.ok());
    auto *fallback = dynamic_cast<FallbackBackend *>(s->backend.get());
    QVERIFY(fallback);
    auto vulkan = [&] { return dynamic_cast<const VulkanBackend *>(fallback->primary()); };

    Case small;
    small.tq = 4;
    std::string diff = verify(*fallback, makeProblem(small));
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(vulkan());
    QCOMPARE(vulkan()->stats().computes, std::uint64_t(1));
    QCOMPARE(lastComputeRun(*fallback).backend, std::string("vulkan"));
    QVERIFY(!lastComputeRun(*fallback).fellBack);

    // Too large for this device: the CPU answers this one, and says so once.
    Case large;
    large.tq = 300;
    diff = verify(*fallback, makeProblem(large));
    QVERIFY2(diff.empty(), diff.c_str());
    QCOMPARE(lastComputeRun(*fallback).backend, std::string("cpu"));
    QVERIFY(lastComputeRun(*fallback).fellBack);
    const std::string notice = takeBackendNotice(*fallback);
    QVERIFY2(notice.find("computed on the CPU") != std::string::npos, notice.c_str());
    QVERIFY(takeBackendNotice(*fallback).empty());
    QCOMPARE(fallback->name(), std::string("vulkan"));
    QVERIFY(!fallback->fellBack());

    // The next problem that fits runs on the GPU again.
    diff = verify(*fallback, makeProblem(small, 7));
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(vulkan());
    QCOMPARE(vulkan()->stats().computes, std::uint64_t(3));
    QCOMPARE(vulkan()->stats().submissions, std::uint64_t(2));
    QCOMPARE(lastComputeRun(*fallback).backend, std::string("vulkan"));
    QVERIFY(!lastComputeRun(*fallback).fellBack);
    QVERIFY(takeBackendNotice(*fallback).empty());
}

void TestVulkanFallback::explicitVulkanReportsRuntimeFailure()
{
    VulkanBackendOptions o;
    o.validation = true;
    o.fault = VulkanFault::DeviceLost;
    auto backend = VulkanBackend::create(o);
    QVERIFY2(backend.ok(), backend.ok() ? "" : backend.message().c_str());
    auto first = (*backend)->compute(sample());
    QVERIFY(!first.ok());
    QVERIFY2(first.message().find("VK_ERROR_DEVICE_LOST") != std::string::npos, first.message().c_str());
    QCOMPARE(first.kind(), ErrorKind::DeviceLost);
    QVERIFY((*backend)->lost());
    auto second = (*backend)->compute(sample());
    QVERIFY(!second.ok());
    QVERIFY2(second.message().find("lost earlier") != std::string::npos, second.message().c_str());
    QCOMPARE(second.kind(), ErrorKind::DeviceLost);

    // Backend > Vulkan chosen explicitly: the loss comes back as DeviceLost, naming the device.
    BackendOptions lostOpts = validated();
    lostOpts.vulkan.fault = VulkanFault::DeviceLost;
    auto explicitLost = createBackend(BackendRequest::Vulkan, lostOpts);
    QVERIFY(explicitLost.ok());
    auto lost = explicitLost->backend->compute(sample());
    QVERIFY(!lost.ok());
    QCOMPARE(lost.kind(), ErrorKind::DeviceLost);
    QVERIFY2(lost.message().find(explicitLost->backend->deviceName()) != std::string::npos, lost.message().c_str());

    // Through createBackend, an explicit request gets the error too, unless it opts in.
    BackendOptions opts = validated();
    opts.vulkan.fault = VulkanFault::OutOfMemory;
    auto forced = createBackend(BackendRequest::Vulkan, opts);
    QVERIFY(forced.ok());
    auto t = forced->backend->compute(sample());
    QVERIFY(!t.ok());
    QVERIFY2(t.message().find("VK_ERROR_OUT_OF_DEVICE_MEMORY") != std::string::npos, t.message().c_str());
    QCOMPARE(t.kind(), ErrorKind::OutOfMemory);
    opts.runtimeFallback = true;
    auto optIn = createBackend(BackendRequest::Vulkan, opts);
    QVERIFY(optIn.ok());
    const std::string diff = verify(*optIn->backend, sample());
    QVERIFY2(diff.empty(), diff.c_str());
    QVERIFY(!takeBackendNotice(*optIn->backend).empty());
}

// Issue 21: ATTNSCOPE_VULKAN_FAULT injected faults into the shipped binary from any user's
// environment. A fault now comes only from VulkanBackendOptions::fault; the names are the test
// drivers' (tests/common/VulkanFaults.h).
void TestVulkanFallback::environmentInjectsNoFault()
{
    VulkanBackendOptions options;
    options.validation = true;
    qputenv("ATTNSCOPE_VULKAN_FAULT", "oom");
    const auto unset = qScopeGuard([] { qunsetenv("ATTNSCOPE_VULKAN_FAULT"); });
    auto backend = VulkanBackend::create(options);
    QVERIFY(backend.ok());
    auto t = (*backend)->compute(sample());
    QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());

    options.fault = VulkanFault::OutOfMemory;
    auto faulty = VulkanBackend::create(options);
    QVERIFY(faulty.ok());
    auto f = (*faulty)->compute(sample());
    QVERIFY(!f.ok());
    QVERIFY2(f.message().find("VK_ERROR_OUT_OF_DEVICE_MEMORY") != std::string::npos, f.message().c_str());

    auto bad = test::parseVulkanFault("sometimes");
    QVERIFY(!bad.ok());
    QCOMPARE(QString::fromStdString(bad.message()),
             QStringLiteral("expected none, create, device-lost, oom, timeout, partial-instance or partial-device, "
                            "found \"sometimes\""));
    QCOMPARE(bad.kind(), ErrorKind::InvalidInput);
}

void TestVulkanFallback::invalidProblemDoesNotFallBack()
{
    BackendOptions o = validated();
    o.vulkanDevice = "0";
    auto s = createBackend(BackendRequest::Auto, o);
    QVERIFY(s.ok());
    AttentionProblem p = sample();
    p.spec.heads = 0;
    auto t = s->backend->compute(p);
    QVERIFY(!t.ok());
    QCOMPARE(QString::fromStdString(t.message()),
             QStringLiteral("heads: expected a whole number of at least 1, found 0"));
    QCOMPARE(s->backend->name(), std::string("vulkan"));
    QVERIFY(takeBackendNotice(*s->backend).empty());
}

void TestVulkanFallback::deviceSelection()
{
    auto devices = listVulkanDevices();
    QVERIFY(devices.ok());
    const vk::DeviceInfo &first = devices->front();
    // By a name substring, case-insensitively.
    BackendOptions o = validated();
    o.vulkanDevice = QString::fromStdString(first.name).left(4).toUpper().toStdString();
    auto byName = createBackend(BackendRequest::Vulkan, o);
    QVERIFY2(byName.ok(), byName.ok() ? "" : byName.message().c_str());
    QCOMPARE(byName->backend->deviceName(), first.label());
    // Unknown names and indices are refused with the list of devices.
    o.vulkanDevice = "no-such-gpu";
    auto none = createBackend(BackendRequest::Vulkan, o);
    QVERIFY(!none.ok());
    QVERIFY2(none.message().find("no device name contains it") != std::string::npos, none.message().c_str());
    QVERIFY2(none.message().find(first.label()) != std::string::npos, none.message().c_str());
    o.vulkanDevice = "99";
    auto index = createBackend(BackendRequest::Vulkan, o);
    QVERIFY(!index.ok());
    QVERIFY2(index.message().find("no device with that index") != std::string::npos, index.message().c_str());
    // In auto mode a bad name falls back to the CPU, saying why.
    o.vulkanDevice = "no-such-gpu";
    auto autoSel = createBackend(BackendRequest::Auto, o);
    QVERIFY(autoSel.ok());
    QCOMPARE(autoSel->backend->name(), std::string("cpu"));
    QVERIFY2(autoSel->notice.find("no-such-gpu") != std::string::npos, autoSel->notice.c_str());
}

void TestVulkanFallback::describeDevicesListsLimits()
{
    const auto lines = formatDeviceListing(listComputeDevices());
    QVERIFY(lines.size() >= 3);
    QVERIFY(lines.front().rfind("cpu: ", 0) == 0);
    QVERIFY2(lines[1].rfind("vulkan 0: ", 0) == 0, lines[1].c_str());
    for (const char *needle : {"maxStorageBufferRange", "maxComputeWorkGroupCount", "memory heaps"})
        QVERIFY2(lines[1].find(needle) != std::string::npos, lines[1].c_str());
    QVERIFY(lines.back().rfind("auto: ", 0) == 0);
}

void TestVulkanFallback::deviceListingIsData()
{
    // The GUI's device menu used to parse "vulkan N: name, ..." back out of these lines and
    // cut the name at its first comma ("llvmpipe (LLVM 15.0.6").
    auto vulkanDevices = listVulkanDevices();
    QVERIFY(vulkanDevices.ok());
    const DeviceListing listing = listComputeDevices();
    QVERIFY(listing.vulkanMissing.empty());
    QCOMPARE(listing.devices.size(), vulkanDevices->size() + 1);
    const DeviceDescription &cpu = listing.devices.front();
    QCOMPARE(cpu.kind, BackendRequest::Cpu);
    QCOMPARE(cpu.index, -1);
    QVERIFY(cpu.isCpuType);
    QVERIFY(!cpu.name.empty());
    for (size_t i = 0; i < vulkanDevices->size(); ++i) {
        const vk::DeviceInfo &info = (*vulkanDevices)[i];
        const DeviceDescription &d = listing.devices[i + 1];
        QCOMPARE(d.kind, BackendRequest::Vulkan);
        QCOMPARE(d.index, info.index);
        QCOMPARE(d.name, info.label()); // whole, commas and all
        QCOMPARE(d.details, info.describe());
        QCOMPARE(d.isCpuType, info.type == vk::DeviceType::Cpu);
    }
    if (m_onlyCpuDevices) {
        QCOMPARE(listing.autoDevice, -1);
        QVERIFY2(listing.autoReason.find("slower than the Eigen engine") != std::string::npos,
                 listing.autoReason.c_str());
    } else {
        QVERIFY(listing.autoDevice >= 0);
    }

    // The text of `attnscope-cli devices` is made from the data, line for line.
    const auto lines = formatDeviceListing(listing);
    QCOMPARE(lines.size(), listing.devices.size() + 1);
    QCOMPARE(lines.front(), "cpu: " + cpu.details);
    for (size_t i = 1; i < listing.devices.size(); ++i)
        QCOMPARE(lines[i], "vulkan " + std::to_string(listing.devices[i].index) + ": " + listing.devices[i].details);
    QVERIFY(lines.back().rfind(listing.autoDevice >= 0 ? "auto: vulkan " : "auto: cpu (", 0) == 0);
}

QTEST_GUILESS_MAIN(TestVulkanFallback)
#include "tst_vulkan_fallback.moc"
