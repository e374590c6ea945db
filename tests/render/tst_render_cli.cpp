// attnscope-cli render as a user runs it: the real executable through QProcess, real figure
// files read back. Every built-in example in every view and format (kept in figures/cli as
// test artifacts), batch mode, and every error path.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"
#include "FigureTestUtil.h"
#include "RenderTestProjects.h"

#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using attnscope::test::runCli;
using Run = attnscope::test::CliRun;

namespace {

const QString kFigureDir = QStringLiteral(ATTNSCOPE_FIGURE_DIR "/cli");
const QStringList kExamples = {"cross-attention-translation", "multihead-causal", "padding-mask",
                               "self-attention-tutorial"};
const QStringList kViews = {"head", "heads", "mean", "headview", "teaching", "mask"};

QString example(const QString &name)
{
    return attnscope::test::sourcePath(QStringLiteral("resources/examples/%1.attnscope.json").arg(name));
}

// Lines the CLI wrote to stderr, without Qt's own start-up chatter.
QStringList errorLines(const QString &err)
{
    QStringList out;
    for (const QString &line : err.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (!line.startsWith(QLatin1String("QStandardPaths:")))
            out << line;
    return out;
}

} // namespace

class TestRenderCli : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void helpListsRender();
    void everyExampleEveryViewEveryFormat_data();
    void everyExampleEveryViewEveryFormat();
    void singleFileWithOptions();
    void runsWithoutADisplay();
    void errors_data();
    void errors();
    void batchRefusedWholeWhenOneProjectFails();
    void nonFiniteResultFailsAndWritesNothing();
    void reportsTheBackendThatRan();
    void axisTitlesCanBeTurnedOff();
    void outputThatIsAnInputIsRefused();
};

void TestRenderCli::initTestCase()
{
    QVERIFY(QDir().mkpath(kFigureDir));
}

