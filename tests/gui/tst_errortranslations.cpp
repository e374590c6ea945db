// The attention files' rarer refusals reach the user translated: each one produced by a real
// malformed .safetensors or .npz file written here, read as the GUI reads it, shown through
// errorText() in English (exactly core's message) and in Chinese (no English prose left, the
// numbers and names kept).

#include "app/engine/BackendChoice.h"
#include "app/gui/views/Language.h"
#include "app/render/ErrorText.h"
#include "core/formats/AttentionFile.h"
#include "gpu/VulkanApi.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

// A safetensors file: the 8-byte header length, the JSON header, `dataBytes` bytes of data.
QByteArray safetensorsFile(const QByteArray &header, int dataBytes)
{
    QByteArray out(8, 0);
    for (int i = 0; i < 8; ++i)
        out[i] = char((quint64(header.size()) >> (8 * i)) & 0xff);
    return out + header + QByteArray(dataBytes, '\0');
}

// A one-member .npz ("attentions.npy", deflated) with one field of its structure broken.
enum class ZipFault { LocalHeader, MemberPastEnd, Claims, TooLarge, Entry, EntryPastEnd, DirPastEnd, DirCount, Zip64 };

QByteArray npzFile(ZipFault fault)
{
    auto le = [](quint64 v, int bytes) {
        QByteArray b(bytes, 0);
        for (int i = 0; i < bytes; ++i)
            b[i] = char((v >> (8 * i)) & 0xff);
        return b;
    };
    const QByteArray name = "attentions.npy", data(16, '\x03');
    quint64 size = 64, compressed = quint64(data.size()), localOffset = 0;
    QByteArray extra;
    if (fault == ZipFault::LocalHeader)
        localOffset = 5;
    if (fault == ZipFault::MemberPastEnd)
        compressed = 100000;
    if (fault == ZipFault::Claims)
        size = quint64(data.size()) * 1032 + 1025; // more than deflate can make of 16 bytes
    if (fault == ZipFault::TooLarge) {
        size = 0xffffffff; // the real size in the ZIP64 extra field
        extra = le(1, 2) + le(8, 2) + le(quint64(1) << 60, 8);
    }
    QByteArray zip = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(8, 2) + le(0, 4) + le(0, 4) + le(16, 4) + le(64, 4) +
                     le(quint64(name.size()), 2) + le(0, 2) + name + data;
    const quint64 dirOffset = quint64(zip.size());
    QByteArray dir = le(fault == ZipFault::Entry ? 0x02014b51 : 0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) +
                     le(8, 2) + le(0, 4) + le(0, 4) + le(compressed, 4) + le(size, 4) +
                     le(fault == ZipFault::EntryPastEnd ? 200 : quint64(name.size()), 2) +
                     le(quint64(extra.size()), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(localOffset, 4) +
                     name + extra;
    zip += dir;
    if (fault == ZipFault::Zip64) // a ZIP64 locator pointing at offset 3, where no ZIP64 record is
        zip += le(0x07064b50, 4) + le(0, 4) + le(3, 8) + le(1, 4);
    const quint64 count = fault == ZipFault::DirCount ? 5 : fault == ZipFault::Zip64 ? 0xffff : 1;
    zip += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(count, 2) + le(count, 2) + le(quint64(dir.size()), 4) +
           le(fault == ZipFault::DirPastEnd ? 100000 : dirOffset, 4) + le(0, 2);
    return zip;
}

// Three English words in a row: core's English prose left inside a translated message.
bool hasEnglishProse(const QString &text)
{
    static const QRegularExpression prose(QStringLiteral("\\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\\b"));
    return text.contains(prose);
}

} // namespace

class TestErrorTranslations : public QObject
{
    Q_OBJECT

private slots:
    void cleanup();
    void attentionFileErrorsTranslate_data();
    void attentionFileErrorsTranslate();
    void missingVulkanLoaderTranslates();
};

void TestErrorTranslations::cleanup()
{
    installTranslators(QLocale(QLocale::English, QLocale::UnitedStates));
}

