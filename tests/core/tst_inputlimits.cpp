// Limits on what comes from outside: memory limits that follow the machine, bounded file
// reads that never hang, output files that are whole or absent with the system's reason for
// a failure, and user text made safe for a one-line message.

#include "core/attention/Validation.h"
#include "core/io/FileIo.h"
#include "core/io/MemoryLimits.h"
#include "core/io/UserText.h"

#include "../common/BoundedCall.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fstream>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace attnscope;

namespace {

// The issue's example: 40,000 one-dimensional tokens, one head of size 1. The file is 480 KB;
// the scores and weights alone take 12.8 GB.
AttentionProblem fortyThousandTokens()
{
    AttentionProblem p;
    p.xq = MatrixF::Constant(40000, 1, 0.5f);
    p.weights.q = p.weights.k = p.weights.v = MatrixF::Ones(1, 1);
    return p;
}

// Sets an environment variable for the scope of one test.
struct ScopedEnv {
    QByteArray name;
    ScopedEnv(const char *n, const QByteArray &value) : name(n) { qputenv(n, value); }
    ~ScopedEnv() { qunsetenv(name.constData()); }
};

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestInputLimits : public QObject
{
    Q_OBJECT

private slots:
    void formatBytes_data();
    void formatBytes();
    void budgetFollowsAddressSpaceLimit();
    void fortyThousandTokensRefusedWithTheNumbers();
    void devZeroRefusedQuickly();
    void fifoWithoutWriterDoesNotHang();
    void largeFileRefusedBySizeBeforeReading();
    void writeToFullDiskGivesTheReason();
    void fileSizeLimitKeepsTheOldFile();
    void unfinishedWriterLeavesNothing();
    void sameFileSeesThroughLinks();
    void printableText_data();
    void printableText();
    void terminalText_data();
    void terminalText();
    void incompleteUtf8Tail();
};

void TestInputLimits::formatBytes_data()
{
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("text");
    QTest::newRow("bytes") << qint64(17) << "17 bytes";
    QTest::newRow("KiB") << qint64(3072) << "3.0 KiB";
    QTest::newRow("MiB") << qint64(512) * 1024 * 1024 << "512 MiB";
    QTest::newRow("GiB") << qint64(14400960000) << "13.4 GiB";
}

void TestInputLimits::formatBytes()
{
    QFETCH(qint64, bytes);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(attnscope::formatBytes(bytes)), text);
}

void TestInputLimits::budgetFollowsAddressSpaceLimit()
{
    // `prlimit --as` on the process: the budget must shrink with it, read at the call.
    const MemoryInfo before = memoryInfo();
    QVERIFY(before.physical > 0 && before.usable() <= before.physical);
    rlimit old{};
    QVERIFY(::getrlimit(RLIMIT_AS, &old) == 0);
    std::ifstream status("/proc/self/status");
    std::string line;
    long long vmKb = 0;
    while (std::getline(status, line))
        if (std::sscanf(line.c_str(), "VmSize: %lld kB", &vmKb) == 1)
            break;
    QVERIFY(vmKb > 0);
    const std::int64_t headroom = std::int64_t(1) << 30;
    rlimit capped = old;
    capped.rlim_cur = rlim_t(vmKb * 1024 + headroom);
    QVERIFY(::setrlimit(RLIMIT_AS, &capped) == 0);
    const std::int64_t budget = memoryBudget();
    const std::int64_t left = memoryInfo().addressSpaceLeft;
    QVERIFY(::setrlimit(RLIMIT_AS, &old) == 0);
    QVERIFY2(left > headroom / 2 && left <= headroom, qPrintable(QString::number(left)));
    QVERIFY2(budget <= left && budget > left / 2, qPrintable(QString::number(budget)));
}

void TestInputLimits::fortyThousandTokensRefusedWithTheNumbers()
{
    // The fixed 16 GiB limit let this through on an 8 GB machine (issue 8, defect 15).
    ScopedEnv limit("ATTNSCOPE_MEMORY_LIMIT", "8G");
    const AttentionProblem p = fortyThousandTokens();
    QCOMPARE(traceBytes(p), std::int64_t(14400960000));
    const QString expected =
        QStringLiteral("size: this problem needs 13.4 GiB for its intermediate tensors; this machine allows 8.0 GiB");
    Status s = validateProblem(p);
    QVERIFY(!s.ok());
    QCOMPARE(QString::fromStdString(s.message()), expected);
    QCOMPARE(s.kind(), ErrorKind::TooLarge);
    Status fits = checkFitsInMemory(p);
    QVERIFY(!fits.ok());
    QCOMPARE(QString::fromStdString(fits.message()), expected);
    QCOMPARE(fits.kind(), ErrorKind::TooLarge);
}

