// The one export-by-suffix that `attnscope-cli export` and File > Export Data share
// (core/formats/TraceDataExport + app/render/DataExport): the suffix picks the format, the files are
// real and read back, errors are typed and write nothing.

#include "RenderTestProjects.h"

#include "core/formats/Npy.h"
#include "core/formats/TraceDataExport.h"
#include "core/formats/TraceExport.h"

#include <QFile>
#include <QGuiApplication>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

class TestDataExport : public QObject
{
    Q_OBJECT

private slots:
    void formatFromSuffix_data();
    void formatFromSuffix();
    void writesEveryFormat();
    void errorsAreTypedAndWriteNothing();
};

void TestDataExport::formatFromSuffix_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("format"); // -1: none
    QTest::newRow("csv") << "out/weights.csv" << int(DataFormat::Csv);
    QTest::newRow("upper case") << "W.NPY" << int(DataFormat::Npy);
    QTest::newRow("npz") << "all.npz" << int(DataFormat::Npz);
    QTest::newRow("json bare suffix") << "json" << int(DataFormat::Json);
    QTest::newRow("xlsx") << "weights.xlsx" << -1;
    QTest::newRow("no suffix") << "dir.npz/weights" << -1;
    QTest::newRow("figure") << "figure.png" << -1;
}

void TestDataExport::formatFromSuffix()
{
    QFETCH(QString, path);
    QFETCH(int, format);
    const auto f = dataFormatFromPath(path.toStdString());
    QCOMPARE(f ? int(*f) : -1, format);
}

void TestDataExport::writesEveryFormat()
{
    const auto c = test::computeJson(test::emptyRowProjectJson("-1e9", 2));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString npy = dir.filePath(QStringLiteral("w.npy"));
    QVERIFY(writeTraceData(TraceLabels::of(c.project), c.trace, npy.toStdString(), "weights", 0).ok());
    auto array = readNpyFile(npy.toStdString());
    QVERIFY2(array, array ? "" : array.message().c_str());
    QCOMPARE(array->shape, (std::vector<std::int64_t>{2, 3, 3}));
    QCOMPARE(array->data[1], double(c.trace.weights[0](0, 1)));

    const QString csv = dir.filePath(QStringLiteral("w.CSV"));
    QVERIFY(writeTraceData(TraceLabels::of(c.project), c.trace, csv.toStdString(), "weights", 1).ok());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 4); // header and three queries
    QVERIFY(lines[1].startsWith(QStringLiteral("x,")));
    QCOMPARE(lines[3].split(QLatin1Char(','))[1].toFloat(), c.trace.weights[1](2, 0));

    for (const char *name : {"all.npz", "all.json"}) {
        const QString path = dir.filePath(QLatin1String(name));
        QVERIFY(writeTraceData(TraceLabels::of(c.project), c.trace, path.toStdString(), "", 0).ok());
        QFile b(path);
        QVERIFY(b.open(QIODevice::ReadOnly));
        const QByteArray bytes = b.readAll();
        QVERIFY(bytes.contains("weights"));
    }
}

void TestDataExport::errorsAreTypedAndWriteNothing()
{
    const auto c = test::computeJson(test::emptyRowProjectJson("-inf", 1));
    QTemporaryDir dir;
    const QString xlsx = dir.filePath(QStringLiteral("w.xlsx"));
    Status s = writeTraceData(TraceLabels::of(c.project), c.trace, xlsx.toStdString(), "weights", 0);
    QCOMPARE(s.kind(), ErrorKind::InvalidInput);
    QVERIFY2(s.message().find(".csv, .npy, .npz or .json") != std::string::npos, s.message().c_str());
    s = writeTraceData(TraceLabels::of(c.project), c.trace, dir.filePath(QStringLiteral("w.npy")).toStdString(),
                       "logits", 0);
    QCOMPARE(s.kind(), ErrorKind::InvalidInput);
    QVERIFY2(s.message().find("logits") != std::string::npos, s.message().c_str());
    s = writeTraceData(TraceLabels::of(c.project), c.trace, dir.filePath(QStringLiteral("w.csv")).toStdString(),
                       "weights", 5);
    QCOMPARE(s.kind(), ErrorKind::InvalidInput);
    s = writeTraceData(TraceLabels::of(c.project), c.trace, dir.filePath(QStringLiteral("missing/w.npy")).toStdString(),
                       "q", 0);
    QCOMPARE(s.kind(), ErrorKind::Io);
    QVERIFY2(s.message().find("missing/w.npy") != std::string::npos, s.message().c_str());
    QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());
}

QTEST_MAIN(TestDataExport)
#include "tst_data_export.moc"
