#pragma once

// Model folders under tests/fixtures (models/: GPT-2 and BERT; decoders/: Llama, Mistral, Qwen,
// Gemma) and their expected forward passes, written in float64 by the generators there.

#include "TestUtil.h"

#include "core/formats/Npy.h"
#include "core/formats/QkDump.h"
#include "core/models/TransformerModel.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QTest>

#include <QtEndian>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
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

// Breaks the Q/K dump `dir` (tests/fixtures/qk) on purpose: "rm FILE", "truncate FILE" (cut in
// half), "index KEY JSON" (one key of attnscope-qk.json set), "layer N KEY JSON" (one key of its
// layers[N] set), "nan FILE TENSOR I" (the I-th value, counted in stored order, of an F32 tensor
// set to NaN), "rows FILE TENSOR N" (only the first N rows of TENSOR kept), "ln NAME TARGET" (a
// symbolic link). False for any other verb.
inline bool mutateQkDump(const QString &dir, const QString &mutation)
{
    const QStringList words = mutation.split(' ');
    const QString verb = words.value(0), index = dir + "/" + QString(QkDump::kIndexName);
    if (verb == "rm")
        return QFile::remove(dir + "/" + words.value(1));
    if (verb == "truncate") {
        QFile f(dir + "/" + words.value(1));
        return f.resize(f.size() / 2);
    }
    const auto value = [&](int from) {
        return QJsonDocument::fromJson("[" + words.mid(from).join(' ').toUtf8() + "]").array().at(0);
    };
    if (verb == "index") {
        QJsonObject o = readJson(index);
        o[words.value(1)] = value(2);
        writeJson(index, o);
        return true;
    }
    if (verb == "layer") {
        QJsonObject o = readJson(index);
        QJsonArray layers = o["layers"].toArray();
        QJsonObject layer = layers.at(words.value(1).toInt()).toObject();
        layer[words.value(2)] = value(3);
        layers[words.value(1).toInt()] = layer;
        o["layers"] = layers;
        writeJson(index, o);
        return true;
    }
    if (verb == "nan") {
        QFile f(dir + "/" + words.value(1));
        if (!f.open(QIODevice::ReadWrite))
            return false;
        QByteArray bytes = f.readAll();
        const quint64 headerBytes = qFromLittleEndian<quint64>(bytes.constData());
        const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(headerBytes))).object();
        const QJsonObject tensor = header[words.value(2)].toObject();
        if (tensor["dtype"].toString() != "F32")
            return false;
        const qint64 at = qint64(8 + headerBytes) + tensor["data_offsets"].toArray().at(0).toInteger() +
                          4 * words.value(3).toLongLong();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        f.seek(at);
        return f.write(reinterpret_cast<const char *>(&nan), 4) == 4;
    }
    if (verb == "rows") {
        // Keeps the first N rows of one tensor, the file rewritten with offsets to match.
        QFile f(dir + "/" + words.value(1));
        if (!f.open(QIODevice::ReadOnly))
            return false;
        const QByteArray bytes = f.readAll();
        f.close();
        const quint64 headerBytes = qFromLittleEndian<quint64>(bytes.constData());
        const QByteArray data = bytes.mid(qsizetype(8 + headerBytes));
        QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(headerBytes))).object();
        QByteArray out;
        for (const QString &name : header.keys()) {
            QJsonObject tensor = header[name].toObject();
            const QJsonArray offsets = tensor["data_offsets"].toArray();
            QByteArray values =
                data.mid(offsets.at(0).toInteger(), offsets.at(1).toInteger() - offsets.at(0).toInteger());
            if (name == words.value(2)) {
                QJsonArray shape = tensor["shape"].toArray();
                values.truncate(values.size() / shape.at(0).toInteger() * words.value(3).toLongLong());
                shape[0] = words.value(3).toLongLong();
                tensor["shape"] = shape;
            }
            tensor["data_offsets"] = QJsonArray{out.size(), out.size() + values.size()};
            header[name] = tensor;
            out += values;
        }
        QByteArray text = QJsonDocument(header).toJson(QJsonDocument::Compact);
        text.append(QByteArray((8 - text.size() % 8) % 8, ' '));
        QByteArray length(8, 0);
        qToLittleEndian<quint64>(quint64(text.size()), length.data());
        writeFile(dir + "/" + words.value(1), length + text + out);
        return true;
    }
    if (verb == "ln")
        return QFile::link(words.value(2), dir + "/" + words.value(1));
    return false;
}

// The dump is refused in one line holding `expected`, of ErrorKind `kind`.
inline void checkQkDumpRefusedInOneLine(const QString &dir, const QString &expected, int kind)
{
    auto dump = QkDump::open(dir.toStdString());
    QVERIFY(!dump);
    const QString message = QString::fromStdString(dump.message());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    QCOMPARE(int(dump.kind()), kind);
}

} // namespace attnscope::test
