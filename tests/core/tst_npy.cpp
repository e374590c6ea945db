// The .npy reader on hostile bytes: every malformed header, shape or size is a one-line
// error, checked before anything is allocated; what numpy writes reads back exactly.

#include "../common/TestUtil.h"

#include "core/formats/Npy.h"

#include <QDir>
#include <QObject>
#include <QTest>

#include <cstring>

using namespace attnscope;

namespace {

// A version 1.0 file with the given header text and data bytes.
std::string npyFile(const std::string &header, const std::string &data)
{
    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char((header.size() >> 8) & 0xff);
    return out + header + data;
}

std::string header(const std::string &shape, const std::string &descr = "<f4")
{
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
}

} // namespace

class TestNpy : public QObject
{
    Q_OBJECT

private slots:
    void roundTrip_data();
    void roundTrip();
    void malformed_data();
    void malformed();
    void fuzzRegressions_data();
    void fuzzRegressions();
};

void TestNpy::roundTrip_data()
{
    QTest::addColumn<QList<qint64>>("shape");
    QTest::newRow("matrix") << QList<qint64>{2, 3};
    QTest::newRow("vector") << QList<qint64>{5};
    QTest::newRow("per head") << QList<qint64>{2, 3, 4};
    QTest::newRow("empty") << QList<qint64>{0, 4};
}

void TestNpy::roundTrip()
{
    QFETCH(QList<qint64>, shape);
    std::vector<std::int64_t> dims(shape.begin(), shape.end());
    std::int64_t count = 1;
    for (auto d : dims)
        count *= d;
    std::vector<float> values(static_cast<size_t>(count));
    for (size_t i = 0; i < values.size(); ++i)
        values[i] = 0.5f * float(i) - 1.0f;
    auto array = parseNpy(npyBytes(dims, values.data()));
    QVERIFY2(array.ok(), array.ok() ? "" : array.message().c_str());
    QCOMPARE(array->shape, dims);
    QCOMPARE(array->size(), count);
    for (size_t i = 0; i < values.size(); ++i)
        QCOMPARE(array->data[i], double(values[i]));
}

void TestNpy::malformed_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    auto row = [](const char *name, const std::string &bytes, const char *message) {
        QTest::newRow(name) << QByteArray::fromStdString(bytes) << QString::fromUtf8(message);
    };
    row("no magic", "hello world", "not a .npy file (missing the \\x93NUMPY magic)");
    row("version 9", std::string("\x93NUMPY\x09\x00\x00\x00", 10), "unsupported .npy version 9");
    row("header past the end", std::string("\x93NUMPY\x01\x00\xff\xff", 10) + "{'descr'",
        "truncated .npy header: expected 65535 bytes, found 8");
    // std::stoll threw on these (an uncaught exception through the reader).
    row("letters in the shape", npyFile(header("(x, 3)"), std::string(24, '\0')),
        "bad .npy shape \"(x, 3)\" (expected a tuple of whole numbers)");
    row("dimension past int64", npyFile(header("(99999999999999999999999,)"), ""),
        "bad .npy shape \"(99999999999999999999999,)\" (expected a tuple of whole numbers)");
    row("negative dimensions", npyFile(header("(-2, -3)"), std::string(24, '\0')),
        "bad .npy shape \"(-2, -3)\" (expected a tuple of whole numbers)");
    row("empty item", npyFile(header("(2,,3)"), std::string(24, '\0')),
        "bad .npy shape \"(2,,3)\" (expected a tuple of whole numbers)");
    // The product overflowed int64 and matched a tiny file, or allocated terabytes.
    row("overflowing product", npyFile(header("(4294967296, 4294967296, 4)"), std::string(64, '\0')),
        "truncated .npy data: the shape (4294967296, 4294967296, 4) needs more bytes, found 64");
    row("huge count", npyFile(header("(1000000000000,)", "<f8"), std::string(8, '\0')),
        "truncated .npy data: the shape (1000000000000,) needs 8000000000000 bytes, found 8");
    row("short data", npyFile(header("(2, 3)"), std::string(20, '\0')),
        "truncated .npy data: the shape (2, 3) needs 24 bytes, found 20");
    // headerValue read past the end of the header.
    row("shape at the end", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape':", ""),
        "bad .npy header: no readable 'shape' entry");
    row("unclosed tuple", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", std::string(24, '\0')),
        "bad .npy header: no readable 'shape' entry");
    row("no descr", npyFile("{'fortran_order': False, 'shape': (2,), }", std::string(8, '\0')),
        "bad .npy header: no readable 'descr' entry");
    row("escape in the dtype", npyFile(header("(2,)", "\x1b[2J"), std::string(8, '\0')),
        "unsupported .npy dtype \"\\x1b[2J\" (expected '<f4' or '<f8')");
    row("fortran order", npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", std::string(8, '\0')),
        "unsupported .npy layout: only C order is read");
}

void TestNpy::malformed()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    auto array = parseNpy(bytes.toStdString());
    QVERIFY2(!array.ok(), "a malformed .npy was accepted");
    QCOMPARE(QString::fromStdString(array.message()), message);
}

void TestNpy::fuzzRegressions_data()
{
    QTest::addColumn<QString>("path");
    const QDir dir(test::sourcePath("tests/fuzz/regressions/npy"));
    const auto files = dir.entryList(QDir::Files);
    QVERIFY(files.size() >= 5);
    for (const QString &f : files)
        QTest::newRow(qPrintable(f)) << dir.filePath(f);
}

void TestNpy::fuzzRegressions()
{
    QFETCH(QString, path);
    auto array = readNpyFile(path.toStdString());
    QVERIFY(!array.ok());
    const std::string &message = array.message();
    QVERIFY2(message.find('\n') == std::string::npos && message.size() < 400, message.c_str());
}

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
