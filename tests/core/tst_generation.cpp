// Generation with a key/value cache (design.md, "Contract: generation"): the cache's rows against
// a full forward over the final sequence at every step (Llama, Qwen3, Gemma 2, GPT-2, Mistral's
// sliding window), greedy decoding against a float64 reference continuation
// (tests/fixtures/make_generation_fixtures.py), eos, seeded sampling, the settings refused.

#include "../common/ModelFixtures.h"
#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"
#include "core/models/Generation.h"
#include "core/models/TransformerModel.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cmath>

using namespace attnscope;

namespace {

QString fixture(const QString &relative)
{
    return test::sourcePath(QStringLiteral("tests/fixtures/") + relative);
}

QJsonObject expectedGeneration(const QString &name)
{
    return QJsonDocument::fromJson(test::readAll(fixture("generation/" + name + "/expected.json"))).object();
}

std::vector<std::int32_t> idsOf(const QJsonArray &array)
{
    std::vector<std::int32_t> ids;
    for (const QJsonValue &v : array)
        ids.push_back(std::int32_t(v.toInt()));
    return ids;
}

Encoding promptOf(const TransformerModel &model, const QJsonObject &expected)
{
    auto input = model.input(idsOf(expected["prompt"].toArray()));
    return input ? *input : Encoding();
}

} // namespace

class TestGeneration : public QObject
{
    Q_OBJECT

private slots:
    void cacheRowsEqualForward_data()
    {
        QTest::addColumn<QString>("folder");
        for (const char *f : {"decoders/llama3-f32", "decoders/qwen3-f32", "decoders/gemma2-bf16",
                              "decoders/mistral-f16", "decoders/gemma3-f32", "models/gpt2-f32"})
            QTest::newRow(f) << QString::fromUtf8(f);
    }