void TestInputLimits::devZeroRefusedQuickly()
{
    // Both reads return on their own: the first NUL byte, or the limit, ends them.
    auto textRead = test::returnsOnItsOwn([] { return readInputFile("/dev/zero", maxInputFileBytes()); });
    QVERIFY(textRead);
    auto &text = *textRead;
    QVERIFY(!text.ok());
    QCOMPARE(QString::fromStdString(text.message()),
             QStringLiteral("/dev/zero: not a text file (a NUL byte at offset 0)"));
    auto binaryRead = test::returnsOnItsOwn([] { return readInputFile("/dev/zero", 1 << 20, false); });
    QVERIFY(binaryRead);
    auto &binary = *binaryRead;
    QVERIFY(!binary.ok());
    QCOMPARE(
        QString::fromStdString(binary.message()),
        QStringLiteral("/dev/zero: the file is larger than 1.0 MiB; files up to 1.0 MiB can be read on this machine"));
    QCOMPARE(binary.kind(), ErrorKind::TooLarge);
}

void TestInputLimits::fifoWithoutWriterDoesNotHang()
{
    QTemporaryDir tmp;
    const QString fifo = tmp.filePath("p.attnscope.json");
    QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
    auto text = test::returnsOnItsOwn([fifo] { return readInputFile(fifo.toStdString(), maxInputFileBytes()); });
    QVERIFY(text);                           // returned on its own: the open did not wait for a writer
    QVERIFY(text->ok() && (*text)->empty()); // no writer: end of file at once
}

void TestInputLimits::largeFileRefusedBySizeBeforeReading()
{
    QTemporaryDir tmp;
    const QString path = tmp.filePath("big.attnscope.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QVERIFY(f.resize(qint64(3) << 30)); // sparse: nothing is written to the disk
    f.close();
    auto text = readInputFile(path.toStdString(), std::int64_t(1) << 30);
    QVERIFY(!text.ok());
    QCOMPARE(QString::fromStdString(text.message()),
             path + QStringLiteral(": the file is 3.0 GiB; files up to 1.0 GiB can be read on this machine"));
    QCOMPARE(text.kind(), ErrorKind::TooLarge);
    QVERIFY(maxInputFileBytes() <= memoryBudget() / 16);
}

void TestInputLimits::writeToFullDiskGivesTheReason()
{
    // A full disk was reported as "Unknown error" (issue 8, defect 17). A private copy of the
    // /dev/full device where mknod is allowed, so a writer that replaced its target instead of
    // writing through could never clobber the system's /dev/full.
    QTemporaryDir tmp;
    QString full = tmp.filePath("full");
    if (::mknod(full.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 7)) != 0)
        full = QStringLiteral("/dev/full");
    AtomicFileWriter out(full.toStdString());
    QVERIFY(out.open().ok());
    out.write(std::string(1 << 20, 'x'));
    Status s = out.commit();
    QVERIFY(!s.ok());
    QCOMPARE(QString::fromStdString(s.message()), full + QStringLiteral(": write failed (No space left on device)"));
    QCOMPARE(s.kind(), ErrorKind::Io);
    QVERIFY(QFileInfo(full).exists() && !QFileInfo(full).isFile()); // still the device
}

void TestInputLimits::fileSizeLimitKeepsTheOldFile()
{
    QTemporaryDir tmp;
    const QString path = tmp.filePath("out.npy");
    QFile old(path);
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write("old");
    old.close();
    rlimit before{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    const auto previousHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = before;
    small.rlim_cur = 4096;
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    AtomicFileWriter out(path.toStdString());
    const bool opened = out.open().ok();
    out.write(std::string(1 << 20, 'x'));
    Status s = out.commit();
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, previousHandler);
    QVERIFY(opened);
    QVERIFY(!s.ok());
    QCOMPARE(QString::fromStdString(s.message()), path + QStringLiteral(": write failed (File too large)"));
    QCOMPARE(readAll(path), QByteArray("old"));
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

void TestInputLimits::unfinishedWriterLeavesNothing()
{
    QTemporaryDir tmp;
    {
        AtomicFileWriter out(tmp.filePath("x.json").toStdString());
        QVERIFY(out.open().ok());
        out.write("{}");
    }
    QVERIFY(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).isEmpty());
    AtomicFileWriter ok(tmp.filePath("x.json").toStdString());
    QVERIFY(ok.open().ok());
    ok.write("{}");
    QVERIFY(ok.commit().ok());
    QCOMPARE(readAll(tmp.filePath("x.json")), QByteArray("{}"));
    QCOMPARE(QFileInfo(tmp.filePath("x.json")).permissions() & QFile::ReadOther, QFile::ReadOther);
}

