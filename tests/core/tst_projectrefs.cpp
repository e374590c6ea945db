// Project files whose matrices are `{"npy": "relative/path.npy"}` references (design.md,
// format 1): float16/32/64 files beside the project, resolved against its folder, kept on save
// while unchanged (checked against the file again at save), and refused with the field and the
// file named when anything is wrong (including /dev/zero and FIFOs, which must never be read,
// and any file outside the project's folder, links followed).

#include "../common/BoundedCall.h"
#include "../common/TestUtil.h"

#include "core/attention/CpuBackend.h"
#include "core/formats/Npy.h"
#include "core/formats/ProjectFile.h"
#include "core/formats/ProjectReferences.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cstring>
#include <sys/stat.h>

using namespace attnscope;
using json = nlohmann::ordered_json;

namespace {

// A .npy file of any dtype, written by hand like NumPy writes it.
QByteArray npyFile(const char *descr, const std::string &shape, const QByteArray &data)
{
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    QByteArray out("\x93NUMPY\x01\x00", 8);
    out.append(char(header.size() & 0xff));
    out.append(char(header.size() >> 8));
    out.append(header.data(), qsizetype(header.size()));
    return out + data;
}

template <typename T>
QByteArray raw(const std::vector<T> &values)
{
    return QByteArray(reinterpret_cast<const char *>(values.data()), qsizetype(values.size() * sizeof(T)));
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// "(rows, cols)" as a .npy header spells a shape.
std::string tupleText(size_t rows, size_t cols)
{
    std::string text = "(";
    text.append(std::to_string(rows));
    text.append(", ");
    text.append(std::to_string(cols));
    text.append(")");
    return text;
}

// The tutorial project (3 tokens, d = 4, one head of 3) as inline JSON.
json tutorial()
{
    return json::parse(test::readAll(test::example("self-attention-tutorial")).toStdString());
}

// The tutorial with query.x and weights.q moved into .npy files of the given dtypes.
QString writeReferencedTutorial(const QString &folder, const char *xDtype = "<f4")
{
    json root = tutorial();
    std::vector<float> x;
    for (const auto &row : root["query"]["x"])
        for (const auto &v : row)
            x.push_back(v.get<float>());
    std::vector<double> q;
    for (const auto &row : root["weights"]["q"])
        for (const auto &v : row)
            q.push_back(v.get<double>());
    const std::string xShape = tupleText(root["query"]["x"].size(), root["query"]["x"][0].size());
    const std::string qShape = tupleText(root["weights"]["q"].size(), root["weights"]["q"][0].size());
    QByteArray xBytes;
    if (std::strcmp(xDtype, "<f2") == 0) {
        std::vector<std::uint16_t> halves; // the tutorial's inputs are small integers: exact in float16
        for (float v : x) {
            std::uint16_t h = 0;
            if (v != 0) {
                int e = 0;
                const float m = std::frexp(std::abs(v), &e); // v = m * 2^e, m in [0.5, 1)
                h = std::uint16_t(((e - 1 + 15) << 10) | std::uint16_t((m * 2 - 1) * 1024));
                if (v < 0)
                    h |= 0x8000;
            }
            halves.push_back(h);
        }
        xBytes = npyFile("<f2", xShape, raw(halves));
    } else {
        xBytes = npyFile("<f4", xShape, raw(x));
    }
    writeFile(folder + "/data/x.npy", xBytes);
    writeFile(folder + "/data/q.npy", npyFile("<f8", qShape, raw(q)));
    root["query"]["x"] = json{{"npy", "data/x.npy"}};
    root["weights"]["q"] = json{{"npy", "data/q.npy"}};
    const QString path = folder + "/project.attnscope.json";
    writeFile(path, QByteArray::fromStdString(root.dump(1)));
    return path;
}

} // namespace

class TestProjectRefs : public QObject
{
    Q_OBJECT

private slots:
    void referencesReadLikeInlineMatrices_data();
    void referencesReadLikeInlineMatrices();
    void float16ValuesAreExact();
    void savingKeepsUnchangedReferences();
    void savingInlinesAChangedMatrix();
    void saveAsElsewhereRebasesThePath();
    void saveAsElsewhereCopiesWhatWouldLeaveTheFolder();
    void referencesOutsideTheFolderAreRefusedAlike_data();
    void referencesOutsideTheFolderAreRefusedAlike();
    void linksThatStayInTheFolderAreRead();
    void saveKeepsAReferenceWhoseFileChanged_data();
    void saveKeepsAReferenceWhoseFileChanged();
    void saveRereadsEachFileOnceAndKeepsUnchangedOnes();
    void badReferencesNameFieldAndFile_data();
    void badReferencesNameFieldAndFile();
    void textWithoutAFolderRefusesReferences();
    void devZeroAndFifosAreNeverRead();
};

void TestProjectRefs::referencesReadLikeInlineMatrices_data()
{
    QTest::addColumn<QString>("dtype");
    QTest::newRow("float32 x, float64 q") << "<f4";
    QTest::newRow("float16 x, float64 q") << "<f2";
}

void TestProjectRefs::referencesReadLikeInlineMatrices()
{
    QFETCH(QString, dtype);
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.path(), qPrintable(dtype));
    auto referenced = readProjectFile(path.toStdString());
    QVERIFY2(referenced.ok(), referenced.ok() ? "" : referenced.message().c_str());
    auto inlined = readProjectFile(test::example("self-attention-tutorial").toStdString());
    QVERIFY(inlined.ok());
    QCOMPARE(referenced->problem.xq, inlined->problem.xq);
    QCOMPARE(referenced->problem.weights.q, inlined->problem.weights.q);
    QCOMPARE(referenced->npyReferences.size(), size_t(2));
    QCOMPARE(referenced->npyReferences.at("query.x").path, std::string("data/x.npy"));
    CpuBackend cpu;
    auto a = cpu.compute(referenced->problem), b = cpu.compute(inlined->problem);
    QVERIFY(a.ok() && b.ok());
    QCOMPARE(a->output, b->output);
}

