// Figures for papers (issue 8): SVG that is always valid XML and names real CSS font
// families, no seams between cells, default sizes that fit a page, "query"/"key" axis titles.
// Written to real files and read back (SVG parsed and rasterised, PDF through pdftoppm).

#include "../common/TestUtil.h"
#include "FigureTestUtil.h"

#include "app/render/FigureExporter.h"
#include "core/attention/CpuBackend.h"
#include "core/attention/RandomProblem.h"

#include <QDir>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTest>

using namespace attnscope;

namespace {

const QString kFigureDir = QStringLiteral(ATTNSCOPE_FIGURE_DIR "/paper");

struct Computed {
    Project project;
    AttentionTrace trace;
};

Computed load(const QString &example)
{
    auto project =
        readProjectFile(test::sourcePathStd(QStringLiteral("resources/examples/%1.attnscope.json").arg(example)));
    if (!project)
        qFatal("%s", project.message().c_str());
    auto trace = CpuBackend().compute(project->problem);
    if (!trace)
        qFatal("%s", trace.message().c_str());
    return {std::move(*project), std::move(*trace)};
}

} // namespace

class TestPaperFigures : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void svgIsValidXmlWithControlCharacters_data();
    void svgIsValidXmlWithControlCharacters();
    void svgFontFamilyIsACssList();
    void noSeamsBetweenCells_data();
    void noSeamsBetweenCells();
    void defaultSizeFitsAPage_data();
    void defaultSizeFitsAPage();
    void axisTitlesNameQueryAndKey_data();
    void axisTitlesNameQueryAndKey();
};

void TestPaperFigures::initTestCase()
{
    QVERIFY(QDir().mkpath(kFigureDir));
}

void TestPaperFigures::svgIsValidXmlWithControlCharacters_data()
{
    QTest::addColumn<QString>("token");
    QTest::addColumn<QString>("title");
    QTest::addColumn<int>("view");
    QTest::newRow("SOH in a token") << QStringLiteral("a\x01z") << QString() << int(FigureView::Head);
    QTest::newRow("ESC in a token") << QStringLiteral("\x1b[31mred") << QString() << int(FigureView::Heads);
    QTest::newRow("NUL-free controls in the title")
        << QStringLiteral("ok") << QStringLiteral("T\x0bitle\x1f<b>") << int(FigureView::Mean);
    QTest::newRow("control in head view") << QStringLiteral("x\x02y") << QString() << int(FigureView::HeadView);
    QTest::newRow("control in mask") << QStringLiteral("x\x07y") << QString() << int(FigureView::Mask);
    QTest::newRow("control in teaching") << QStringLiteral("x\x08y") << QString() << int(FigureView::Teaching);
}