void TestErrorTranslations::attentionFileErrorsTranslate_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("chinese"); // a piece the Chinese text has
    QTest::addColumn<QString>("kept");    // a piece both languages keep (name, number)
    // The safetensors reader's checks of each tensor entry and of the data layout.
    const QByteArray f32 = R"("dtype": "F32", "shape": [1], "data_offsets": [0, 4])";
    QTest::newRow("safetensors entry") << "a.safetensors" << safetensorsFile(R"({"attentions": 5})", 0)
                                       << "safetensors.entry" << QStringLiteral("\u5e94\u4e3a {") // 应为 {
                                       << "attentions";
    QTest::newRow("safetensors dtype") << "a.safetensors"
                                       << safetensorsFile(R"({"attentions": {"dtype": 5, "shape": [1], )"
                                                          R"("data_offsets": [0, 4]}})",
                                                          4)
                                       << "safetensors.dtype" << QStringLiteral("dtype \u4e0d\u662f\u5b57\u7b26\u4e32")
                                       << "attentions"; // dtype 不是字符串
    QTest::newRow("safetensors shape") << "a.safetensors"
                                       << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": "x", )"
                                                          R"("data_offsets": [0, 4]}})",
                                                          4)
                                       << "safetensors.shape" << QStringLiteral("\u81f3\u591a 8 \u4e2a")
                                       << "attentions"; // 至多 8 个
    QTest::newRow("safetensors shape size")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": [-7], "data_offsets": [0, 4]}})", 4)
        << "safetensors.shape.notSize" << QStringLiteral("\u4e0d\u662f\u5c3a\u5bf8") << "-7"; // 不是尺寸
    QTest::newRow("safetensors shape overflow")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], )"
                           R"("data_offsets": [0, 4]}})",
                           4)
        << "safetensors.shape.overflow" << QStringLiteral("\u65e0\u6cd5\u5bfb\u5740") << "attentions"; // 无法寻址
    QTest::newRow("safetensors offsets")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4)
        << "safetensors.offsets" << QStringLiteral("begin <= end \u7684") << "data_offsets";
    QTest::newRow("safetensors offsets past end")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}})", 4)
        << "safetensors.offsets.pastEnd" << QStringLiteral("\u8d85\u51fa\u4e86 4 \u5b57\u8282") << "8"; // 超出了 4 字节
    QTest::newRow("safetensors offsets size")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4)
        << "safetensors.offsets.size" << QStringLiteral("2 \u4e2a F32 \u503c\u9700\u8981 8 \u5b57\u8282")
        << "attentions"; // 2 个 F32 值需要 8 字节
    QTest::newRow("safetensors overlap") << "a.safetensors"
                                         << safetensorsFile(
                                                R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, )"
                                                R"("b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}})",
                                                6)
                                         << "safetensors.offsets.overlap" << QStringLiteral("\u91cd\u53e0")
                                         << "[2, 6]"; // 重叠
    QTest::newRow("safetensors gap")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8)
        << "safetensors.data.gap" << QStringLiteral("\u4e0d\u5c5e\u4e8e\u4efb\u4f55\u5f20\u91cf")
        << "a.safetensors"; // 不属于任何张量
    QTest::newRow("safetensors trailing")
        << "a.safetensors" << safetensorsFile("{\"attentions\": {" + f32 + "}}", 6) << "safetensors.data.trailing"
        << QStringLiteral("\u6700\u540e\u4e00\u4e2a\u5f20\u91cf\u4e4b\u540e") << "a.safetensors"; // 最后一个张量之后
    QTest::newRow("safetensors metadata")
        << "a.safetensors" << safetensorsFile(R"({"__metadata__": 5})", 0) << "safetensors.metadata"
        << QStringLiteral("\u5b57\u7b26\u4e32\u7ec4\u6210\u7684\u5bf9\u8c61") << "__metadata__"; // 字符串组成的对象
    QTest::newRow("safetensors metadata value")
        << "a.safetensors" << safetensorsFile(R"({"__metadata__": {"tokens": 5}})", 0) << "safetensors.metadata.value"
        << QStringLiteral("\u5e94\u4e3a\u5b57\u7b26\u4e32") << "__metadata__.tokens"; // 应为字符串
    QTest::newRow("safetensors no attentions")
        << "a.safetensors"
        << safetensorsFile(
               R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
               8)
        << "safetensors.noAttentions" << QStringLiteral("\u6ca1\u6709\u540d\u4e3a") << "attentions"; // 没有名为
    QTest::newRow("safetensors attention dtype")
        << "a.safetensors"
        << safetensorsFile(R"({"attentions": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}})", 4)
        << "safetensors.attentionDtype" << QStringLiteral("\u5e94\u4e3a F16") << "I32"; // 应为 F16
    QTest::newRow("safetensors metadata labels")
        << "a.safetensors"
        << safetensorsFile("{\"__metadata__\": {\"tokens\": \"[1]\"}, \"attentions\": {" + f32 + "}}", 4)
        << "safetensors.metadata.labels" << QStringLiteral("\u5b57\u7b26\u4e32\u5217\u8868") << "tokens"; // 字符串列表
    // The ZIP reader's rarer refusals, each from a .npz with one field broken.
    QTest::newRow("zip local header") << "a.npz" << npzFile(ZipFault::LocalHeader) << "zip.localHeader"
                                      << QStringLiteral("\u6ca1\u6709\u672c\u5730\u6587\u4ef6\u5934")
                                      << "attentions.npy"; // 没有本地文件头
    QTest::newRow("zip member past end") << "a.npz" << npzFile(ZipFault::MemberPastEnd) << "zip.member.pastEnd"
                                         << QStringLiteral("\u8d85\u51fa\u4e86\u6587\u4ef6\u672b\u5c3e")
                                         << "100000"; // 超出了文件末尾
    QTest::newRow("zip member claims") << "a.npz" << npzFile(ZipFault::Claims) << "zip.member.claims"
                                       << QStringLiteral("deflate \u6240\u80fd\u4ea7\u751f")
                                       << "17537"; // deflate 所能产生
    QTest::newRow("zip member too large")
        << "a.npz" << npzFile(ZipFault::TooLarge) << "zip.member.tooLarge"
        << QStringLiteral("\u8d85\u8fc7\u672c\u673a\u5141\u8bb8") << "1152921504606846976"; // 超过本机允许
    QTest::newRow("zip entry") << "a.npz" << npzFile(ZipFault::Entry) << "zip.entry"
                               << QStringLiteral("\u4e0d\u662f\u6709\u6548\u7684\u76ee\u5f55\u9879")
                               << "a.npz"; // 不是有效的目录项
    QTest::newRow("zip entry past end") << "a.npz" << npzFile(ZipFault::EntryPastEnd) << "zip.entry.pastEnd"
                                        << QStringLiteral("\u8d85\u51fa\u4e86\u76ee\u5f55\u672b\u5c3e")
                                        << "a.npz"; // 超出了目录末尾
    QTest::newRow("zip directory past end")
        << "a.npz" << npzFile(ZipFault::DirPastEnd) << "zip.directory.pastEnd"
        << QStringLiteral("\u8d85\u51fa\u4e86\u6587\u4ef6\u672b\u5c3e") << "100000"; // 超出了文件末尾
    QTest::newRow("zip directory count") << "a.npz" << npzFile(ZipFault::DirCount) << "zip.directory.count"
                                         << QStringLiteral("\u5bb9\u7eb3\u4e0d\u4e0b 5 \u4e2a\u6210\u5458")
                                         << "a.npz"; // 容纳不下 5 个成员
    QTest::newRow("zip64 record") << "a.npz" << npzFile(ZipFault::Zip64) << "zip.zip64Record"
                                  << QStringLiteral("ZIP64 \u76ee\u5f55\u7ed3\u675f\u8bb0\u5f55")
                                  << "a.npz"; // ZIP64 目录结束记录
}

