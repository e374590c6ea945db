// Files that change under their readers (issue 20, item 1), and files that would block them
// (item 5). np.save and torch.save truncate a file in place and write it again, so re-running the
// script that dumped an attention file while AttnScope shows it used to kill the process with
// SIGBUS at the next read of a page past the new end. Reads of a mapped file must never crash,
// and every reader must be able to tell that what it read is no longer the file.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"
#include "core/formats/Safetensors.h"
#include "core/io/MappedFile.h"
#include "core/models/TransformerModel.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnscope;

namespace {

constexpr int kLayers = 2, kHeads = 2, kT = 64;

// Distinct, non-zero values, so that a zero read where the file ended is visible.
std::vector<float> values()
{
    std::vector<float> v(std::size_t(kLayers * kHeads * kT * kT));
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = 1.0f + float(i % 97) / 128.0f;
    return v;
}

QByteArray npy(bool half)
{
    const std::vector<float> v = values();
    std::string header = npyHeader({kLayers, kHeads, kT, kT});
    if (!half)
        return QByteArray::fromStdString(header) +
               QByteArray(reinterpret_cast<const char *>(v.data()), qsizetype(v.size() * sizeof(float)));
    header.replace(header.find("<f4"), 3, "<f2");
    QByteArray out = QByteArray::fromStdString(header);
    for (float f : v) {
        const auto h = Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f));
        out.append(reinterpret_cast<const char *>(&h), 2);
    }
    return out;
}

QByteArray safetensors()
{
    const std::vector<float> v = values();
    const QByteArray data(reinterpret_cast<const char *>(v.data()), qsizetype(v.size() * sizeof(float)));
    const QByteArray header = QStringLiteral(R"({"attentions":{"dtype":"F32","shape":[%1,%2,%3,%3],)"
                                             R"("data_offsets":[0,%4]}})")
                                  .arg(kLayers)
                                  .arg(kHeads)
                                  .arg(kT)
                                  .arg(data.size())
                                  .toUtf8();
    QByteArray out(8, '\0');
    for (int i = 0; i < 8; ++i)
        out[i] = char((quint64(header.size()) >> (8 * i)) & 0xff);
    return out + header + data;
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

// A modification time well in the past, so that a rewrite within the file system's clock tick
// still changes it.
void agePast(const QString &path)
{
    const timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
    QCOMPARE_EQ(::utimensat(AT_FDCWD, QFile::encodeName(path).constData(), times, 0), 0);
}

// What np.save does to an existing file: open with O_TRUNC, then write, here only `keep` bytes.
void truncateInPlace(const QString &path, const QByteArray &keep)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_TRUNC);
    QVERIFY(fd >= 0);
    QCOMPARE_EQ(::write(fd, keep.constData(), std::size_t(keep.size())), ssize_t(keep.size()));
    ::close(fd);
}

// Every value of every map, read through the set (the reads that used to raise SIGBUS).
double sumOfAll(const AttentionSet &set)
{
    double sum = 0;
    for (int l = 0; l < set.layers(); ++l)
        for (int h = 0; h < set.heads(); ++h)
            sum += double(set.map(0, l, h).sum());
    return sum;
}

} // namespace

class TestChangedFiles : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void truncatedAttentionFileDoesNotCrash_data();
    void truncatedAttentionFileDoesNotCrash();
    void rewrittenAttentionFileIsReported();
    void replacedByRenameIsUnchanged();
    void truncatedSafetensorsWeightsDoNotCrash();
    void faultsOutsideGuardedFilesStillCrash();
    void fifoIsRefusedWithoutWaiting_data();
    void fifoIsRefusedWithoutWaiting();
    void cliRolloutOfRewrittenFileFailsCleanly();

private:
    QTemporaryDir m_dir;
};

void TestChangedFiles::truncatedAttentionFileDoesNotCrash_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("npy float32") << "f32.npy" << npy(false);
    QTest::newRow("npy float16") << "f16.npy" << npy(true);
    QTest::newRow("safetensors") << "a.safetensors" << safetensors();
}