void TestInputLimits::sameFileSeesThroughLinks()
{
    QTemporaryDir tmp;
    const std::string a = tmp.filePath("a.json").toStdString(), b = tmp.filePath("b.json").toStdString();
    QFile fa(QString::fromStdString(a)), fb(QString::fromStdString(b));
    QVERIFY(fa.open(QIODevice::WriteOnly) && fb.open(QIODevice::WriteOnly));
    fa.close();
    fb.close();
    QVERIFY(::symlink(a.c_str(), tmp.filePath("link.json").toLocal8Bit().constData()) == 0);
    QVERIFY(::link(a.c_str(), tmp.filePath("hard.json").toLocal8Bit().constData()) == 0);
    QVERIFY(sameFile(a, a));
    QVERIFY(sameFile(a, tmp.filePath("./sub/../a.json").toStdString()) == false); // sub/ does not exist
    QVERIFY(sameFile(a, tmp.filePath("link.json").toStdString()));
    QVERIFY(sameFile(tmp.filePath("hard.json").toStdString(), a));
    QVERIFY(!sameFile(a, b));
    QVERIFY(!sameFile(a, tmp.filePath("missing.json").toStdString()));
}

void TestInputLimits::printableText_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("maxBytes");
    QTest::addColumn<QString>("shown");
    QTest::newRow("plain") << QByteArray("token") << 60 << "token";
    QTest::newRow("UTF-8 kept") << QByteArray("größe ≤ 3 日本") << 60 << "größe ≤ 3 日本";
    QTest::newRow("escape sequence") << QByteArray("\x1b[2Jx") << 60 << "\\x1b[2Jx";
    QTest::newRow("newline and tab") << QByteArray("a\nb\tc\r") << 60 << "a\\x0ab\\x09c\\x0d";
    QTest::newRow("backslash") << QByteArray("a\\b") << 60 << "a\\\\b";
    QTest::newRow("C1 CSI") << QByteArray("\xc2\x9b"
                                          "31m")
                            << 60 << "\\u009b31m";
    QTest::newRow("line separator") << QByteArray("a\xe2\x80\xa8"
                                                  "b")
                                    << 60 << "a\\u2028b";
    QTest::newRow("bidi override") << QByteArray("\xe2\x80\xae"
                                                 "abc")
                                   << 60 << "\\u202eabc";
    QTest::newRow("invalid UTF-8") << QByteArray("\xff\xc3") << 60 << "\\xff\\xc3";
    QTest::newRow("overlong NUL") << QByteArray("\xc0\x80") << 60 << "\\xc0\\x80";
    QTest::newRow("truncated") << QByteArray(100000, 'A') << 10 << "AAAAAAAAAA...";
    QTest::newRow("no split sequence") << QByteArray("aé") << 2 << "a...";
}

void TestInputLimits::printableText()
{
    QFETCH(QByteArray, text);
    QFETCH(int, maxBytes);
    QFETCH(QString, shown);
    QCOMPARE(QString::fromStdString(attnscope::printableText(text.toStdString(), size_t(maxBytes))), shown);
}

void TestInputLimits::terminalText_data()
{
    // What attnscope-cli's stdout and stderr let through: lines, JSON's escapes, text; never a
    // control character.
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("shown");
    QTest::newRow("lines kept") << QByteArray("a\nb\n") << "a\nb\n";
    QTest::newRow("JSON escapes kept") << QByteArray(R"({"t": "a\"\\b\u001b"})") << R"({"t": "a\"\\b\u001b"})";
    QTest::newRow("window title") << QByteArray("\x1b]0;x\x07") << "\\u001b]0;x\\u0007";
    QTest::newRow("tab and CR") << QByteArray("a\tb\r") << "a\\u0009b\\u000d";
    QTest::newRow("C1 CSI") << QByteArray("\xc2\x9b"
                                          "2J")
                            << "\\u009b2J";
    QTest::newRow("line separator") << QByteArray("\xe2\x80\xa8") << "\\u2028";
    QTest::newRow("invalid UTF-8") << QByteArray("\xff") << "\\xff";
    QTest::newRow("UTF-8 kept") << QByteArray("größe 日本") << "größe 日本";
    QTest::newRow("never cut") << QByteArray(100000, 'A') << QString(100000, 'A');
}

void TestInputLimits::terminalText()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, shown);
    QCOMPARE(QString::fromStdString(attnscope::terminalText(text.toStdString())), shown);
}

void TestInputLimits::incompleteUtf8Tail()
{
    using attnscope::incompleteUtf8Tail;
    QCOMPARE(incompleteUtf8Tail(""), size_t(0));
    QCOMPARE(incompleteUtf8Tail("abc"), size_t(0));
    QCOMPARE(incompleteUtf8Tail("a\xc3"), size_t(1));        // é cut after its lead byte
    QCOMPARE(incompleteUtf8Tail("a\xc3\xa9"), size_t(0));    // é whole
    QCOMPARE(incompleteUtf8Tail("\xe6\x97"), size_t(2));     // 日 cut after two bytes
    QCOMPARE(incompleteUtf8Tail("\xf0\x9f\x98"), size_t(3)); // an emoji cut after three
    QCOMPARE(incompleteUtf8Tail("\xf0\x9f\x98\x80"), size_t(0));
    QCOMPARE(incompleteUtf8Tail("a\x80"), size_t(0)); // a stray continuation byte: nothing to wait for
}

QTEST_GUILESS_MAIN(TestInputLimits)
#include "tst_inputlimits.moc"
