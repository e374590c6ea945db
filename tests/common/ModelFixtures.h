#pragma once

// Model folders under tests/fixtures (models/: GPT-2 and BERT; decoders/: Llama, Mistral, Qwen,
// Gemma) and their expected forward passes, written in float64 by the generators there.

#include "TestUtil.h"

#include "core/formats/Npy.h"

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

} // namespace attnscope::test