void TestPaperFigures::svgIsValidXmlWithControlCharacters()
{
    QFETCH(QString, token);
    QFETCH(QString, title);
    QFETCH(int, view);
    Computed c = load(QStringLiteral("multihead-causal"));
    c.project.queryTokens[1] = token.toStdString();
    if (!title.isEmpty())
        c.project.title = title.toStdString();
    FigureOptions o;
    o.view = FigureView(view);
    const QString path =
        kFigureDir +
        QStringLiteral("/control-%1.svg").arg(QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-'));
    QString error;
    QVERIFY2(FigureExporter(c.project, c.trace).write(path, o, {}, &error), qPrintable(error));
    const auto svg = test::readSvg(path);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    // The rest of the token survives, the control character shown as a visible picture.
    if (o.view != FigureView::Teaching)
        QVERIFY2(svg.texts.join(QString()).contains(token.right(1)), qPrintable(svg.texts.join(QLatin1Char('|'))));
}

void TestPaperFigures::svgFontFamilyIsACssList()
{
    const Computed c = load(QStringLiteral("multihead-causal"));
    const QString path = kFigureDir + QStringLiteral("/font-family.svg");
    QString error;
    QVERIFY2(FigureExporter(c.project, c.trace).write(path, {}, {}, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    const QRegularExpression attr(QStringLiteral("font-family=\"([^\"]*)\""));
    int n = 0;
    for (auto it = attr.globalMatch(text); it.hasNext();) {
        const QString family = it.next().captured(1);
        ++n;
        // A CSS list ending in a generic family; quoted names where they have spaces.
        QVERIFY2(family.endsWith(QLatin1String(", sans-serif")), qPrintable(family));
        const QString first = family.section(QLatin1Char(','), 0, 0);
        QVERIFY2(!first.contains(QLatin1Char(' ')) || first.startsWith(QLatin1Char('\'')), qPrintable(family));
        QVERIFY2(first != QLatin1String("'Sans Serif'"), qPrintable(family));
    }
    QVERIFY(n > 0);
}

void TestPaperFigures::noSeamsBetweenCells_data()
{
    QTest::addColumn<QString>("format");
    QTest::newRow("svg") << QStringLiteral("svg");
    QTest::newRow("pdf") << QStringLiteral("pdf");
}

void TestPaperFigures::noSeamsBetweenCells()
{
    // Equal scores: every weight of a row is the same, and with a uniform row every allowed
    // cell has one colour. Rasterised with anti-aliasing at a scale that puts cell edges
    // between pixels, the grid must show that colour only, no lighter lines between cells.
    QFETCH(QString, format);
    RandomProblemOptions ro;
    ro.tokens = 9;
    ro.modelDim = 4;
    ro.heads = 1;
    Project project = randomProject(ro);
    project.problem.weights.q.setZero();
    project.problem.weights.qBias.reset();
    auto trace = CpuBackend().compute(project.problem);
    QVERIFY(trace);
    FigureOptions o;
    o.values = false;
    o.scale = ScaleScope::Absolute;
    const FigureExporter exporter(project, *trace);
    const QString path = kFigureDir + QStringLiteral("/seams.") + format;
    QString error;
    QVERIFY2(exporter.write(path, o, FigureSize{0, 0, 72}, &error), qPrintable(error));
    const QSizeF page = exporter.pageSize(o, FigureSize{0, 0, 72});
    const double scale = 1.37; // cell edges fall at fractions of a pixel
    QImage image;
    if (format == QLatin1String("svg")) {
        QSvgRenderer svg(path);
        QVERIFY(svg.isValid());
        image = QImage((page * scale).toSize(), QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter p(&image);
        p.setRenderHint(QPainter::Antialiasing);
        svg.render(&p, QRectF(QPointF(0, 0), page * scale));
    } else {
        if (test::pdftoppm().isEmpty())
            QSKIP("pdftoppm (poppler-utils) is not installed");
        image = test::rasterisePdf(path, int(std::lround(72 * scale)), kFigureDir + QStringLiteral("/seams-pdf"));
        QVERIFY(!image.isNull());
    }
    image.save(kFigureDir + QStringLiteral("/seams-") + format + QStringLiteral(".png"));
    const FigureRenderer renderer(ShownAttention::ofProject(project, *trace), o);
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), page));
    const HeatmapLayout l = HeatmapRenderer(*maps[0].data, maps[0].options).layout(maps[0].target);
    const QColor expected = QColor::fromRgb(HeatmapRenderer(*maps[0].data, maps[0].options).colorFor(1.0 / 9.0));
    // The inside of the grid, clear of its frame.
    const QRect inside = QRectF(l.grid.topLeft() * scale, l.grid.size() * scale).toAlignedRect().adjusted(3, 3, -3, -3);
    int worst = 0;
    QPoint at;
    for (int y = inside.top(); y <= inside.bottom(); ++y)
        for (int x = inside.left(); x <= inside.right(); ++x) {
            const QColor c(image.pixel(x, y));
            const int d = std::max({std::abs(c.red() - expected.red()), std::abs(c.green() - expected.green()),
                                    std::abs(c.blue() - expected.blue())});
            if (d > worst) {
                worst = d;
                at = QPoint(x, y);
            }
        }
    QVERIFY2(worst <= 3, qPrintable(QStringLiteral("pixel (%1, %2) differs by %3 from the cells' colour %4")
                                        .arg(at.x())
                                        .arg(at.y())
                                        .arg(worst)
                                        .arg(expected.name())));
}

void TestPaperFigures::defaultSizeFitsAPage_data()
{
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("view");
    QTest::newRow("8 heads x 256 tokens, grid") << 256 << 8 << int(FigureView::Heads);
    QTest::newRow("48 heads x 32 tokens, grid") << 32 << 48 << int(FigureView::Heads);
    QTest::newRow("4 heads x 12 tokens, grid") << 12 << 4 << int(FigureView::Heads);
    QTest::newRow("1 head x 256 tokens") << 256 << 1 << int(FigureView::Head);
    QTest::newRow("1 head x 64 tokens, mean") << 64 << 2 << int(FigureView::Mean);
    QTest::newRow("mask 128") << 128 << 1 << int(FigureView::Mask);
    QTest::newRow("teaching") << 16 << 2 << int(FigureView::Teaching);
}

void TestPaperFigures::defaultSizeFitsAPage()
{
    // A figure for a paper fits the text width of a page (7 in, 504 pt) and its height
    // (9 in) at the default font size: tiles shrink and labels thin out instead.
    QFETCH(int, tokens);
    QFETCH(int, heads);
    QFETCH(int, view);
    RandomProblemOptions ro;
    ro.tokens = tokens;
    ro.modelDim = heads * 4;
    ro.heads = heads;
    ro.causal = true;
    Project project = randomProject(ro);
    project.title = "Random";
    auto trace = CpuBackend().compute(project.problem);
    QVERIFY(trace);
    FigureOptions o;
    o.view = FigureView(view);
    const QSizeF page = FigureExporter(project, *trace).pageSize(o, {});
    QString error; // kept as an artifact to look at
    QVERIFY2(
        FigureExporter(project, *trace)
            .write(kFigureDir +
                       QStringLiteral("/fit-%1-%2-%3.png").arg(FigureOptions::viewKey(o.view)).arg(heads).arg(tokens),
                   o, {}, &error),
        qPrintable(error));
    qInfo("%.0f x %.0f pt (%.1f x %.1f cm)", page.width(), page.height(), page.width() * 2.54 / 72,
          page.height() * 2.54 / 72);
    QVERIFY2(page.width() <= 504.5, qPrintable(QString::number(page.width())));
    if (o.view != FigureView::Teaching)
        QVERIFY2(page.height() <= 648.5, qPrintable(QString::number(page.height())));
    QVERIFY(page.width() >= 150);
    QCOMPARE(o.fontSize, 10);
    if (o.view == FigureView::Heads) {
        // The tiles still show their heatmaps: at least 30 pt of grid each.
        const FigureRenderer renderer(ShownAttention::ofProject(project, *trace), o);
        const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), page));
        const HeatmapLayout l = HeatmapRenderer(*maps[0].data, maps[0].options).layout(maps[0].target);
        QVERIFY2(l.grid.width() >= 30, qPrintable(QString::number(l.grid.width())));
    }
}

