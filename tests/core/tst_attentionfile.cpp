// Attention files as users bring them: what each container and dtype gives, and every kind of
// broken file refused with one line that names the problem. Broken files are real files,
// written by mutating the NumPy-made fixtures (tests/fixtures/attention).

#include "../common/TestUtil.h"

#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"
#include "core/formats/Safetensors.h"

#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>

using namespace attnscope;

namespace {

QByteArray fixtureBytes(const QString &name)
{
    QFile f(test::sourcePath("tests/fixtures/attention/" + name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("missing fixture %s", qPrintable(name));
    return f.readAll();
}

QByteArray safetensors(const QByteArray &header, const QByteArray &data)
{
    QByteArray out(8, '\0');
    const quint64 n = quint64(header.size());
    for (int i = 0; i < 8; ++i)
        out[i] = char((n >> (8 * i)) & 0xff);
    return out + header + data;
}

} // namespace

class TestAttentionFile : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void describesWhatItRead_data();
    void describesWhatItRead();
    void brokenFilesAreRefused_data();
    void brokenFilesAreRefused();
    void safetensorsHeaderChecks_data();
    void safetensorsHeaderChecks();
    void zip64RecordOfAFileUnder56Bytes_data();
    void zip64RecordOfAFileUnder56Bytes();
    void zip64ArchivesAreRead_data();
    void zip64ArchivesAreRead();
    void softmaxRowsAreAttention_data();
    void softmaxRowsAreAttention();
    void maskedAndSinkRowsAreAttention();
    void scoresAreFoundAndSoftmaxApplies();

private:
    QString write(const QString &name, const QByteArray &bytes)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }
    QTemporaryDir m_dir;
};

void TestAttentionFile::describesWhatItRead_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("container");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<bool>("mapped");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("storageBytes");
    QTest::newRow("npy float16 stays half, mapped") << "lhtt_f16.npy"
                                                    << "npy"
                                                    << "float16" << true << 3 << 4 << 2;
    QTest::newRow("npy float32 mapped") << "lhtt_f32.npy"
                                        << "npy"
                                        << "float32" << true << 3 << 4 << 4;
    QTest::newRow("npy float64 to float32") << "lhtt_f64.npy"
                                            << "npy"
                                            << "float64" << false << 3 << 4 << 4;
    QTest::newRow("safetensors bf16 to float32") << "lhtt_bf16_st.safetensors"
                                                 << "safetensors"
                                                 << "bfloat16" << false << 3 << 4 << 4;
    QTest::newRow("safetensors f16 mapped") << "lhtt_f16_st.safetensors"
                                            << "safetensors"
                                            << "float16" << true << 3 << 4 << 2;
    QTest::newRow("npz stored, mapped") << "lhtt_stored.npz"
                                        << "npz"
                                        << "float32" << true << 3 << 4 << 4;
    QTest::newRow("npz deflated, picked by name") << "lhtt_deflated.npz"
                                                  << "npz"
                                                  << "float16" << false << 3 << 4 << 2;
    QTest::newRow("[H,T,T] is one layer") << "htt_f32.npy"
                                          << "npy"
                                          << "float32" << true << 1 << 4 << 4;
    QTest::newRow("[T,T] is one head") << "tt_f64.npy"
                                       << "npy"
                                       << "float64" << false << 1 << 1 << 4;
}

void TestAttentionFile::describesWhatItRead()
{
    QFETCH(QString, file);
    QFETCH(QString, container);
    QFETCH(QString, dtype);
    QFETCH(bool, mapped);
    QFETCH(int, layers);
    QFETCH(int, heads);
    QFETCH(int, storageBytes);
    AttentionFileInfo info;
    auto set = readAttentionFile(test::sourcePathStd("tests/fixtures/attention/" + file), &info);
    QVERIFY2(set.ok(), set.ok() ? "" : set.message().c_str());
    QCOMPARE(QString::fromStdString(info.container), container);
    QCOMPARE(QString::fromStdString(info.dtype), dtype);
    QCOMPARE(info.mapped, mapped);
    QCOMPARE(set->layers(), layers);
    QCOMPARE(set->heads(), heads);
    QCOMPARE(set->queries(), 11);
    // Values are kept at the file's precision (half stays half), never as doubles.
    QCOMPARE(set->valueBytes(), std::int64_t(layers) * heads * 11 * 11 * storageBytes);
}

