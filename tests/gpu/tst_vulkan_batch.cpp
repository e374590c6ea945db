// Batches and separate value inputs on Vulkan (lavapipe in CI): the tutorials' own PyTorch
// classes (tests/fixtures/tutorial) reproduced by every sequence computed on the GPU, in
// process and through `attnscope-cli compute --backend vulkan`.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "../common/TutorialFixtures.h"
#include "VulkanTestUtil.h"

#include "core/formats/BatchedProject.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/TraceExport.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

class TestVulkanBatch : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void everySequenceOnVulkan_data();
    void everySequenceOnVulkan();
    void cliComputeOnVulkan_data();
    void cliComputeOnVulkan();
};

void TestVulkanBatch::initTestCase()
{
    ATTNSCOPE_SKIP_WITHOUT_VULKAN();
}

void TestVulkanBatch::everySequenceOnVulkan_data()
{
    test::addTutorialFixtureRows();
}

void TestVulkanBatch::everySequenceOnVulkan()
{
    QFETCH(QString, folder);
    auto project = readProjectFile((folder + "/project.attnscope.json").toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    VulkanBackendOptions options;
    options.validation = true;
    vk::resetValidationReport();
    auto backend = VulkanBackend::create(options);
    QVERIFY2(backend.ok(), backend.ok() ? "" : backend.message().c_str());
    auto traces = computeSequences(**backend, *project);
    QVERIFY2(traces.ok(), traces.ok() ? "" : traces.message().c_str());
    QCOMPARE(int(traces->size()), BatchedProject(*project).sequenceCount());
    QTemporaryDir tmp;
    QVERIFY(writeBatchTraceNpy(*traces, tmp.path().toStdString()).ok());
    const std::string diff = test::checkTutorialFixture(folder, tmp.path());
    QVERIFY2(diff.empty(), diff.c_str());
    backend->reset();
    const std::string problems = test::validationProblems();
    QVERIFY2(problems.empty(), problems.c_str());
}

void TestVulkanBatch::cliComputeOnVulkan_data()
{
    test::addTutorialFixtureRows();
}

void TestVulkanBatch::cliComputeOnVulkan()
{
    QFETCH(QString, folder);
    QTemporaryDir tmp;
    const auto r =
        test::runCli({"compute", folder + "/project.attnscope.json", "--out", tmp.path(), "--backend", "vulkan"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("backend: vulkan"), qPrintable(r.out));
    const std::string diff = test::checkTutorialFixture(folder, tmp.path());
    QVERIFY2(diff.empty(), diff.c_str());
}

QTEST_GUILESS_MAIN(TestVulkanBatch)
#include "tst_vulkan_batch.moc"