void TestErrorTranslations::attentionFileErrorsTranslate()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, bytes);
    QFETCH(QString, code);
    QFETCH(QString, chinese);
    QFETCH(QString, kept);
    QTemporaryDir dir;
    const QString path = dir.filePath(name);
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    f.close();
    auto read = readAttentionFile(path.toStdString());
    QVERIFY(!read);
    const Error &error = read.error();
    QVERIFY2(QString::fromStdString(error.code) == code, error.message.c_str());
    QCOMPARE(errorText(error), QString::fromStdString(error.message));
    QVERIFY2(errorText(error).contains(kept), error.message.c_str());
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    const QString text = errorText(error);
    QVERIFY2(text.contains(chinese), qPrintable(text));
    QVERIFY2(text.contains(kept), qPrintable(text));
    QVERIFY2(!hasEnglishProse(text), qPrintable(text));
}

// No Vulkan loader at all (vk::setLoaderPath naming a file that is not there; the loader is
// opened once per process, and nothing else here uses Vulkan): Auto's notice is translated
// around dlerror()'s own text, which stays as it is.
void TestErrorTranslations::missingVulkanLoaderTranslates()
{
    QTemporaryDir dir;
    const QByteArray loader = dir.filePath(QStringLiteral("no-libvulkan.so.1")).toUtf8();
    vk::setLoaderPath(loader.toStdString());
    auto selection = createBackend(BackendRequest::Auto, BackendOptions{});
    QVERIFY(selection.ok());
    const Error &error = selection->noticeError;
    QCOMPARE(QString::fromStdString(error.code), QStringLiteral("backend.usingCpu"));
    QCOMPARE(errorText(error), QString::fromStdString(error.message));
    QVERIFY2(error.message.starts_with("no Vulkan loader: cannot open " + loader.toStdString()), error.message.c_str());
    QVERIFY(installTranslators(QLocale(QStringLiteral("zh_CN"))));
    const QString text = errorText(error);
    QVERIFY2(text.contains(QStringLiteral("\u65e0\u6cd5\u6253\u5f00 Vulkan \u52a0\u8f7d\u5668")),
             qPrintable(text));                                                    // 无法打开 Vulkan 加载器
    QVERIFY2(text.contains(QStringLiteral("\u6539\u7528 CPU")), qPrintable(text)); // 改用 CPU
    QVERIFY2(text.contains(QString::fromUtf8(loader)), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("no Vulkan loader")) && !text.contains(QStringLiteral("using the CPU")),
             qPrintable(text));
}

QTEST_MAIN(TestErrorTranslations)
#include "tst_errortranslations.moc"