void TestAttentionFile::brokenFilesAreRefused_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("sidecar");  // written as NAME.tokens.json when not empty
    QTest::addColumn<QString>("expected"); // a part of the one-line message

    const QByteArray f32 = fixtureBytes("lhtt_f32.npy");
    QTest::newRow("truncated data") << "a.npy" << f32.left(f32.size() - 10) << QString()
                                    << "needs 5808 bytes from offset 128, the file has 5798 (truncated)";
    QByteArray longHeader = f32;
    longHeader[8] = char(0xff);
    longHeader[9] = char(0xff);
    QTest::newRow("header length past the end") << "b.npy" << longHeader << QString() << "header length at offset 8";
    QByteArray intDtype = f32;
    intDtype.replace("'<f4'", "'<i4'");
    QTest::newRow("unknown dtype") << "c.npy" << intDtype << QString() << "dtype \"<i4\" is not an attention dtype";
    QByteArray bigEndian = f32;
    bigEndian.replace("'<f4'", "'>f4'");
    QTest::newRow("big-endian") << "d.npy" << bigEndian << QString() << "little-endian";
    QByteArray nan = f32;
    const float qnan = std::nanf("");
    std::memcpy(nan.data() + 128 + 4 * (2 * 121 + 5 * 11 + 3), &qnan, 4); // [0, 2, 5, 3]
    QTest::newRow("NaN") << "e.npy" << nan << QString() << "value [0, 2, 5, 3] is NaN";
    QTest::newRow("tokens do not match the shape") << "f.npy" << f32 << R"({"tokens": ["a", "b", "c"]})"
                                                   << "tokens: expected 11 labels (one per query), found 3";
    QTest::newRow("sidecar is not JSON") << "g.npy" << f32 << "{\"tokens\": ["
                                         << "not valid JSON";
    QByteArray rank5 = f32;
    rank5.replace("(3, 4, 11, 11)", "(1,3,4,11,11) "); // same header length
    QTest::newRow("five axes") << "h.npy" << rank5 << QString() << "expected [layers, heads, queries, keys]";
    QTest::newRow("empty file") << "i.npy" << QByteArray() << QString() << "not a .npy file";
    QByteArray zip = fixtureBytes("lhtt_deflated.npz");
    zip[200] = char(zip[200] ^ 0x5a); // inside the first member's deflate stream
    QTest::newRow("npz corrupt member") << "j.npz" << zip << QString() << "ZIP member \"attentions.npy\"";
    QByteArray bomb = fixtureBytes("lhtt_deflated.npz");
    const int directory = bomb.indexOf(QByteArray("PK\x01\x02", 4));
    const quint32 claimed = 1u << 30; // 1 GiB from 1.8 KB of deflate data (found by fuzz_attentionfile)
    std::memcpy(bomb.data() + directory + 24, &claimed, 4);
    QTest::newRow("npz member claims more than deflate can give")
        << "n.npz" << bomb << QString() << "claims 1073741824 bytes from 1800 compressed";
    QTest::newRow("npz truncated") << "k.npz" << fixtureBytes("lhtt_stored.npz").left(3000) << QString()
                                   << "not a ZIP archive";
    QByteArray st = fixtureBytes("lhtt_f32_st.safetensors");
    QTest::newRow("safetensors truncated") << "l.safetensors" << st.left(st.size() - 4) << QString()
                                           << "data_offsets end 5808 is past the 5804 bytes of data";
    QByteArray stDtype = st;
    stDtype.replace("\"F32\"", "\"I32\"");
    QTest::newRow("safetensors integer dtype")
        << "m.safetensors" << stDtype << QString() << "has dtype \"I32\" (expected F16, BF16, F32 or F64)";
}

void TestAttentionFile::brokenFilesAreRefused()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, sidecar);
    QFETCH(QString, expected);
    const QString path = write(name, bytes);
    const QString sidecarPath = path.left(path.lastIndexOf('.')) + ".tokens.json";
    QFile::remove(sidecarPath);
    if (!sidecar.isEmpty())
        write(QFileInfo(sidecarPath).fileName(), sidecar.toUtf8());
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(!set.ok());
    const QString message = QString::fromStdString(set.message());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(message.startsWith(path), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
}

