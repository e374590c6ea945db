#pragma once

// Model folders under tests/fixtures (models/: GPT-2 and BERT; decoders/: Llama, Mistral, Qwen,
// Gemma) and their expected forward passes, written in float64 by the generators there.

#include "TestUtil.h"

#include "core/formats/Npy.h"
#include "core/models/TransformerModel.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QTest>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attnscope::test {

struct ExpectedForward {
    QString text;
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;
    NpyArray attentions, hidden, logits; // logits: decoders only
};

inline ExpectedForward readExpectedForward(const QString &folder)
{
    ExpectedForward e;
    const QJsonObject o = QJsonDocument::fromJson(readAll(folder + "/expected.json")).object();
    e.text = o["text"].toString();
    for (const auto &v : o["ids"].toArray())
        e.ids.push_back(v.toInt());
    for (const auto &v : o["tokens"].toArray())
        e.tokens.push_back(v.toString().toStdString());
    e.attentions = *readNpyFile((folder + "/expected_attentions.npy").toStdString());
    e.hidden = *readNpyFile((folder + "/expected_hidden_states.npy").toStdString());
    if (QFile::exists(folder + "/expected_logits.npy"))
        e.logits = *readNpyFile((folder + "/expected_logits.npy").toStdString());
    return e;
}

// The first value outside |got - ref| <= absolute + relative·|ref|, or empty.
inline QString compareValues(const char *what, const float *got, const NpyArray &ref, double absolute, double relative)
{
    for (std::int64_t i = 0; i < ref.size(); ++i) {
        const double g = got[i], r = ref.data[std::size_t(i)];
        if (!std::isfinite(g) || std::abs(g - r) > absolute + relative * std::abs(r))
            return QStringLiteral("%1[%2]: %3, expected %4").arg(what).arg(i).arg(g, 0, 'g', 9).arg(r, 0, 'g', 9);
    }
    return {};
}

inline void copyFolder(const QString &from, const QString &to)
{
    std::filesystem::copy(from.toStdString(), to.toStdString(), std::filesystem::copy_options::recursive);
}

inline void writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

inline QJsonObject readJson(const QString &path)
{
    return QJsonDocument::fromJson(readAll(path)).object();
}

inline void writeJson(const QString &path, const QJsonObject &o)
{
    writeFile(path, QJsonDocument(o).toJson());
}

// Breaks the model folder `dir` on purpose, as the malformed-folder tests describe it: "rm FILE",
// "config KEY JSON" (one key of config.json set), "index TENSOR FILE" (one entry of the shard
// index), "truncate" (model.safetensors cut in half). False for any other verb.
inline bool mutateFolder(const QString &dir, const QString &mutation)
{
    const QString verb = mutation.section(' ', 0, 0), key = mutation.section(' ', 1, 1),
                  value = mutation.section(' ', 2);
    if (verb == "rm")
        return QFile::remove(dir + "/" + key);
    if (verb == "truncate") {
        QFile f(dir + "/model.safetensors");
        return f.resize(f.size() / 2);
    }
    if (verb == "config") {
        QJsonObject config = readJson(dir + "/config.json");
        config[key] = QJsonDocument::fromJson("[" + value.toUtf8() + "]").array().at(0);
        writeJson(dir + "/config.json", config);
        return true;
    }
    if (verb == "index") {
        QJsonObject index = readJson(dir + "/model.safetensors.index.json");
        QJsonObject map = index["weight_map"].toObject();
        map[key] = value;
        index["weight_map"] = map;
        writeJson(dir + "/model.safetensors.index.json", index);
        return true;
    }
    return false;
}

// The folder is refused in one line holding `expected`, of ErrorKind `kind`, and nothing is
// written into it.
inline void checkRefusedInOneLine(const QString &dir, const QString &expected, int kind)
{
    const QStringList before = QDir(dir).entryList(QDir::Files, QDir::Name);
    auto model = TransformerModel::load(dir.toStdString());
    QVERIFY(!model);
    const QString message = QString::fromStdString(model.message());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    QCOMPARE(int(model.kind()), kind);
    QCOMPARE(QDir(dir).entryList(QDir::Files, QDir::Name), before);
}

} // namespace attnscope::test