    // A prompt of 4 ids, then one id per call: every row the cache gives equals that row of one
    // forward over all the ids (zero beyond its keys), and so do the logits.
    void cacheRowsEqualForward()
    {
        QFETCH(QString, folder);
        auto model = TransformerModel::load(fixture(folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        const QJsonObject expected =
            QJsonDocument::fromJson(test::readAll(fixture(folder + "/expected.json"))).object();
        std::vector<std::int32_t> ids = idsOf(expected["ids"].toArray());
        QVERIFY(ids.size() >= 8);
        ids.resize(std::min<std::size_t>(ids.size(), 12));
        auto cache = DecoderCache::start(*model);
        QVERIFY2(cache, cache ? "" : cache.message().c_str());
        std::vector<CacheRows> steps;
        auto first = cache->append({ids.begin(), ids.begin() + 4});
        QVERIFY2(first, first ? "" : first.message().c_str());
        steps.push_back(std::move(*first));
        for (std::size_t i = 4; i < ids.size(); ++i) {
            auto next = cache->append({ids[i]});
            QVERIFY2(next, next ? "" : next.message().c_str());
            steps.push_back(std::move(*next));
        }
        QCOMPARE(cache->length(), std::int64_t(ids.size()));

        CpuBackend cpu;
        auto input = model->input(ids);
        QVERIFY(input);
        auto run = model->forward(*input, cpu);
        QVERIFY2(run, run ? "" : run.message().c_str());
        auto logits = model->logits((*run)->hiddenStates.back());
        QVERIFY(logits);
        const int heads = model->config().heads;
        const std::int64_t t = std::int64_t(ids.size());
        for (const CacheRows &step : steps) {
            const std::int64_t n = step.logits.rows();
            for (int l = 0; l < model->config().layers; ++l)
                for (int h = 0; h < heads; ++h) {
                    const MatrixF &rows = step.attention(l, h, heads);
                    QCOMPARE(rows.rows(), n);
                    QCOMPARE(rows.cols(), step.first + n);
                    const auto full = (*run)->attention(l, h);
                    for (std::int64_t i = 0; i < n; ++i) {
                        const std::int64_t p = step.first + i;
                        for (std::int64_t j = 0; j < t; ++j) {
                            const float got = j < rows.cols() ? rows(i, j) : 0.0f;
                            if (std::abs(got - full(p, j)) > 1e-5f)
                                QFAIL(qPrintable(QStringLiteral("layer %1 head %2 row %3 key %4: %5, forward %6")
                                                     .arg(l)
                                                     .arg(h)
                                                     .arg(p)
                                                     .arg(j)
                                                     .arg(got)
                                                     .arg(full(p, j))));
                        }
                    }
                }
            for (std::int64_t i = 0; i < n; ++i) {
                const float diff = (step.logits.row(i) - logits->row(step.first + i)).cwiseAbs().maxCoeff();
                if (diff > 1e-4f)
                    QFAIL(qPrintable(QStringLiteral("logits of row %1 differ by %2").arg(step.first + i).arg(diff)));
            }
        }
    }

    void lastRowLogits_data()
    {
        QTest::addColumn<QString>("folder");
        for (const char *f : {"decoders/qwen3-f32", "decoders/gemma2-bf16", "decoders/mistral-f16", "models/gpt2-f32"})
            QTest::newRow(f) << QString::fromUtf8(f);
    }

    // CacheLogits::LastRow (what the generator asks for) gives one row of logits: the last row of
    // what AllRows gives, for a prompt of 11 (its logits from the many-row products) and for one
    // more token; the attention rows are those of every new token either way.
    void lastRowLogits()
    {
        QFETCH(QString, folder);
        auto model = TransformerModel::load(fixture(folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        const QJsonObject expected =
            QJsonDocument::fromJson(test::readAll(fixture(folder + "/expected.json"))).object();
        std::vector<std::int32_t> ids = idsOf(expected["ids"].toArray());
        QVERIFY(ids.size() >= 12);
        ids.resize(12);
        auto all = DecoderCache::start(*model), last = DecoderCache::start(*model);
        QVERIFY(all && last);
        const std::vector<std::vector<std::int32_t>> calls = {{ids.begin(), ids.begin() + 11}, {ids[11]}};
        for (const std::vector<std::int32_t> &call : calls) {
            auto a = all->append(call, CacheLogits::AllRows);
            auto b = last->append(call, CacheLogits::LastRow);
            QVERIFY2(a, a ? "" : a.message().c_str());
            QVERIFY2(b, b ? "" : b.message().c_str());
            QCOMPARE(a->logits.rows(), Eigen::Index(call.size()));
            QCOMPARE(b->logits.rows(), Eigen::Index(1));
            QCOMPARE(b->logits.cols(), a->logits.cols());
            QCOMPARE(b->attentions.size(), a->attentions.size());
            QCOMPARE(b->attentions.front().rows(), Eigen::Index(call.size()));
            const float diff = (b->logits.row(0) - a->logits.row(a->logits.rows() - 1)).cwiseAbs().maxCoeff();
            QVERIFY2(diff <= 1e-4f, qPrintable(QStringLiteral("last row's logits differ by %1").arg(diff)));
        }
    }

    void greedyEqualsReference_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *f : {"llama3-f32", "qwen3-f32", "gemma2-bf16"})
            QTest::newRow(f) << QString::fromUtf8(f);
    }

    // Ids, the chosen tokens' probabilities and the 10 candidates of each step within 1e-4 of
    // the float64 reference; the final sequence's attentions equal its forward.
    void greedyEqualsReference()
    {
        QFETCH(QString, name);
        const QJsonObject expected = expectedGeneration(name);
        const std::string folder = fixture(expected["folder"].toString()).toStdString();
        auto model = TransformerModel::load(folder);
        QVERIFY2(model, model ? "" : model.message().c_str());
        auto eos = readEosIds(folder);
        QVERIFY2(eos, eos ? "" : eos.message().c_str());
        GenerationSettings settings;
        settings.maxNewTokens = 8;
        settings.eosIds = *eos;
        int called = 0;
        auto g =
            generate(*model, promptOf(*model, expected), settings, nullptr, [&](const GenerationStep &) { ++called; });
        QVERIFY2(g, g ? "" : g.message().c_str());
        QCOMPARE(g->ids, idsOf(expected["ids"].toArray()));
        QCOMPARE(g->promptLength, std::int64_t(expected["prompt"].toArray().size()));
        const QJsonArray steps = expected["steps"].toArray();
        QCOMPARE(g->steps.size(), std::size_t(steps.size()));
        QCOMPARE(called, int(steps.size()));
        for (int s = 0; s < steps.size(); ++s) {
            const QJsonObject e = steps[s].toObject();
            const GenerationStep &got = g->steps[std::size_t(s)];
            QCOMPARE(got.id, e["id"].toInt());
            QVERIFY2(std::abs(got.p - e["p"].toDouble()) < 1e-4,
                     qPrintable(QString("step %1: p %2").arg(s).arg(got.p)));
            const QJsonArray candidates = e["candidates"].toArray();
            QCOMPARE(got.candidates.size(), std::size_t(10));
            for (int r = 0; r < 10; ++r) {
                const QJsonArray c = candidates[r].toArray();
                const double p = c[1].toDouble();
                QVERIFY2(std::abs(got.candidates[std::size_t(r)].p - p) < 1e-4,
                         qPrintable(QString("step %1 rank %2: p %3, expected %4")
                                        .arg(s)
                                        .arg(r)
                                        .arg(got.candidates[std::size_t(r)].p)
                                        .arg(p)));
                // The id where the reference's neighbours are clearly apart (float32 may swap
                // candidates whose probabilities agree to 1e-6).
                const double before = r > 0 ? candidates[r - 1].toArray()[1].toDouble() : 2.0;
                const double after = r < 9 ? candidates[r + 1].toArray()[1].toDouble() : -1.0;
                if (before - p > 1e-5 && p - after > 1e-5)
                    QCOMPARE(got.candidates[std::size_t(r)].id, c[0].toInt());
            }
        }
        CpuBackend cpu;
        auto input = model->input(g->ids);
        QVERIFY(input);
        auto run = model->forward(*input, cpu);
        QVERIFY2(run, run ? "" : run.message().c_str());
        auto reference = readNpyFile(fixture("generation/" + name + "/expected_attentions.npy").toStdString());
        QVERIFY2(reference, reference ? "" : reference.message().c_str());
        QCOMPARE(std::int64_t((*run)->attentions.size()), reference->size());
        const QString diff = test::compareValues("attentions", (*run)->attentions.data(), *reference, 1e-4, 0);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    // An eos the reference generates at step 4 stops there, kept as the last id.
    void stopsAtEos()
    {
        const QJsonObject expected = expectedGeneration("llama3-f32");
        auto model = TransformerModel::load(fixture(expected["folder"].toString()).toStdString());
        QVERIFY(model);
        const std::vector<std::int32_t> ids = idsOf(expected["ids"].toArray());
        const std::size_t prompt = std::size_t(expected["prompt"].toArray().size());
        const std::int32_t eos = ids[prompt + 3];
        QVERIFY(std::find(ids.begin() + std::ptrdiff_t(prompt), ids.begin() + std::ptrdiff_t(prompt) + 3, eos) ==
                ids.begin() + std::ptrdiff_t(prompt) + 3);
        GenerationSettings settings;
        settings.maxNewTokens = 8;
        settings.eosIds = {9999, eos};
        auto g = generate(*model, promptOf(*model, expected), settings);
        QVERIFY2(g, g ? "" : g.message().c_str());
        QCOMPARE(g->steps.size(), std::size_t(4));
        QCOMPARE(g->ids.back(), eos);
        QVERIFY(g->stoppedAtEos);
        // Without it, all 8.
        settings.eosIds.clear();
        auto all = generate(*model, promptOf(*model, expected), settings);
        QVERIFY(all);
        QCOMPARE(all->steps.size(), std::size_t(8));
        QVERIFY(!all->stoppedAtEos);
    }

    void sampling()
    {
        const QJsonObject expected = expectedGeneration("llama3-f32");
        auto model = TransformerModel::load(fixture(expected["folder"].toString()).toStdString());
        QVERIFY(model);
        const Encoding prompt = promptOf(*model, expected);
        const auto run = [&](double temperature, std::int64_t topK, double topP, std::uint64_t seed) {
            GenerationSettings s;
            s.maxNewTokens = 8;
            s.temperature = temperature, s.topK = topK, s.topP = topP, s.seed = seed;
            auto g = generate(*model, prompt, s);
            return g ? g->ids : std::vector<std::int32_t>();
        };
        const std::vector<std::int32_t> greedy = idsOf(expected["ids"].toArray());
        const std::vector<std::int32_t> a = run(1.5, 0, 1.0, 7);
        QCOMPARE(a.size(), greedy.size());
        QCOMPARE(run(1.5, 0, 1.0, 7), a); // same seed, same ids
        bool differs = false;
        for (std::uint64_t seed = 1; seed <= 5 && !differs; ++seed)
            differs = run(1.5, 0, 1.0, seed) != a;
        QVERIFY(differs);
        QCOMPARE(run(1.0, 1, 1.0, 3), greedy);  // top-k 1 keeps the most probable alone
        QCOMPARE(run(1.0, 0, 1e-6, 3), greedy); // as does a tiny top-p
        QVERIFY(run(1.0, 0, 1.0, 3) != greedy || run(1.0, 0, 1.0, 4) != greedy);
    }

    void chooseTokenFilters()
    {
        VectorF logits(5);
        logits << 1.0f, 3.0f, 3.0f, 0.5f, 2.0f;
        GenerationSettings s;
        std::mt19937_64 rng(1);
        QCOMPARE(chooseToken(logits, s, rng), 1); // greedy: the first largest
        s.temperature = 1.0;
        s.topK = 1; // ties with the k-th stay: ids 1 and 2 only
        for (int i = 0; i < 50; ++i) {
            const std::int32_t id = chooseToken(logits, s, rng);
            QVERIFY(id == 1 || id == 2);
        }
        s.topK = 0;
        s.topP = 0.5; // 1 and 2 hold 0.73 together; 1 alone 0.37 < 0.5
        for (int i = 0; i < 50; ++i) {
            const std::int32_t id = chooseToken(logits, s, rng);
            QVERIFY(id == 1 || id == 2);
        }
    }

    void invalidSettings_data()
    {
        QTest::addColumn<double>("temperature");
        QTest::addColumn<qint64>("topK");
        QTest::addColumn<double>("topP");
        QTest::addColumn<qint64>("maxNew");
        QTest::addColumn<QString>("names");
        QTest::newRow("temperature") << -0.5 << qint64(0) << 1.0 << qint64(4) << "--temperature";
        QTest::newRow("top-k") << 1.0 << qint64(-1) << 1.0 << qint64(4) << "--top-k";
        QTest::newRow("top-p 0") << 1.0 << qint64(0) << 0.0 << qint64(4) << "--top-p";
        QTest::newRow("top-p 1.5") << 1.0 << qint64(0) << 1.5 << qint64(4) << "--top-p";
        QTest::newRow("max-new-tokens") << 0.0 << qint64(0) << 1.0 << qint64(0) << "--max-new-tokens";
    }

    void invalidSettings()
    {
        QFETCH(double, temperature);
        QFETCH(qint64, topK);
        QFETCH(double, topP);
        QFETCH(qint64, maxNew);
        QFETCH(QString, names);
        GenerationSettings s;
        s.temperature = temperature, s.topK = topK, s.topP = topP, s.maxNewTokens = maxNew;
        auto model = TransformerModel::load(fixture("decoders/llama3-f32").toStdString());
        QVERIFY(model);
        auto g = generate(*model, *model->input({1, 2, 3}), s);
        QVERIFY(!g);
        QVERIFY2(QString::fromStdString(g.message()).startsWith(names), g.message().c_str());
        QVERIFY(g.message().find('\n') == std::string::npos);
    }

    void bertRefused()
    {
        auto model = TransformerModel::load(fixture("models/bert-f32").toStdString());
        QVERIFY(model);
        auto cache = DecoderCache::start(*model);
        QVERIFY(!cache);
        QVERIFY2(cache.message().find("bert has no language-model head") != std::string::npos, cache.message().c_str());
    }

    void cancelled()
    {
        auto model = TransformerModel::load(fixture("decoders/llama3-f32").toStdString());
        QVERIFY(model);
        std::atomic<bool> cancel{false};
        GenerationSettings s;
        s.maxNewTokens = 8;
        int steps = 0;
        auto g = generate(*model, *model->input({1, 2, 3}), s, &cancel, [&](const GenerationStep &) {
            if (++steps == 2)
                cancel = true;
        });
        QVERIFY(!g);
        QCOMPARE(g.kind(), ErrorKind::Cancelled);
        QCOMPARE(steps, 2);
    }

    // The window's generator, one step at a time: after each step its maps hold every head's
    // causal map of the sequence so far, equal to one forward over it.
    void generatorMapsEqualForward_data()
    {
        QTest::addColumn<QString>("folder");
        for (const char *f : {"decoders/qwen3-f32", "decoders/gemma2-bf16", "models/gpt2-f32"})
            QTest::newRow(f) << QString::fromUtf8(f);
    }

    void generatorMapsEqualForward()
    {
        QFETCH(QString, folder);
        auto model = TransformerModel::load(fixture(folder).toStdString());
        QVERIFY2(model, model ? "" : model.message().c_str());
        GenerationSettings s;
        s.maxNewTokens = 4;
        auto g = Generator::start(*model, *model->input({1, 2, 3, 4, 5}), s, {true, true});
        QVERIFY2(g, g ? "" : g.message().c_str());
        CpuBackend cpu;
        while (!g->finished()) {
            auto step = g->step();
            QVERIFY2(step, step ? "" : step.message().c_str());
            QVERIFY(g->settle());
            const std::vector<std::int32_t> &ids = g->generation().ids;
            QCOMPARE(g->tokensRun(), std::int64_t(ids.size()));
            auto run = model->forward(*model->input(ids), cpu);
            QVERIFY(run);
            const int heads = model->config().heads;
            QCOMPARE(g->maps().size(), std::size_t(model->config().layers * heads));
            for (int l = 0; l < model->config().layers; ++l)
                for (int h = 0; h < heads; ++h) {
                    const MatrixF &map = g->maps()[std::size_t(l * heads + h)];
                    QCOMPARE(map.rows(), Eigen::Index(ids.size()));
                    const float diff = (map - MatrixF((*run)->attention(l, h))).cwiseAbs().maxCoeff();
                    if (diff > 1e-5f)
                        QFAIL(qPrintable(QStringLiteral("layer %1 head %2 at %3 tokens: %4")
                                             .arg(l)
                                             .arg(h)
                                             .arg(ids.size())
                                             .arg(diff)));
                }
        }
        QCOMPARE(g->generation().steps.size(), std::size_t(4));
        QCOMPARE(g->step().kind(), ErrorKind::InvalidInput); // finished
    }

    // Going back to a step chooses it again as it was (its logits and random state): a seeded
    // sampled generation rewound to step 2 continues exactly as before. Forcing a token there
    // continues as a fresh generation of the prompt and that token would.
    void rewindAndForce()
    {
        auto model = TransformerModel::load(fixture("decoders/llama3-f32").toStdString());
        QVERIFY(model);
        GenerationSettings s;
        s.maxNewTokens = 6, s.temperature = 1.3, s.topK = 40, s.seed = 11;
        auto g = Generator::start(*model, *model->input({3, 1, 4, 1, 5}), s, {true, true});
        QVERIFY(g);
        while (!g->finished())
            QVERIFY(g->step());
        const Generation before = g->generation();
        QVERIFY(g->rewind(2));
        QCOMPARE(g->generation().steps.size(), std::size_t(2));
        QCOMPARE(g->generation().ids.size(), std::size_t(5 + 2));
        while (!g->finished())
            QVERIFY(g->step());
        QCOMPARE(g->generation().ids, before.ids);
        for (std::size_t i = 0; i < before.steps.size(); ++i)
            QCOMPARE(g->generation().steps[i].p, before.steps[i].p);

        // Force the least likely of step 2's candidates, then go on greedily.
        QVERIFY(g->rewind(2));
        GenerationSettings greedy = s;
        greedy.temperature = 0;
        QVERIFY(g->setSettings(greedy));
        const std::int32_t forced = before.steps[2].candidates.back().id;
        auto step = g->step(forced);
        QVERIFY(step);
        QCOMPARE(step->id, forced);
        QVERIFY(step->forced);
        QCOMPARE(step->candidates.size(), before.steps[2].candidates.size()); // the same logits
        QCOMPARE(step->candidates.front().id, before.steps[2].candidates.front().id);
        QCOMPARE(step->sampled, 0.0f); // greedy would not have drawn it
        while (!g->finished())
            QVERIFY(g->step());
        QVERIFY(g->settle());
        std::vector<std::int32_t> prefix(before.ids.begin(), before.ids.begin() + 5 + 2);
        prefix.push_back(forced);
        greedy.maxNewTokens = 3;
        auto fresh = generate(*model, *model->input(prefix), greedy);
        QVERIFY(fresh);
        QCOMPARE(g->generation().ids, fresh->ids);
        // The maps after rewinding equal a forward over the final ids too.
        CpuBackend cpu;
        auto run = model->forward(*model->input(fresh->ids), cpu);
        QVERIFY(run);
        const float diff = (g->maps()[1] - MatrixF((*run)->attention(0, 1))).cwiseAbs().maxCoeff();
        QVERIFY2(diff < 1e-5f, qPrintable(QString::number(diff)));
        const QJsonObject json =
            QJsonDocument::fromJson(QByteArray::fromStdString(generationTokensJson(g->generation()))).object();
        const QJsonArray steps = json["steps"].toArray();
        QCOMPARE(steps.size(), 6);
        QVERIFY(steps[2].toObject()["forced"].toBool());
        QVERIFY(!steps[1].toObject().contains("forced"));
        QCOMPARE(json["promptLength"].toInt(), 5);
    }

    // What the draw uses: 1 at the argmax when greedy; top-k keeps k tokens; top-p the
    // smallest set reaching p; every distribution sums to 1.
    void samplingDistribution()
    {
        VectorF logits(6);
        logits << 1.0f, 3.0f, 2.0f, 3.0f, -1.0f, 0.5f;
        GenerationSettings s;
        VectorF p = samplingProbabilities(logits, s);
        QCOMPARE(p(1), 1.0f); // the first largest
        QCOMPARE(p.sum(), 1.0f);
        s.temperature = 1;
        s.topK = 3;
        p = samplingProbabilities(logits, s);
        QCOMPARE(int((p.array() > 0).count()), 3);
        QVERIFY(std::abs(p.sum() - 1.0f) < 1e-6f);
        QCOMPARE(p(1), p(3));
        s.topK = 0;
        s.topP = 0.5;
        p = samplingProbabilities(logits, s);
        QCOMPARE(int((p.array() > 0).count()), 2); // the two tied at 3 hold 0.58
        s.topP = 1;
        s.temperature = 2;
        p = samplingProbabilities(logits, s);
        const VectorF expected = tokenProbabilities(logits / 2.0f);
        QVERIFY((p - expected).cwiseAbs().maxCoeff() < 1e-7f);
    }

    void generationDefaults()
    {
        QTemporaryDir dir;
        test::copyFolder(fixture("decoders/llama3-f32"), dir.filePath("m"));
        const std::string m = dir.filePath("m").toStdString();
        const auto write = [&](const QByteArray &json) {
            QFile f(dir.filePath("m/generation_config.json"));
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(json);
        };
        QFile::remove(dir.filePath("m/generation_config.json"));
        auto none = readGenerationDefaults(m);
        QVERIFY2(none, none ? "" : none.message().c_str());
        QCOMPARE(none->temperature, 0.0);
        QCOMPARE(none->maxNewTokens, std::int64_t(16));
        QCOMPARE(none->eosIds, std::vector<std::int32_t>{1});
        write(R"({"do_sample": true, "temperature": 0.7, "top_k": 20, "top_p": 0.8, "max_new_tokens": 32,
                  "eos_token_id": [5, 7]})");
        auto sampled = readGenerationDefaults(m);
        QVERIFY2(sampled, sampled ? "" : sampled.message().c_str());
        QCOMPARE(sampled->temperature, 0.7);
        QCOMPARE(sampled->topK, std::int64_t(20));
        QCOMPARE(sampled->topP, 0.8);
        QCOMPARE(sampled->maxNewTokens, std::int64_t(32));
        QCOMPARE(sampled->eosIds, (std::vector<std::int32_t>{5, 7}));
        write(R"({"temperature": 0.7, "top_p": 0.9})"); // no do_sample: greedy, the rest kept
        auto greedy = readGenerationDefaults(m);
        QVERIFY(greedy);
        QCOMPARE(greedy->temperature, 0.0);
        QCOMPARE(greedy->topP, 0.9);
        QCOMPARE(greedy->topK, std::int64_t(50));
        for (const char *bad : {R"({"do_sample": "yes"})", R"({"top_p": 1.5})", R"({"top_k": -1})",
                                R"({"temperature": "hot"})", R"({"max_new_tokens": 0})"}) {
            write(bad);
            auto refused = readGenerationDefaults(m);
            QVERIFY2(!refused, bad);
            const QString field = QString::fromUtf8(bad).section('"', 1, 1);
            QVERIFY2(QString::fromStdString(refused.message()).contains("generation_config.json: " + field + ":"),
                     refused.message().c_str());
        }
    }

    void eosIds()
    {
        auto config = readEosIds(fixture("decoders/llama3-f32").toStdString());
        QVERIFY2(config, config ? "" : config.message().c_str());
        QCOMPARE(*config, std::vector<std::int32_t>{1});
        QTemporaryDir dir;
        test::copyFolder(fixture("decoders/llama3-f32"), dir.filePath("m"));
        const auto write = [&](const QByteArray &json) {
            QFile f(dir.filePath("m/generation_config.json"));
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(json);
        };
        write(R"({"eos_token_id": [5, 7]})");
        auto list = readEosIds(dir.filePath("m").toStdString());
        QVERIFY2(list, list ? "" : list.message().c_str());
        QCOMPARE(*list, (std::vector<std::int32_t>{5, 7}));
        write(R"({"do_sample": true})"); // unset here: config.json's
        auto fallback = readEosIds(dir.filePath("m").toStdString());
        QVERIFY(fallback);
        QCOMPARE(*fallback, std::vector<std::int32_t>{1});
        write(R"({"eos_token_id": "x"})");
        auto bad = readEosIds(dir.filePath("m").toStdString());
        QVERIFY(!bad);
        QVERIFY2(bad.message().find("generation_config.json: eos_token_id") != std::string::npos,
                 bad.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestGeneration)
#include "tst_generation.moc"