void TestProjectRefs::float16ValuesAreExact()
{
    // 1, -2, Inf's neighbour 65504, the smallest subnormal 2^-24, 0.333251953125 (0x3555).
    const std::vector<std::uint16_t> halves = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x8000};
    auto array = parseNpyFloat(npyFile("<f2", "(2, 3)", raw(halves)).toStdString());
    QVERIFY2(array.ok(), array.ok() ? "" : array.message().c_str());
    const std::vector<float> expected = {1.0f, -2.0f, 65504.0f, 0x1p-24f, 0.333251953125f, -0.0f};
    QCOMPARE(array->data, expected);
    QVERIFY(std::signbit(array->data[5]));
    QVERIFY(std::isinf(halfToFloat(0x7c00)) && std::isnan(halfToFloat(0x7e00)));
}

void TestProjectRefs::savingKeepsUnchangedReferences()
{
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.path());
    const QByteArray xBefore = test::readAll(tmp.filePath("data/x.npy"));
    auto project = readProjectFile(path.toStdString());
    QVERIFY(project.ok());
    const json saved = json::parse(serializeProject(*project));
    QVERIFY2(saved["query"]["x"] == json({{"npy", "data/x.npy"}}), saved["query"]["x"].dump().c_str());
    QVERIFY2(saved["weights"]["q"] == json({{"npy", "data/q.npy"}}), saved["weights"]["q"].dump().c_str());
    QVERIFY(saved["weights"]["k"].is_array()); // inline stays inline
    QCOMPARE(test::readAll(tmp.filePath("data/x.npy")), xBefore);
    // What was saved reads back to the same problem.
    writeFile(path, QByteArray::fromStdString(saved.dump()));
    auto again = readProjectFile(path.toStdString());
    QVERIFY(again.ok());
    QCOMPARE(again->problem.xq, project->problem.xq);
}