void TestAttentionFile::safetensorsHeaderChecks_data()
{
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("expected");
    const QByteArray data(16, '\0');
    QTest::newRow("overlapping offsets")
        << safetensors(
               R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               data)
        << "tensor \"b\": data_offsets [4, 12] overlap the tensor before it (which ends at 8)";
    QTest::newRow("size does not match the shape")
        << safetensors(R"({"a":{"dtype":"F16","shape":[3],"data_offsets":[0,16]}})", data)
        << "F16 3 values need 6 bytes, data_offsets give 16";
    QTest::newRow("header length past the end") << QByteArray("\xff\xff\xff\xff\x00\x00\x00\x00{}", 10)
                                                << "header length 4294967295 at offset 0 runs past the end";
    QTest::newRow("duplicate tensor")
        << safetensors(
               R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
               data)
        << "given twice";
    QTest::newRow("hole in the data") << safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data)
                                      << "belong to no tensor";
    QTest::newRow("negative size") << safetensors(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,16]}})", data)
                                   << "shape holds -2, not a size";
    QTest::newRow("deep nesting") << safetensors(QByteArray(40, '[') + QByteArray(40, ']'), data)
                                  << "not a JSON object";
    QTest::newRow("nested metadata")
        << safetensors(R"({"__metadata__":{"x":{"y":"z"}},"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                       data)
        << "__metadata__.x: expected a string";
    QTest::newRow("too short") << QByteArray("abc") << "shorter than the 8-byte header length";
}

void TestAttentionFile::safetensorsHeaderChecks()
{
    QFETCH(QByteArray, file);
    QFETCH(QString, expected);
    auto keep = std::make_shared<QByteArray>(file);
    auto parsed = SafetensorsFile::parse(reinterpret_cast<const unsigned char *>(keep->constData()),
                                         std::uint64_t(keep->size()), keep);
    QVERIFY(!parsed.ok());
    const QString message = QString::fromStdString(parsed.message());
    QVERIFY2(message.contains(expected), qPrintable(message));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
}

// A 46-byte .npz: a ZIP64 locator 20 bytes before an end record that defers to the ZIP64 one.
// The record's offset was checked against `zip.size() - 56`, which wraps below 56 bytes, so the
// record was read from wherever the locator said: past the end (ASan), or far (a crash in any
// build). Inputs kept as fuzz regressions (tests/fuzz/make_zip64_inputs.py wrote them).
void TestAttentionFile::zip64RecordOfAFileUnder56Bytes_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("offset");
    QTest::newRow("just past the end") << "zip64-locator-in-46-bytes-past-end"
                                       << "46";
    QTest::newRow("a terabyte away") << "zip64-locator-in-46-bytes-far"
                                     << "1099511627776";
}

void TestAttentionFile::zip64RecordOfAFileUnder56Bytes()
{
    QFETCH(QString, input);
    QFETCH(QString, offset);
    const QByteArray file = test::readAll(test::sourcePath("tests/fuzz/regressions/attentionfile/" + input));
    QCOMPARE(file.size(), 46);
    const QString expected = "ZIP64 end-of-directory record: offset " + offset + " is not one";
    // From memory of exactly the file's size (told as a ZIP by its first bytes), as the fuzz
    // target reads it: a read past the end is a heap overflow under ASan.
    auto bytes = std::make_shared<const std::string>(file.constData(), std::size_t(file.size()));
    auto set = parseAttentionBytes(*bytes, bytes);
    QVERIFY(!set.ok());
    QVERIFY2(QString::fromStdString(set.message()).contains(expected), set.message().c_str());
    // And as the .npz file a user opens.
    const QString path = write("short.npz", file);
    auto fromFile = readAttentionFile(path.toStdString());
    QVERIFY(!fromFile.ok());
    QVERIFY2(QString::fromStdString(fromFile.message()).contains(expected), fromFile.message().c_str());
}

// Archives written with ZIP64 records and extra fields throughout (as Java or 7-Zip's -mzip64
// write them) read like the others.
void TestAttentionFile::zip64ArchivesAreRead_data()
{
    QTest::addColumn<QString>("file");
    QTest::newRow("stored") << "lhtt_zip64_stored.npz";
    QTest::newRow("deflated, two members") << "lhtt_zip64_deflated.npz";
}

void TestAttentionFile::zip64ArchivesAreRead()
{
    QFETCH(QString, file);
    AttentionFileInfo info;
    auto set = readAttentionFile(test::sourcePathStd("tests/fuzz/corpus/attentionfile/" + file), &info);
    QVERIFY2(set.ok(), set.ok() ? "" : set.message().c_str());
    QCOMPARE(QString::fromStdString(info.container), QStringLiteral("npz"));
    QCOMPARE(set->layers(), 2);
    QCOMPARE(set->heads(), 2);
    QCOMPARE(set->queries(), 5);
    double rowSum = 0;
    for (int j = 0; j < 5; ++j)
        rowSum += set->at(0, 1, 1, 4, j);
    QVERIFY(std::abs(rowSum - 1.0) < 1e-5);
}