void TestRenderCli::helpListsRender()
{
    const Run r = runCli({"--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains(QStringLiteral("render INPUT [INPUT...] --out FILE.(png|svg|pdf)")));
    QVERIFY(r.out.contains(QStringLiteral("--view head|heads|mean|headview|teaching|mask|model|rollout")));
    QVERIFY(r.out.contains(QStringLiteral("compute PROJECT --out DIR")));
}

void TestRenderCli::everyExampleEveryViewEveryFormat_data()
{
    QTest::addColumn<QString>("view");
    for (const QString &v : kViews)
        QTest::newRow(qPrintable(v)) << v;
}

void TestRenderCli::everyExampleEveryViewEveryFormat()
{
    QFETCH(QString, view);
    // Batch mode: every example in one call, one file per project and format.
    const QString dir = kFigureDir + QLatin1Char('/') + view;
    QDir(dir).removeRecursively();
    QStringList args = {"render"};
    for (const QString &e : kExamples)
        args << example(e);
    args << "--view" << view << "--out" << dir << "--format"
         << "png,svg,pdf"
         << "--backend"
         << "cpu";
    const Run r = runCli(args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(r.out.count(QStringLiteral("wrote: ")), kExamples.size() * 3);
    for (const QString &e : kExamples) {
        const QString stem = dir + QLatin1Char('/') + e;
        const QImage png(stem + QStringLiteral(".png"));
        QVERIFY2(!png.isNull(), qPrintable(stem));
        QVERIFY(png.width() > 200 && png.height() > 100);
        QCOMPARE(int(std::lround(png.dotsPerMeterX() * 0.0254)), 150);
        QVERIFY(!png.text(QStringLiteral("Title")).isEmpty());
        const auto svg = attnscope::test::readSvg(stem + QStringLiteral(".svg"));
        QVERIFY2(svg.valid, qPrintable(svg.error));
        QVERIFY(svg.texts.join(QLatin1Char('\n')).contains(png.text(QStringLiteral("Title"))));
        if (attnscope::test::pdftoppm().isEmpty())
            continue;
        const QImage pdf =
            attnscope::test::rasterisePdf(stem + QStringLiteral(".pdf"), 150, stem + QStringLiteral("-pdf"));
        QVERIFY2(!pdf.isNull(), qPrintable(stem));
        const double diff = attnscope::test::meanPixelDifference(png, pdf);
        QVERIFY2(diff >= 0 && diff < 6.0, qPrintable(QStringLiteral("%1: %2").arg(stem).arg(diff)));
    }
}

void TestRenderCli::singleFileWithOptions()
{
    const QString path = kFigureDir + QStringLiteral("/options-heads-magma.png");
    QFile::remove(path);
    const Run r = runCli({"render",      example("multihead-causal"),
                          "--out",       path,
                          "--view",      "heads",
                          "--colormap",  "magma",
                          "--scale",     "per-head",
                          "--dpi",       "300",
                          "--width",     "1200",
                          "--font-size", "12",
                          "--title",     "Two causal heads",
                          "--no-values", "--backend",
                          "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains(QStringLiteral("wrote: ") + path));
    const QImage image(path);
    QCOMPARE(image.width(), 1200);
    QCOMPARE(int(std::lround(image.dotsPerMeterX() * 0.0254)), 300);
    QCOMPARE(image.text(QStringLiteral("Title")), QStringLiteral("Two causal heads"));

    // Scores with the diverging map, transparent, no title, labels or colour bar, as SVG.
    const QString svgPath = kFigureDir + QStringLiteral("/options-scores.svg");
    const Run s =
        runCli({"render", example("cross-attention-translation"), "--out", svgPath, "--quantity", "scores", "--head",
                "1", "--background", "transparent", "--title", "", "--no-labels", "--no-colorbar", "--backend", "cpu"});
    QVERIFY2(s.code == 0, qPrintable(s.err));
    const auto svg = attnscope::test::readSvg(svgPath);
    QVERIFY(svg.valid);
    QVERIFY2(svg.texts.isEmpty() || svg.texts.join(QString()).trimmed().isEmpty() ||
                 !svg.texts.join(QLatin1Char(' ')).contains(QStringLiteral("head")),
             qPrintable(svg.texts.join(QLatin1Char('|'))));
    QVERIFY(!svg.rects.empty());
}

void TestRenderCli::runsWithoutADisplay()
{
    // No QT_QPA_PLATFORM and no DISPLAY: render picks the offscreen platform by itself.
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    p.setProcessEnvironment(env);
    const QString path = kFigureDir + QStringLiteral("/no-display.pdf");
    p.start(QStringLiteral(ATTNSCOPE_CLI), {"render", example("padding-mask"), "--view", "mask", "--out", path});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QVERIFY(QFileInfo(path).size() > 0);
}

void TestRenderCli::errors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString p = example("multihead-causal"), q = example("padding-mask");
    const QString out = QStringLiteral("OUT/figure.png");
    QTest::newRow("no project") << QStringList{"render", "--out", out} << 2 << "at least one INPUT";
    QTest::newRow("no out") << QStringList{"render", p} << 2 << "--out FILE or --out DIR is required";
    QTest::newRow("bad suffix") << QStringList{"render", p, "--out", "OUT/figure.jpg"} << 2
                                << "expected a .png, .svg or .pdf file";
    QTest::newRow("bad view")
        << QStringList{"render", p, "--out", out, "--view", "table"} << 2
        << "--view: expected head, heads, mean, headview, teaching, mask, model or rollout, found \"table\"";
    QTest::newRow("head out of range") << QStringList{"render", p, "--out", out, "--head", "2"} << 2
                                       << "--head 2: " + p + " has 2 head(s), numbered 0 to 1";
    QTest::newRow("head not a number") << QStringList{"render", p, "--out", out, "--head", "one"} << 2
                                       << "--head: expected a whole number";
    QTest::newRow("bad colormap") << QStringList{"render", p, "--out", out, "--colormap", "jet"} << 2
                                  << "--colormap: expected viridis, magma, cividis, grey or diverging, found \"jet\"";
    QTest::newRow("bad scale") << QStringList{"render", p, "--out", out, "--scale", "log"} << 2
                               << "--scale: expected absolute, shared or per-head";
    QTest::newRow("bad quantity") << QStringList{"render", p, "--out", out, "--quantity", "logits"} << 2
                                  << "--quantity: expected weights or scores";
    QTest::newRow("bad dpi") << QStringList{"render", p, "--out", out, "--dpi", "5"} << 2
                             << "--dpi: expected a whole number from 10 to 2400, found \"5\"";
    QTest::newRow("bad width") << QStringList{"render", p, "--out", out, "--width", "0"} << 2
                               << "--width: expected a whole number from 1 to 20000";
    QTest::newRow("bad height") << QStringList{"render", p, "--out", out, "--height", "99999"} << 2
                                << "--height: expected a whole number from 1 to 20000";
    QTest::newRow("bad font size") << QStringList{"render", p, "--out", out, "--font-size", "2"} << 2
                                   << "--font-size: expected a whole number from 4 to 96";
    QTest::newRow("bad background") << QStringList{"render", p, "--out", out, "--background", "black"} << 2
                                    << "--background: expected white or transparent";
    QTest::newRow("bad backend") << QStringList{"render", p, "--out", out, "--backend", "cuda"} << 2 << "cuda";
    QTest::newRow("unknown option") << QStringList{"render", p, "--out", out, "--colour", "x"} << 2 << "colour";
    QTest::newRow("missing project") << QStringList{"render", "OUT/none.attnscope.json", "--out", out} << 1
                                     << "none.attnscope.json";
    QTest::newRow("several without format")
        << QStringList{"render", p, q, "--out", out} << 2 << "2 projects need --out DIR and --format png,svg,pdf";
    QTest::newRow("bad format") << QStringList{"render", p, "--out", "OUT/dir", "--format", "png,gif"} << 2
                                << "--format: expected png, svg or pdf, found \"gif\"";
    QTest::newRow("out is a file") << QStringList{"render", p, "--out", "OUT/file.txt", "--format", "png"} << 2
                                   << "is a file; with --format it names a directory";
    QTest::newRow("same name twice") << QStringList{"render", p, p, "--out", "OUT/dir", "--format", "svg"} << 2
                                     << "two projects would both write";
    QTest::newRow("unwritable directory")
        << QStringList{"render", p, "--out", "OUT/missing/figure.svg"} << 1 << "OUT/missing/figure.svg";
}

void TestRenderCli::errors()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    {
        QFile f(tmp.filePath(QStringLiteral("file.txt")));
        QVERIFY(f.open(QIODevice::WriteOnly));
    }
    for (QString &a : args)
        a.replace(QStringLiteral("OUT"), tmp.path());
    message.replace(QStringLiteral("OUT"), tmp.path());
    const QStringList before = QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
    const Run r = runCli(args);
    QCOMPARE(r.code, code);
    const QStringList lines = errorLines(r.err);
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].startsWith(QStringLiteral("attnscope-cli: ")), qPrintable(lines[0]));
    QVERIFY2(lines[0].contains(message), qPrintable(lines[0]));
    // Nothing written, not even a temporary file.
    QCOMPARE(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), before);
}