void TestProjectRefs::savingInlinesAChangedMatrix()
{
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.path());
    const QByteArray xBefore = test::readAll(tmp.filePath("data/x.npy"));
    auto project = readProjectFile(path.toStdString());
    QVERIFY(project.ok());
    project->problem.xq(0, 0) = 42.5f;
    const json saved = json::parse(serializeProject(*project));
    QVERIFY2(saved["query"]["x"].is_array(), saved["query"]["x"].dump().c_str());
    QCOMPARE(saved["query"]["x"][0][0].get<double>(), 42.5);
    QVERIFY2(saved["weights"]["q"] == json({{"npy", "data/q.npy"}}),
             saved["weights"]["q"].dump().c_str());               // the unchanged one stays a reference
    QCOMPARE(test::readAll(tmp.filePath("data/x.npy")), xBefore); // the .npy is never rewritten
}

void TestProjectRefs::saveAsElsewhereRebasesThePath()
{
    // Saved into a folder above the project's, the references still lead inside it: rebased.
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.filePath("inner/deeper"));
    auto project = readProjectFile(path.toStdString());
    QVERIFY(project.ok());
    const QString target = tmp.filePath("inner");
    SavedReferences references(project->folder, target.toStdString());
    const std::string text = serializeProject(
        *project, [&](const std::string &field, const NpyReference &r) { return references(field, r); });
    QVERIFY2(json::parse(text)["query"]["x"] == json({{"npy", "deeper/data/x.npy"}}),
             json::parse(text)["query"]["x"].dump().c_str());
    QVERIFY(references.notes().empty());
    writeFile(target + "/p.attnscope.json", QByteArray::fromStdString(text));
    auto moved = readProjectFile((target + "/p.attnscope.json").toStdString());
    QVERIFY2(moved.ok(), moved.ok() ? "" : moved.message().c_str());
    QCOMPARE(moved->problem.xq, project->problem.xq);
    QCOMPARE(QDir(target).entryList(QDir::Files), QStringList{"p.attnscope.json"}); // nothing copied
}

void TestProjectRefs::saveAsElsewhereCopiesWhatWouldLeaveTheFolder()
{
    // Saved into another folder, "../../data/x.npy" would be refused when the project is opened
    // (it leads out of its folder): the .npy is copied beside the saved project instead, its
    // bytes unchanged (float64 stays float64), and an existing file is never replaced.
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.filePath("a"));
    auto project = readProjectFile(path.toStdString());
    QVERIFY(project.ok());
    const QString target = tmp.filePath("elsewhere/deeper");
    QVERIFY(QDir().mkpath(target));
    writeFile(target + "/x.npy", "someone else's file");
    writeFile(target + "/q.npy", test::readAll(tmp.filePath("a/data/q.npy"))); // the same bytes: used as is
    SavedReferences references(project->folder, target.toStdString());
    const std::string text = serializeProject(
        *project, [&](const std::string &field, const NpyReference &r) { return references(field, r); });
    const json saved = json::parse(text);
    QVERIFY2(saved["query"]["x"] == json({{"npy", "x-1.npy"}}), saved["query"]["x"].dump().c_str());
    QVERIFY2(saved["weights"]["q"] == json({{"npy", "q.npy"}}), saved["weights"]["q"].dump().c_str());
    QCOMPARE(test::readAll(target + "/x.npy"), QByteArray("someone else's file"));
    QCOMPARE(test::readAll(target + "/x-1.npy"), test::readAll(tmp.filePath("a/data/x.npy")));
    QCOMPARE(references.notes().size(), size_t(1));
    QCOMPARE(int(references.notes()[0].kind), int(ReferenceNote::Kind::Copied));
    QCOMPARE(references.notes()[0].field, std::string("query.x"));
    QCOMPARE(references.notes()[0].detail, std::string("x-1.npy"));
    writeFile(target + "/p.attnscope.json", QByteArray::fromStdString(text));
    auto moved = readProjectFile((target + "/p.attnscope.json").toStdString());
    QVERIFY2(moved.ok(), moved.ok() ? "" : moved.message().c_str());
    QCOMPARE(moved->problem.xq, project->problem.xq);
    QCOMPARE(moved->problem.weights.q, project->problem.weights.q);
    // A copy made by a save that failed afterwards goes again.
    references.discardCopies();
    QVERIFY(!QFile::exists(target + "/x-1.npy"));
    QVERIFY(QFile::exists(target + "/q.npy") && QFile::exists(target + "/x.npy"));
}