void TestAttentionFile::softmaxRowsAreAttention_data()
{
    QTest::addColumn<QString>("file");
    // NumPy's softmax rows, rounded to each dtype: float16 and bfloat16 rows sum to 1 only within
    // their precision, and must still count as summing to 1.
    for (const char *file : {"lhtt_f16.npy", "lhtt_bf16_st.safetensors", "lhtt_f32.npy", "lhtt_f64.npy",
                             "lhtt_deflated.npz", "cross_htt_f32.npy"})
        QTest::newRow(file) << file;
}

void TestAttentionFile::softmaxRowsAreAttention()
{
    QFETCH(QString, file);
    AttentionFileInfo info;
    auto set = readAttentionFile(test::sourcePathStd("tests/fixtures/attention/" + file), &info);
    QVERIFY2(set.ok(), set.ok() ? "" : set.message().c_str());
    const RowSumCheck &rows = info.rows;
    QCOMPARE(rows.rows, std::int64_t(set->layers()) * set->heads() * set->queries());
    QVERIFY2(rows.isExact(), rows.summary().c_str());
    QVERIFY(rows.isAttention());
    QCOMPARE(QString::fromStdString(rows.summary()).section(':', 1).trimmed(), QStringLiteral("every row sums to 1"));
}

void TestAttentionFile::maskedAndSinkRowsAreAttention()
{
    // Head 0's rows are scaled to 0.7 (a sink kept out), head 1's row 0 is all zero (masked).
    AttentionFileInfo info;
    auto set = readAttentionFile(test::sourcePathStd("tests/fixtures/attention/rows/sinks_htt_f16.npy"), &info);
    QVERIFY2(set.ok(), set.ok() ? "" : set.message().c_str());
    const RowSumCheck &rows = info.rows;
    QCOMPARE(rows.rows, std::int64_t(10));
    QCOMPARE(rows.below, std::int64_t(5));
    QCOMPARE(rows.zeros, std::int64_t(1));
    QCOMPARE(rows.ones, std::int64_t(4));
    QVERIFY(rows.isAttention());
    QVERIFY(!rows.isExact());
    QCOMPARE(rows.minSum, 0.0);
    QVERIFY(std::abs(rows.maxSum - 1.0) < rows.tolerance);
    const std::string summary = rows.summary();
    QVERIFY2(summary.find("1 of 10 rows all zero (masked)") != std::string::npos, summary.c_str());
    QVERIFY2(summary.find("5 of 10 rows below 1") != std::string::npos, summary.c_str());
}

void TestAttentionFile::scoresAreFoundAndSoftmaxApplies()
{
    AttentionFileInfo info;
    auto set = readAttentionFile(test::sourcePathStd("tests/fixtures/attention/rows/scores_lhtt_f32.npy"), &info);
    QVERIFY2(set.ok(), set.ok() ? "" : set.message().c_str());
    const RowSumCheck &rows = info.rows;
    QVERIFY(!rows.isAttention());
    QVERIFY(rows.negative > 0);
    QCOMPARE(rows.rows, std::int64_t(24));
    QVERIFY(rows.minValue < 0);
    QVERIFY(rows.maxSum > 1.5);
    QVERIFY2(rows.summary().rfind("row sums ", 0) == 0, rows.summary().c_str());
    QVERIFY2(rows.summary().find(" rows with negative values") != std::string::npos, rows.summary().c_str());

    // Softmax over each row, against NumPy's in float64 of the same stored values.
    auto soft = softmaxRows(*set);
    QVERIFY2(soft.ok(), soft.ok() ? "" : soft.message().c_str());
    QVERIFY(checkRowSums(*soft, 1e-6).isExact());
    auto expected =
        readNpyFile(test::sourcePathStd("tests/fixtures/attention/rows/expected_scores_lhtt_f32_softmax.npy"));
    QVERIFY2(expected.ok(), expected.ok() ? "" : expected.message().c_str());
    QCOMPARE(expected->data.size(), std::size_t(2 * 2 * 6 * 6));
    double worst = 0;
    std::size_t n = 0;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h)
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 6; ++j)
                    worst = std::max(worst, std::abs(double(soft->at(0, l, h, i, j)) - expected->data[n++]));
    QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
}

QTEST_GUILESS_MAIN(TestAttentionFile)
#include "tst_attentionfile.moc"
