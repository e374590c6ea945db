// A whole GPT-2 and BERT forward with every layer's attention on the Vulkan backend (lavapipe
// in CI), against the same forward on the CPU (which tst_models checks against the reference);
// and every decoder family of tests/fixtures/decoders and the translation models of
// tests/fixtures/marian against their float64 references directly.

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"
#include "../common/TranslationFixtures.h"
#include "VulkanTestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/models/TransformerModel.h"
#include "core/models/TranslationModel.h"

#include <QObject>
#include <QTest>

#include <cmath>

using namespace attnscope;

class TestVulkanModel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        ATTNSCOPE_SKIP_WITHOUT_VULKAN();
        vk::resetValidationReport();
        VulkanBackendOptions options;
        options.validation = true;
        auto backend = VulkanBackend::create(options);
        QVERIFY2(backend, backend ? "" : backend.message().c_str());
        m_vulkan = std::move(*backend);
    }

    void cleanupTestCase()
    {
        m_vulkan.reset();
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

    void forwardMatchesTheCpu_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::newRow("gpt2") << "gpt2-f32";
        QTest::newRow("bert") << "bert-f16";
    }

    void forwardMatchesTheCpu()
    {
        QFETCH(QString, folder);
        const QString dir = test::sourcePath("tests/fixtures/models/" + folder);
        auto model = TransformerModel::load(dir.toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto input = model->encode("the cat sat on the log, and the dog sat on the mat");
        QVERIFY2(input, input ? "" : input.message().c_str());
        CpuBackend cpu;
        auto onCpu = model->forward(*input, cpu);
        auto onGpu = model->forward(*input, *m_vulkan);
        QVERIFY2(onCpu, onCpu ? "" : onCpu.message().c_str());
        QVERIFY2(onGpu, onGpu ? "" : onGpu.message().c_str());
        const ModelRun &c = **onCpu, &g = **onGpu;
        QCOMPARE(g.attentions.size(), c.attentions.size());
        for (std::size_t i = 0; i < c.attentions.size(); ++i)
            QVERIFY2(std::abs(g.attentions[i] - c.attentions[i]) <= 2e-5 + 1e-4 * std::abs(c.attentions[i]),
                     qPrintable(QStringLiteral("attentions[%1]: %2 on Vulkan, %3 on the CPU")
                                    .arg(i)
                                    .arg(g.attentions[i])
                                    .arg(c.attentions[i])));
        for (std::size_t l = 0; l < c.hiddenStates.size(); ++l) {
            const std::string diff =
                test::compareMatrix("hidden state", g.hiddenStates[l], c.hiddenStates[l], {1e-3, 1e-3});
            QVERIFY2(diff.empty(), diff.c_str());
        }
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

    void decoderForwardMatchesTheReference_data()
    {
        QTest::addColumn<QString>("folder");
        for (const char *name :
             {"llama3-f32", "smollm-bf16-sharded", "llama-f16-dynamic", "mistral-f16", "qwen2-bf16-yarn", "qwen3-f32",
              "gemma2-bf16", "gemma3text-f16", "gemma3-f32", "qwen2-f32-rope-params"})
            QTest::newRow(name) << QString(name);
    }

    // Attentions within 1e-4 and hidden states within 1e-3·(1 + |ref|) of the reference, with
    // every layer's attention (RoPE and its scaling, q/k norms, windows, soft-caps) on Vulkan.
    void decoderForwardMatchesTheReference()
    {
        QFETCH(QString, folder);
        const QString dir = test::sourcePath("tests/fixtures/decoders/" + folder);
        const test::ExpectedForward expected = test::readExpectedForward(dir);
        auto model = TransformerModel::load(dir.toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto run = model->forward(*model->input(expected.ids), *m_vulkan);
        QVERIFY2(run, run ? "" : run.message().c_str());
        const QString attention =
            test::compareValues("attentions", (*run)->attentions.data(), expected.attentions, 1e-4, 0);
        QVERIFY2(attention.isEmpty(), qPrintable(attention));
        std::vector<float> hidden;
        for (const MatrixF &h : (*run)->hiddenStates)
            hidden.insert(hidden.end(), h.data(), h.data() + h.size());
        const QString states = test::compareValues("hidden_states", hidden.data(), expected.hidden, 1e-3, 1e-3);
        QVERIFY2(states.isEmpty(), qPrintable(states));
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

    void translationMatchesTheReference_data() { test::addTranslationCaseRows(); }

    // A Marian folder's encoder, decoder and cross-attention on Vulkan, against the float64
    // reference (tests/fixtures/marian), and its greedy search giving the reference ids.
    void translationMatchesTheReference()
    {
        QFETCH(QString, folder);
        QFETCH(int, index);
        const test::TranslationCase c = test::readTranslationCases(folder)[std::size_t(index)];
        auto model = TranslationModel::load(test::translationFixture(folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto source = model->input(c.sourceIds, "the source");
        QVERIFY(source);
        auto run = model->forward(*source, *model->input(c.targetIds, "the target"), *m_vulkan);
        QVERIFY2(run, run ? "" : run.message().c_str());
        const QString diff = test::compareTranslationRun(**run, folder, c.name);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        if (!c.target) {
            auto ids = model->greedy(*source, *m_vulkan);
            QVERIFY2(ids, ids ? "" : ids.message().c_str());
            QCOMPARE(ids->ids, c.targetIds);
        }
        const std::string problems = test::validationProblems();
        QVERIFY2(problems.empty(), problems.c_str());
    }

private:
    std::unique_ptr<VulkanBackend> m_vulkan;
};

QTEST_GUILESS_MAIN(TestVulkanModel)
#include "tst_vulkan_model.moc"