void TestProjectRefs::referencesOutsideTheFolderAreRefusedAlike_data()
{
    // Each reference leads out of the project's folder, to a file that exists ("secret.npy",
    // a valid array) or to one that does not: the message is the same for both, so it tells
    // nothing of the reader's disk, and nothing is read.
    QTest::addColumn<QString>("reference");
    QTest::addColumn<QString>("link");   // a link made in the project's folder, when not empty
    QTest::addColumn<QString>("target"); // ... and where it points
    QTest::newRow("climbing, existing") << "../outside/secret.npy"
                                        << ""
                                        << "";
    QTest::newRow("climbing, missing") << "../outside/missing.npy"
                                       << ""
                                       << "";
    QTest::newRow("up and down again, existing") << "sub/../../outside/secret.npy"
                                                 << ""
                                                 << "";
    QTest::newRow("link to a file outside") << "x.npy"
                                            << "x.npy"
                                            << "../outside/secret.npy";
    QTest::newRow("link to a missing file outside") << "x.npy"
                                                    << "x.npy"
                                                    << "../outside/missing.npy";
    QTest::newRow("link to a folder outside") << "data/secret.npy"
                                              << "data"
                                              << "../outside";
    QTest::newRow("link to a missing folder outside") << "data/secret.npy"
                                                      << "data"
                                                      << "../nowhere";
    QTest::newRow("absolute link") << "x.npy"
                                   << "x.npy"
                                   << "ABSOLUTE/outside/secret.npy";
    QTest::newRow("link to /dev/zero") << "x.npy"
                                       << "x.npy"
                                       << "/dev/zero";
}

void TestProjectRefs::referencesOutsideTheFolderAreRefusedAlike()
{
    QFETCH(QString, reference);
    QFETCH(QString, link);
    QFETCH(QString, target);
    QTemporaryDir tmp;
    // A valid 3 x 4 array outside the project's folder: read, it would be accepted as query.x.
    writeFile(tmp.filePath("outside/secret.npy"), npyFile("<f4", "(3, 4)", raw(std::vector<float>(12, 7.0f))));
    QVERIFY(QDir().mkpath(tmp.filePath("project/sub")));
    if (!link.isEmpty()) {
        target.replace("ABSOLUTE", tmp.path());
        QVERIFY(QFile::link(target, tmp.filePath("project/" + link)));
    }
    json root = tutorial();
    root["query"]["x"] = json{{"npy", reference.toStdString()}};
    const QString path = tmp.filePath("project/p.attnscope.json");
    writeFile(path, QByteArray::fromStdString(root.dump()));
    auto project = readProjectFile(path.toStdString());
    QVERIFY(!project.ok());
    QCOMPARE(QString::fromStdString(project.message()),
             path + ": query.x: " + reference +
                 ": refused: the file is outside the project's folder (a reference must lead to a file in that "
                 "folder or a folder below it)");
}

void TestProjectRefs::linksThatStayInTheFolderAreRead()
{
    // Subfolders, and links whose target is in the folder, are the project's own files.
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.filePath("p"));
    QVERIFY(QFile::link("data/x.npy", tmp.filePath("p/x-link.npy")));
    QVERIFY(QFile::link("data", tmp.filePath("p/d")));
    json root = json::parse(test::readAll(path).toStdString());
    root["query"]["x"] = json{{"npy", "x-link.npy"}};
    root["weights"]["q"] = json{{"npy", "d/../data/q.npy"}};
    writeFile(path, QByteArray::fromStdString(root.dump()));
    auto project = readProjectFile(path.toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    auto inlined = readProjectFile(test::example("self-attention-tutorial").toStdString());
    QCOMPARE(project->problem.xq, inlined->problem.xq);
    QCOMPARE(project->problem.weights.q, inlined->problem.weights.q);

    // ".." after a linked folder climbs from the link's target, not from the link: saving
    // writes a path that still leads to that file (its real one), not the lexical "q.npy".
    QVERIFY(QDir().mkpath(tmp.filePath("p/real/inner")));
    QVERIFY(QFile::rename(tmp.filePath("p/data/q.npy"), tmp.filePath("p/real/q.npy")));
    QVERIFY(QFile::link("real/inner", tmp.filePath("p/in")));
    root["weights"]["q"] = json{{"npy", "in/../q.npy"}};
    writeFile(path, QByteArray::fromStdString(root.dump()));
    project = readProjectFile(path.toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    QCOMPARE(project->problem.weights.q, inlined->problem.weights.q);
    SavedReferences references(project->folder, project->folder);
    const json saved = json::parse(serializeProject(
        *project, [&](const std::string &field, const NpyReference &r) { return references(field, r); }));
    QVERIFY2(saved["weights"]["q"] == json({{"npy", "real/q.npy"}}), saved["weights"]["q"].dump().c_str());
    QVERIFY2(saved["query"]["x"] == json({{"npy", "x-link.npy"}}), saved["query"]["x"].dump().c_str());
    QVERIFY(references.notes().empty());
}

void TestProjectRefs::saveKeepsAReferenceWhoseFileChanged_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<int>("kind");
    QTest::newRow("rewritten with other values") << "rewrite" << int(ReferenceNote::Kind::Changed);
    QTest::newRow("deleted") << "delete" << int(ReferenceNote::Kind::Unreadable);
    QTest::newRow("replaced by a 1-D array") << "1d" << int(ReferenceNote::Kind::Unreadable);
    QTest::newRow("same values as a 3-D array") << "3d" << int(ReferenceNote::Kind::Changed);
}