void TestPaperFigures::axisTitlesNameQueryAndKey_data()
{
    QTest::addColumn<int>("view");
    for (FigureView v : {FigureView::Head, FigureView::Heads, FigureView::Mean})
        QTest::newRow(qPrintable(FigureOptions::viewKey(v))) << int(v);
}

void TestPaperFigures::axisTitlesNameQueryAndKey()
{
    QFETCH(int, view);
    const Computed c = load(QStringLiteral("cross-attention-translation"));
    FigureOptions o;
    o.view = FigureView(view);
    const QString path = kFigureDir + QStringLiteral("/axis-%1.svg").arg(FigureOptions::viewKey(o.view));
    QString error;
    QVERIFY2(FigureExporter(c.project, c.trace).write(path, o, {}, &error), qPrintable(error));
    auto svg = test::readSvg(path);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    QVERIFY2(svg.texts.contains(QStringLiteral("query")), qPrintable(svg.texts.join(QLatin1Char('|'))));
    QVERIFY(svg.texts.contains(QStringLiteral("key")));
    o.axisTitles = false;
    QVERIFY2(FigureExporter(c.project, c.trace).write(path, o, {}, &error), qPrintable(error));
    svg = test::readSvg(path);
    QVERIFY(!svg.texts.contains(QStringLiteral("query")));
    QVERIFY(!svg.texts.contains(QStringLiteral("key")));
}

QTEST_MAIN(TestPaperFigures)
#include "tst_paper_figures.moc"