void TestRenderCli::batchRefusedWholeWhenOneProjectFails()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString broken = tmp.filePath(QStringLiteral("broken.attnscope.json"));
    {
        QFile f(broken);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "attnscope", "version": 1, "mode": "self"})");
    }
    const QString dir = tmp.filePath(QStringLiteral("figures"));
    const Run r = runCli({"render", example("multihead-causal"), broken, "--out", dir, "--format", "png,pdf"});
    QCOMPARE(r.code, 1);
    QCOMPARE(errorLines(r.err).size(), 1);
    QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/multihead-causal.png")));
}

void TestRenderCli::nonFiniteResultFailsAndWritesNothing()
{
    // Finite inputs, overflowing scores: no figure of NaN cells coloured like 0, exit 1.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString project = tmp.filePath(QStringLiteral("overflow.attnscope.json"));
    {
        QFile f(project);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(attnscope::test::overflowProjectJson()));
    }
    const QString out = tmp.filePath(QStringLiteral("overflow.png"));
    const Run r = runCli({"render", project, "--out", out, "--backend", "cpu"});
    QCOMPARE(r.code, 1);
    const QStringList lines = errorLines(r.err);
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines[0].contains(QStringLiteral("not finite")) && lines[0].contains(QStringLiteral("scores")),
             qPrintable(lines[0]));
    QVERIFY2(lines[0].contains(QStringLiteral("overflow.attnscope.json")), qPrintable(lines[0]));
    QVERIFY(!QFileInfo::exists(out));
}

void TestRenderCli::outputThatIsAnInputIsRefused()
{
    // A project may be named anything, .svg included: rendering it onto itself would replace
    // the project with its own figure.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString project = tmp.filePath(QStringLiteral("figure.svg"));
    QVERIFY(QFile::copy(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/examples/multihead-causal.attnscope.json"),
                        project));
    QFile before(project);
    QVERIFY(before.open(QIODevice::ReadOnly));
    const QByteArray original = before.readAll();
    before.close();
    const Run r = runCli({"render", project, "--out", project, "--backend", "cpu"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(QStringLiteral("is an input project")), qPrintable(r.err));
    QFile after(project);
    QVERIFY(after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), original);
}

void TestRenderCli::reportsTheBackendThatRan()
{
    // As `compute` does: backend and device on stdout, before the files.
    const QString path = kFigureDir + QStringLiteral("/backend.svg");
    const Run r = runCli({"render", example("self-attention-tutorial"), "--out", path, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("backend: cpu\n")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QStringLiteral("device: ")), qPrintable(r.out));
    QVERIFY(r.out.indexOf(QStringLiteral("backend: ")) < r.out.indexOf(QStringLiteral("wrote: ")));
    // Auto on a machine without a usable GPU says why it chose what it chose.
    const Run a = runCli({"render", example("self-attention-tutorial"), "--out", path});
    QVERIFY2(a.code == 0, qPrintable(a.err));
    QVERIFY2(a.out.contains(QStringLiteral("backend: ")), qPrintable(a.out));
    if (a.out.contains(QStringLiteral("backend: cpu")))
        QVERIFY2(a.out.contains(QStringLiteral("note: ")), qPrintable(a.out));
}

void TestRenderCli::axisTitlesCanBeTurnedOff()
{
    const QString path = kFigureDir + QStringLiteral("/axis-titles.svg");
    const Run r = runCli({"render", example("cross-attention-translation"), "--out", path, "--backend", "cpu"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    auto svg = attnscope::test::readSvg(path);
    QVERIFY(svg.texts.contains(QStringLiteral("query")) && svg.texts.contains(QStringLiteral("key")));
    const Run n = runCli(
        {"render", example("cross-attention-translation"), "--out", path, "--no-axis-titles", "--backend", "cpu"});
    QVERIFY2(n.code == 0, qPrintable(n.err));
    svg = attnscope::test::readSvg(path);
    QVERIFY(!svg.texts.contains(QStringLiteral("query")) && !svg.texts.contains(QStringLiteral("key")));
    QVERIFY(runCli({"render", "--help"}).out.contains(QStringLiteral("--no-axis-titles")));
}

QTEST_MAIN(TestRenderCli)
#include "tst_render_cli.moc"