void TestProjectRefs::saveKeepsAReferenceWhoseFileChanged()
{
    // The script that wrote x.npy ran again (or the file was deleted) after the project was
    // opened: saving must write what the document holds, not a reference to what the file now
    // holds, so the saved project reopens with the values the user saw.
    QFETCH(QString, change);
    QFETCH(int, kind);
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.path());
    auto project = readProjectFile(path.toStdString());
    QVERIFY(project.ok());
    const MatrixF shown = project->problem.xq;
    const QString x = tmp.filePath("data/x.npy");
    const std::string shape = tupleText(size_t(shown.rows()), size_t(shown.cols()));
    if (change == "rewrite")
        writeFile(x, npyFile("<f4", shape, raw(std::vector<float>(size_t(shown.size()), 9.0f))));
    else if (change == "delete")
        QVERIFY(QFile::remove(x));
    else if (change == "1d")
        writeFile(x, npyFile("<f4", "(12,)", raw(std::vector<float>(12, 1.0f))));
    else {
        const QByteArray bytes = test::readAll(x);
        const int headerBytes = int(uchar(bytes[8])) | int(uchar(bytes[9])) << 8;
        writeFile(x, npyFile("<f4", "(1, 3, 4)", bytes.mid(10 + headerBytes)));
    }
    SavedReferences references(project->folder, project->folder);
    const std::string text = serializeProject(
        *project, [&](const std::string &field, const NpyReference &r) { return references(field, r); });
    const json saved = json::parse(text);
    QVERIFY2(saved["query"]["x"].is_array(), saved["query"]["x"].dump().c_str());
    QVERIFY2(saved["weights"]["q"] == json({{"npy", "data/q.npy"}}), saved["weights"]["q"].dump().c_str());
    QCOMPARE(references.notes().size(), size_t(1));
    QCOMPARE(int(references.notes()[0].kind), kind);
    QCOMPARE(references.notes()[0].field, std::string("query.x"));
    QCOMPARE(references.notes()[0].path, std::string("data/x.npy"));
    writeFile(path, QByteArray::fromStdString(text));
    auto reopened = readProjectFile(path.toStdString());
    QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.message().c_str());
    QCOMPARE(reopened->problem.xq, shown);
}

