#pragma once

// The tutorials' own PyTorch classes on batches (tests/fixtures/tutorial, made by
// tests/fixtures/make_tutorial_fixtures.py): what `compute` must reproduce, on every backend.

#include "TestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QFile>
#include <QTest>

#include <string>

namespace attnscope::test {

// Rows of the column "folder": one per fixture.
inline void addTutorialFixtureRows()
{
    QTest::addColumn<QString>("folder");
    const QDir dir(sourcePath("tests/fixtures/tutorial"));
    const auto cases = dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY2(cases.size() >= 2, "the tutorial fixtures are missing");
    for (const QString &c : cases)
        QTest::newRow(qPrintable(c)) << dir.filePath(c);
}

// Empty when outDir (what `compute` wrote) holds the fixture's weights [B,H,Tq,Tk] and output
// [B,Tq,d_out] within design.md's tolerances, and every other tensor with the same leading B.
inline std::string checkTutorialFixture(const QString &folder, const QString &outDir)
{
    std::int64_t batch = 0;
    for (const char *name : {"weights", "output"}) {
        auto expected = readNpyFile((folder + "/" + name + ".npy").toStdString());
        auto got = readNpyFile((outDir + "/" + name + ".npy").toStdString());
        if (!expected || !got)
            return std::string(name) + ": " + (!expected ? expected.message() : got.message());
        if (std::string diff = compareNpy(name, *got, *expected); !diff.empty())
            return diff;
        batch = expected->shape.front();
    }
    for (const char *name : {"q", "k", "v", "scores"}) {
        auto got = readNpyFile((outDir + "/" + name + ".npy").toStdString());
        if (!got || got->shape.size() != 4 || got->shape.front() != batch)
            return std::string(name) + ".npy: expected [B, H, T, d] with B = " + std::to_string(batch);
    }
    auto context = readNpyFile((outDir + "/context.npy").toStdString());
    if (!context || context->shape.size() != 3 || context->shape.front() != batch)
        return "context.npy: expected [B, Tq, H*dV] with B = " + std::to_string(batch);
    return {};
}

} // namespace attnscope::test
