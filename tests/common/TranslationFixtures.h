#pragma once

// The Marian folders of tests/fixtures/marian (random weights, F32 and F16) and their cases:
// the expected tokenization and, per case, the forward computed in float64 by
// tests/fixtures/marian_reference.py after transformers' MarianMTModel and MarianTokenizer.

#include "ModelFixtures.h"
#include "TestUtil.h"

#include "core/formats/Npy.h"
#include "core/models/TranslationModel.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QTest>

#include <optional>
#include <vector>

namespace attnscope::test {

inline const char *const kTranslationFolders[] = {"marian-f32", "marian-f16"};

inline QString translationFixture(const QString &folder)
{
    return sourcePath(QStringLiteral("tests/fixtures/marian/") + folder);
}

struct TranslationCase {
    QString name, source;
    std::optional<QString> target; // none: the target ids are the greedy search's
    std::vector<std::int32_t> sourceIds, targetIds;
    std::vector<std::string> sourceTokens, targetTokens;
};

inline std::vector<std::int32_t> idsOf(const QJsonArray &a)
{
    std::vector<std::int32_t> ids;
    for (const QJsonValue &v : a)
        ids.push_back(v.toInt());
    return ids;
}

inline std::vector<std::string> tokensOf(const QJsonArray &a)
{
    std::vector<std::string> tokens;
    for (const QJsonValue &v : a)
        tokens.push_back(v.toString().toStdString());
    return tokens;
}

inline std::vector<TranslationCase> readTranslationCases(const QString &folder)
{
    QFile f(translationFixture(folder) + "/expected.json");
    std::vector<TranslationCase> cases;
    if (!f.open(QIODevice::ReadOnly))
        return cases;
    for (const QJsonValue &v : QJsonDocument::fromJson(f.readAll()).object()["cases"].toArray()) {
        const QJsonObject o = v.toObject();
        TranslationCase c;
        c.name = o["name"].toString();
        c.source = o["source"].toString();
        if (!o["target"].isNull())
            c.target = o["target"].toString();
        c.sourceIds = idsOf(o["sourceIds"].toArray());
        c.targetIds = idsOf(o["targetIds"].toArray());
        c.sourceTokens = tokensOf(o["sourceTokens"].toArray());
        c.targetTokens = tokensOf(o["targetTokens"].toArray());
        cases.push_back(std::move(c));
    }
    return cases;
}

// The data columns "folder" and "index" with a row per case of every fixture folder
// ("marian-f32/pair", ...), for data-driven tests.
inline void addTranslationCaseRows()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<int>("index");
    for (const char *folder : kTranslationFolders) {
        const auto cases = readTranslationCases(folder);
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(QString(folder) + "/" + cases[i].name)) << QString(folder) << int(i);
    }
}

// The first value of a run outside the reference's tolerance (attentions within 1e-4, hidden
// states and logits within 1e-3·(1 + |ref|)), or empty.
inline QString compareTranslationRun(const attnscope::TranslationRun &run, const QString &folder,
                                     const QString &caseName)
{

    const QString base = translationFixture(folder) + "/" + caseName + ".";
    const auto read = [&](const char *name) { return readNpyFile((base + name + ".npy").toStdString()); };
    const auto stacked = [](const std::vector<MatrixF> &states) {
        std::vector<float> values;
        for (const MatrixF &m : states)
            for (Eigen::Index r = 0; r < m.rows(); ++r)
                for (Eigen::Index c = 0; c < m.cols(); ++c)
                    values.push_back(m(r, c));
        return values;
    };
    const std::vector<float> encoderHidden = stacked(run.encoderHiddenStates),
                             decoderHidden = stacked(run.decoderHiddenStates), logits = stacked({run.logits});
    const struct {
        const char *file;
        const float *got;
        std::size_t count;
        double absolute, relative;
    } checks[] = {
        {"encoder_attentions", run.encoderAttentions.data(), run.encoderAttentions.size(), 1e-4, 0},
        {"decoder_attentions", run.decoderAttentions.data(), run.decoderAttentions.size(), 1e-4, 0},
        {"cross_attentions", run.crossAttentions.data(), run.crossAttentions.size(), 1e-4, 0},
        {"encoder_hidden_states", encoderHidden.data(), encoderHidden.size(), 1e-3, 1e-3},
        {"decoder_hidden_states", decoderHidden.data(), decoderHidden.size(), 1e-3, 1e-3},
        {"logits", logits.data(), logits.size(), 1e-3, 1e-3},
    };
    for (const auto &check : checks) {
        auto expected = read(check.file);
        if (!expected)
            return QString::fromStdString(expected.message());
        if (std::size_t(expected->size()) != check.count)
            return QStringLiteral("%1: %2 values, expected %3").arg(check.file).arg(check.count).arg(expected->size());
        const QString diff = compareValues(check.file, check.got, *expected, check.absolute, check.relative);
        if (!diff.isEmpty())
            return caseName + ": " + diff;
    }
    return {};
}

} // namespace attnscope::test