void TestProjectRefs::saveRereadsEachFileOnceAndKeepsUnchangedOnes()
{
    // Two fields naming one file; an edited matrix is written inline as before, with no note
    // (its file is not even read again: it is not written as a reference).
    QTemporaryDir tmp;
    const QString path = writeReferencedTutorial(tmp.path());
    json root = json::parse(test::readAll(path).toStdString());
    root["weights"]["k"] = json{{"npy", "data/q.npy"}};
    writeFile(path, QByteArray::fromStdString(root.dump()));
    auto project = readProjectFile(path.toStdString());
    QVERIFY2(project.ok(), project.ok() ? "" : project.message().c_str());
    project->problem.xq(0, 0) = 42.5f;
    QVERIFY(QFile::remove(tmp.filePath("data/x.npy")));
    std::vector<std::string> asked;
    SavedReferences references(project->folder, project->folder);
    const json saved = json::parse(serializeProject(*project, [&](const std::string &field, const NpyReference &r) {
        asked.push_back(field);
        return references(field, r);
    }));
    QCOMPARE(asked, (std::vector<std::string>{"weights.q", "weights.k"}));
    QVERIFY(saved["weights"]["q"] == json({{"npy", "data/q.npy"}}));
    QVERIFY(saved["weights"]["k"] == json({{"npy", "data/q.npy"}}));
    QCOMPARE(saved["query"]["x"][0][0].get<double>(), 42.5);
    QVERIFY(references.notes().empty());
}

void TestProjectRefs::badReferencesNameFieldAndFile_data()
{
    QTest::addColumn<QString>("field"); // "query.x" or "weights.q" or "mask.allowed"
    QTest::addColumn<QByteArray>("reference");
    QTest::addColumn<QString>("file");     // written under that name in the folder, when not empty
    QTest::addColumn<QByteArray>("bytes"); // its content
    QTest::addColumn<QString>("message");  // the whole message after "<project path>: "

    const QByteArray ones = raw(std::vector<float>(12, 1.0f));
    QTest::newRow("missing file") << "query.x" << QByteArray(R"({"npy": "nope.npy"})") << "" << QByteArray()
                                  << "query.x: nope.npy: cannot read the file (No such file or directory)";
    QTest::newRow("absolute path") << "query.x" << QByteArray(R"({"npy": "/tmp/x.npy"})") << "" << QByteArray()
                                   << "query.x: /tmp/x.npy: expected a path relative to the project's folder, "
                                      "found an absolute path";
    QTest::newRow("empty path") << "weights.q" << QByteArray(R"({"npy": ""})") << "" << QByteArray()
                                << "weights.q.npy: expected a relative path to a .npy file, found \"\"";
    QTest::newRow("not a string") << "weights.q" << QByteArray(R"({"npy": 3})") << "" << QByteArray()
                                  << "weights.q: expected {\"npy\": \"relative/path.npy\"} with nothing else, found "
                                     "an object";
    QTest::newRow("extra key") << "weights.q" << QByteArray(R"({"npy": "a.npy", "dtype": "f4"})") << "" << QByteArray()
                               << "weights.q: expected {\"npy\": \"relative/path.npy\"} with nothing else, found an "
                                  "object";
    QTest::newRow("other object") << "weights.q" << QByteArray(R"({"file": "a.npy"})") << "" << QByteArray()
                                  << "weights.q: expected a matrix (an array of rows of numbers) or {\"npy\": "
                                     "\"file.npy\"}, found an object";
    QTest::newRow("1-D array") << "query.x" << QByteArray(R"({"npy": "x.npy"})") << "x.npy"
                               << npyFile("<f4", "(12,)", ones)
                               << "query.x: x.npy: expected a 2-D or (batched) 3-D array, found shape (12,)";
    // query.x may be 3-D (a batch, design.md); a weight may not.
    QTest::newRow("3-D array") << "weights.q" << QByteArray(R"({"npy": "x.npy"})") << "x.npy"
                               << npyFile("<f4", "(1, 3, 4)", ones)
                               << "weights.q: x.npy: expected a 2-D array, found shape (1, 3, 4)";
    QTest::newRow("int dtype") << "query.x" << QByteArray(R"({"npy": "x.npy"})") << "x.npy"
                               << npyFile("<i4", "(3, 4)", ones)
                               << "query.x: x.npy: unsupported .npy dtype \"<i4\" (expected '<f2', '<f4' or '<f8': "
                                  "little-endian float16, 32 or 64)";
    QTest::newRow("truncated") << "query.x" << QByteArray(R"({"npy": "x.npy"})") << "x.npy"
                               << npyFile("<f4", "(3, 5)", ones)
                               << "query.x: x.npy: truncated .npy data: the shape needs 60 bytes, found 48";
    std::vector<float> nan(12, 1.0f);
    nan[5] = std::numeric_limits<float>::quiet_NaN();
    QTest::newRow("NaN value") << "query.x" << QByteArray(R"({"npy": "x.npy"})") << "x.npy"
                               << npyFile("<f4", "(3, 4)", raw(nan))
                               << "query.x: x.npy: [1][1]: expected a finite float32 number, found NaN";
    QTest::newRow("float64 beyond float32") << "query.x" << QByteArray(R"({"npy": "x.npy"})") << "x.npy"
                                            << npyFile("<f8", "(3, 4)", raw(std::vector<double>(12, 1e300)))
                                            << "query.x: x.npy: [0][0]: expected a finite float32 number, found "
                                               "Infinity";
    QTest::newRow("wrong shape for the field")
        << "weights.q" << QByteArray(R"({"npy": "q.npy"})") << "q.npy" << npyFile("<f4", "(3, 4)", ones)
        << "weights.q: expected 4 x 3 (d_q x heads*headDimQK), found 3 x 4";
    QTest::newRow("mask of 2s") << "mask.allowed" << QByteArray(R"({"npy": "m.npy"})") << "m.npy"
                                << npyFile("<f4", "(3, 3)", raw(std::vector<float>(9, 2.0f)))
                                << "mask.allowed[0][0]: expected 0 or 1, found 2.0";
    QTest::newRow("a folder") << "query.x" << QByteArray(R"({"npy": "sub"})") << "sub/keep" << QByteArray("x")
                              << "query.x: sub: not a regular file";
}