void TestChangedFiles::truncatedAttentionFileDoesNotCrash()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    const QString path = m_dir.filePath(name);
    writeFile(path, bytes);
    AttentionFileInfo info;
    auto set = readAttentionFile(path.toStdString(), &info);
    QVERIFY2(set.ok(), set.ok() ? "" : set.message().c_str());
    QVERIFY(info.mapped);
    QVERIFY(set->sourceFile());
    QVERIFY(set->checkSource().ok());
    const double before = sumOfAll(*set);
    QVERIFY(before > 0);

    // The writer truncates and has written only the first page again when we read.
    truncateInPlace(path, bytes.left(4096));
    const double after = sumOfAll(*set); // the process used to die here (SIGBUS)
    QVERIFY(after < before);             // what lay past the new end reads as zeros
    QVERIFY(set->sourceFile()->faulted());
    const Status status = set->checkSource();
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, std::string("file.changed"));
    QCOMPARE(status.error().kind, ErrorKind::Io);
    QVERIFY2(status.message().find("the file changed on disk; reopen it") != std::string::npos,
             status.message().c_str());

    // Opening it again reads the file as it is now (here: refused as truncated), never a crash.
    auto again = readAttentionFile(path.toStdString());
    QVERIFY(!again.ok());
}

void TestChangedFiles::rewrittenAttentionFileIsReported()
{
    // Same size, other values: no read faults, but what is shown is no longer the file.
    const QString path = m_dir.filePath("rewritten.npy");
    const QByteArray bytes = npy(false);
    writeFile(path, bytes);
    agePast(path);
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    QVERIFY(set->checkSource().ok());
    QByteArray other = bytes;
    other[other.size() - 1] = char(other[other.size() - 1] ^ 0x40);
    truncateInPlace(path, other);
    QVERIFY(!set->sourceFile()->faulted());
    const Status status = set->checkSource();
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, std::string("file.changed"));
}

void TestChangedFiles::replacedByRenameIsUnchanged()
{
    // An atomic save (write beside, rename over) leaves the mapped file's bytes as they were.
    const QString path = m_dir.filePath("renamed.npy");
    writeFile(path, npy(false));
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    const double before = sumOfAll(*set);
    writeFile(path + ".new", npy(true).left(200));
    QCOMPARE_EQ(::rename(QFile::encodeName(path + ".new").constData(), QFile::encodeName(path).constData()), 0);
    QCOMPARE(sumOfAll(*set), before);
    QVERIFY(set->checkSource().ok());
}

void TestChangedFiles::truncatedSafetensorsWeightsDoNotCrash()
{
    // Model weights are read from the mapping too (converted at load today, read in place by the
    // models that keep their stored dtype): the same guard, reported by the file.
    const QString path = m_dir.filePath("weights.safetensors");
    const QByteArray bytes = safetensors();
    writeFile(path, bytes);
    auto file = SafetensorsFile::open(path.toStdString());
    QVERIFY2(file.ok(), file.ok() ? "" : file.message().c_str());
    QVERIFY(file->checkUnchanged().ok());
    const SafetensorsTensor *t = file->find("attentions");
    QVERIFY(t);
    const qsizetype dataBytes = qsizetype(values().size() * sizeof(float));
    truncateInPlace(path, bytes.left(bytes.size() - dataBytes)); // the header and no data
    float sum = 0;
    for (std::int64_t i = 0; i < t->elementCount(); ++i) {
        float f;
        std::memcpy(&f, t->data + 4 * i, 4);
        sum += f;
    }
    QCOMPARE(sum, 0.0f); // every page of the data lay past the new end
    const Status status = file->checkUnchanged();
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, std::string("file.changed"));
}

void TestChangedFiles::faultsOutsideGuardedFilesStillCrash()
{
    // The guard handles faults in its own mappings only: any other SIGBUS keeps its meaning. A
    // child process (this program in its fault mode, without Qt Test's crash handler) installs
    // the guard, then reads past the end of a mapping of its own: it must die of it.
    const QString path = m_dir.filePath("unguarded.bin");
    writeFile(path, QByteArray(3 * 4096, 'x'));
    QProcess child;
    child.start(QCoreApplication::applicationFilePath(), {"--fault-outside-guard", path});
    QVERIFY(child.waitForFinished(60000));
    // Killed by the signal, or (under a sanitizer, whose handler came first) reported and ended
    // with its error code: anything but going on.
    const bool died = child.exitStatus() == QProcess::CrashExit || (child.exitCode() != 0 && child.exitCode() != 3);
    QVERIFY2(died, qPrintable(QStringLiteral("exit code %1").arg(child.exitCode())));
    QVERIFY2(!child.readAllStandardOutput().contains("survived"), "a fault outside the guard was swallowed");
}

void TestChangedFiles::fifoIsRefusedWithoutWaiting_data()
{
    QTest::addColumn<QString>("what");
    QTest::newRow("attention file") << "attention";
    QTest::newRow("safetensors") << "safetensors";
    QTest::newRow("model folder") << "model";
}

