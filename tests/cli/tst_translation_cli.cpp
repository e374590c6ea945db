// attnscope-cli model MODEL_DIR --text SOURCE [--target TARGET] --out DIR on a translation model
// folder (design.md, "encoder–decoder translation models"): tokens.json and the three attention
// tensors against the float64 reference of tests/fixtures/marian, teacher-forced and greedy,
// on the CPU and on Vulkan; and its refusals.

#include "../common/CliRunner.h"
#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"
#include "../common/TranslationFixtures.h"
#include "../gpu/VulkanTestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

QJsonArray jsonIds(const std::vector<std::int32_t> &ids)
{
    QJsonArray a;
    for (std::int32_t id : ids)
        a.append(id);
    return a;
}

} // namespace

class TestTranslationCli : public QObject
{
    Q_OBJECT

private slots:
    void writesTheReferenceTensors_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("backend");
        for (const char *folder : test::kTranslationFolders) {
            const auto cases = test::readTranslationCases(folder);
            for (std::size_t i = 0; i < cases.size(); ++i)
                for (const char *backend : {"cpu", "vulkan"})
                    QTest::newRow(qPrintable(QString("%1/%2/%3").arg(folder, cases[i].name, backend)))
                        << QString(folder) << int(i) << QString(backend);
        }
    }

    // --text and --target tokenized by the folder's own .spm files; without --target the target
    // is the greedy translation. Each .npy equals the reference's (attentions within 1e-4).
    void writesTheReferenceTensors()
    {
        QFETCH(QString, folder);
        QFETCH(int, index);
        QFETCH(QString, backend);
        if (backend == "vulkan")
            ATTNSCOPE_SKIP_WITHOUT_VULKAN();
        const test::TranslationCase c = test::readTranslationCases(folder)[std::size_t(index)];
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run");
        QStringList args = {"model", test::translationFixture(folder), "--text", c.source, "--out", out, "--backend",
                            backend};
        if (c.target)
            args << "--target" << *c.target;
        const auto r = test::runCli(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("backend: " + backend), qPrintable(r.out));
        QVERIFY2(r.out.contains(c.target ? "target: " : "translation: "), qPrintable(r.out));
        const QJsonObject tokens = QJsonDocument::fromJson(test::readAll(out + "/tokens.json")).object();
        QCOMPARE(tokens.keys(), (QStringList{"source", "target"}));
        QCOMPARE(tokens["source"].toObject()["ids"].toArray(), jsonIds(c.sourceIds));
        QCOMPARE(tokens["target"].toObject()["ids"].toArray(), jsonIds(c.targetIds));
        QCOMPARE(tokens["target"].toObject()["tokens"].toArray().size(), qsizetype(c.targetTokens.size()));
        for (const char *name : {"encoder_attentions", "decoder_attentions", "cross_attentions"}) {
            auto got = readNpyFile((out + "/" + name + ".npy").toStdString());
            auto want =
                readNpyFile((test::translationFixture(folder) + "/" + c.name + "." + name + ".npy").toStdString());
            QVERIFY2(got && want, name);
            QCOMPARE(got->shape, want->shape);
            std::vector<float> values(got->data.begin(), got->data.end());
            const QString diff = test::compareValues(name, values.data(), *want, 1e-4, 0);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
        }
        QCOMPARE(QDir(out).entryList(QDir::Files | QDir::Hidden).size(), 4); // nothing else, no staging left
    }

    // --verbose on Vulkan with --target (no greedy search): the forward engine runs both stacks
    // in batches of four layers and reads back exactly the three attention tensors written, the
    // hidden states of both stacks and the decoder's cross inputs.
    void verboseReportsTheEnginesTransfers()
    {
        ATTNSCOPE_SKIP_WITHOUT_VULKAN();
        const QString folder = "marian-f32";
        const auto cases = test::readTranslationCases(folder);
        const auto withTarget = std::find_if(cases.begin(), cases.end(), [](const auto &c) { return c.target; });
        QVERIFY(withTarget != cases.end());
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run");
        const auto r =
            test::runCli({"model", test::translationFixture(folder), "--text", withTarget->source, "--target",
                          *withTarget->target, "--out", out, "--verbose", "--backend", "vulkan"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n').filter(QStringLiteral("vulkan: submissions "));
        QVERIFY2(lines.size() == 1, qPrintable(r.out));
        const QStringList words = lines.front().split(' ');
        QVERIFY2(words.size() == 10, qPrintable(lines.front()));
        const qulonglong submissions = words[2].chopped(1).toULongLong(), readBack = words[8].toULongLong();
        const QJsonObject config =
            QJsonDocument::fromJson(test::readAll(test::translationFixture(folder) + "/config.json")).object();
        const qulonglong le = qulonglong(config["encoder_layers"].toInt()),
                         ld = qulonglong(config["decoder_layers"].toInt()), d = qulonglong(config["d_model"].toInt());
        const qulonglong batches = (le + ld + 3) / 4;
        QVERIFY2(submissions >= batches && submissions <= batches + 1, qPrintable(lines.front()));
        qulonglong maps = 0;
        for (const char *name : {"encoder_attentions", "decoder_attentions", "cross_attentions"}) {
            auto written = readNpyFile((out + "/" + name + ".npy").toStdString());
            QVERIFY2(written, name);
            maps += qulonglong(written->data.size());
        }
        const qulonglong s = qulonglong(withTarget->sourceIds.size()), t = qulonglong(withTarget->targetIds.size());
        QCOMPARE(readBack, (maps + (le + 1) * s * d + (ld + 1) * t * d + ld * t * d) * 4);
    }

    void refusals_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString marian = test::translationFixture("marian-f32");
        const QString gpt2 = test::sourcePath("tests/fixtures/models/gpt2-f32");
        QTest::newRow("ids") << QStringList{"model", marian, "--ids", "3,4"} << 2
                             << "a translation model reads --text SOURCE";
        QTest::newRow("pool") << QStringList{"model", marian, "--text", "a", "--pool", "4"} << 2
                              << "--pool is not available for a translation model";
        QTest::newRow("target on gpt2") << QStringList{"model", gpt2, "--text", "a", "--target", "b"} << 2
                                        << "--target is for translation models";
        QTest::newRow("source too long") << QStringList{"model", marian, "--text", QString("cat ").repeated(70)} << 1
                                         << "--text: the source: 71 tokens; this model takes at most 64";
        QTest::newRow("target too long") << QStringList{"model",   marian,     "--text",
                                                        "the cat", "--target", QString("猫 ").repeated(70)}
                                         << 1 << "--target: the target: ";
    }

    void refusals()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir tmp;
        const QString out = tmp.filePath("run");
        const auto r = test::runCli(args << "--out" << out);
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(!QFileInfo::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestTranslationCli)
#include "tst_translation_cli.moc"