void TestProjectRefs::badReferencesNameFieldAndFile()
{
    QFETCH(QString, field);
    QFETCH(QByteArray, reference);
    QFETCH(QString, file);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    if (!file.isEmpty())
        writeFile(tmp.filePath(file), bytes);
    json root = tutorial();
    const json ref = json::parse(reference.toStdString());
    if (field == "query.x")
        root["query"]["x"] = ref;
    else if (field == "weights.q")
        root["weights"]["q"] = ref;
    else
        root["mask"] = json{{"allowed", ref}};
    const QString path = tmp.filePath("p.attnscope.json");
    writeFile(path, QByteArray::fromStdString(root.dump()));
    auto project = readProjectFile(path.toStdString());
    QVERIFY(!project.ok());
    QCOMPARE(QString::fromStdString(project.message()), path + ": " + message);
}

void TestProjectRefs::textWithoutAFolderRefusesReferences()
{
    json root = tutorial();
    root["query"]["x"] = json{{"npy", "x.npy"}};
    auto project = parseProject(root.dump());
    QVERIFY(!project.ok());
    QCOMPARE(
        project.message(),
        std::string("query.x: a {\"npy\": ...} reference needs the project's folder (open the project from a file)"));
}

void TestProjectRefs::devZeroAndFifosAreNeverRead()
{
    QTemporaryDir tmp;
    // A relative path that climbs to /dev/zero, and a FIFO with no writer (open() would block).
    QString climb;
    for (int i = 0; i < 40; ++i)
        climb += "../";
    QVERIFY(::mkfifo(tmp.filePath("fifo.npy").toLocal8Bit().constData(), 0600) == 0);
    // The climb leaves the project's folder: refused before it is even looked at.
    for (const QString &target : {climb + "dev/zero", QStringLiteral("fifo.npy")}) {
        json root = tutorial();
        root["query"]["x"] = json{{"npy", target.toStdString()}};
        const QString path = tmp.filePath("p.attnscope.json");
        writeFile(path, QByteArray::fromStdString(root.dump()));
        auto read = test::returnsOnItsOwn([path] { return readProjectFile(path.toStdString()); });
        QVERIFY(read); // returned on its own: neither /dev/zero nor the FIFO was read
        auto &project = *read;
        QVERIFY(!project.ok());
        QVERIFY2(project.message().ends_with(target.startsWith("..") ? "refused: the file is outside the project's "
                                                                       "folder (a reference must lead to a file in "
                                                                       "that folder or a folder below it)"
                                                                     : ": not a regular file"),
                 project.message().c_str());
    }
}

QTEST_GUILESS_MAIN(TestProjectRefs)
#include "tst_projectrefs.moc"