void TestChangedFiles::fifoIsRefusedWithoutWaiting()
{
    // A FIFO with no writer used to block open() for good (the CLI hung; the window could not
    // quit, its destructor waiting on the blocked reader).
    QFETCH(QString, what);
    const QString folder = m_dir.filePath("fifo-" + what);
    QVERIFY(QDir().mkpath(folder));
    QString fifo = folder + (what == "attention" ? "/a.npy" : "/model.safetensors");
    if (what == "model")
        for (const char *name : {"config.json", "vocab.json", "merges.txt"})
            QVERIFY(QFile::copy(test::sourcePath(QStringLiteral("resources/models/tiny-gpt2/") + name),
                                folder + "/" + name));
    QCOMPARE_EQ(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);

    auto done = std::make_shared<std::atomic<int>>(0); // 1: refused, 2: opened
    auto message = std::make_shared<std::string>();
    std::thread([=] {
        std::string error;
        bool ok = false;
        if (what == "attention") {
            auto r = readAttentionFile(fifo.toStdString());
            ok = r.ok();
            error = ok ? "" : r.message();
        } else if (what == "safetensors") {
            auto r = SafetensorsFile::open(fifo.toStdString());
            ok = r.ok();
            error = ok ? "" : r.message();
        } else {
            auto r = TransformerModel::load(folder.toStdString());
            ok = r.ok();
            error = ok ? "" : r.message();
        }
        *message = error;
        done->store(ok ? 2 : 1);
    }).detach(); // on the old code it never returns: the test fails instead of hanging
    QTRY_VERIFY_WITH_TIMEOUT(done->load() != 0, 20000);
    QCOMPARE(done->load(), 1);
    QVERIFY2(message->find("not a regular file") != std::string::npos, message->c_str());
}

void TestChangedFiles::cliRolloutOfRewrittenFileFailsCleanly()
{
    // `export --tensor rollout` used to die with SIGBUS (exit 135) when the file was rewritten
    // under it. The command is stopped as soon as it has the file mapped (its /proc maps say so),
    // the file is truncated as np.save does, and the command goes on: it must fail with one
    // line, write nothing, and not crash.
    const QString path = m_dir.filePath("rollout.npy");
    const int layers = 4, heads = 2, t = 768;
    {
        std::string header = npyHeader({layers, heads, t, t});
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(header.data(), qint64(header.size()));
        std::vector<float> row(std::size_t(t), 1.0f / float(t));
        for (int m = 0; m < layers * heads * t; ++m)
            f.write(reinterpret_cast<const char *>(row.data()), qint64(row.size() * sizeof(float)));
    }
    const QString out = m_dir.filePath("rollout-out.npy");
    QProcess cli;
    cli.start(QStringLiteral(ATTNSCOPE_CLI), {"export", path, "--tensor", "rollout", "--backend", "cpu", "--out", out});
    QVERIFY(cli.waitForStarted());
    const QString maps = QStringLiteral("/proc/%1/maps").arg(cli.processId());
    const QByteArray name = QFile::encodeName(QFileInfo(path).fileName());
    bool mapped = false;
    while (!mapped && test::isRunning(cli)) {
        QFile m(maps);
        mapped = m.open(QIODevice::ReadOnly) && m.readAll().contains(name);
    }
    QVERIFY2(mapped, "the command ended before it mapped the file");
    QCOMPARE_EQ(::kill(pid_t(cli.processId()), SIGSTOP), 0);
    truncateInPlace(path, QByteArray(128, ' '));
    QCOMPARE_EQ(::kill(pid_t(cli.processId()), SIGCONT), 0);
    QVERIFY(cli.waitForFinished(120000));
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    QCOMPARE(cli.exitStatus(), QProcess::NormalExit); // not killed by SIGBUS
    QCOMPARE(cli.exitCode(), 1);
    QVERIFY2(err.contains("the file changed on disk; reopen it"), qPrintable(err));
    QCOMPARE(err.trimmed().count('\n'), 0);
    QVERIFY(!QFile::exists(out));
}

// `--fault-outside-guard FILE`: maps FILE through MappedFile (the guard is installed), then
// maps it again directly, truncates it and reads past its new end. Returns only if the fault was
// swallowed.
static int faultOutsideGuard(const char *file)
{
    auto guarded = MappedFile::open(file);
    const int fd = ::open(file, O_RDWR);
    void *p = ::mmap(nullptr, 3 * 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (!guarded.ok() || fd < 0 || p == MAP_FAILED || ::ftruncate(fd, 0) != 0)
        return 3;
    volatile char c = static_cast<const char *>(p)[2 * 4096];
    (void)c;
    std::puts("survived");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && std::strcmp(argv[1], "--fault-outside-guard") == 0)
        return faultOutsideGuard(argv[2]);
    QCoreApplication app(argc, argv);
    TestChangedFiles test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_changedfiles.moc"
