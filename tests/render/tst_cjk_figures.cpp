// Chinese token labels in figures: the CJK font the setup installs (fonts-wqy-microhei) is
// found as a fallback, so PNG and PDF show glyphs (not empty boxes), SVG keeps the characters
// as text and names the CJK family for viewers, the PDF embeds it, and short CJK column
// labels stay upright. Run with a fontconfig that has no CJK font, every test here fails.

#include "FigureTestUtil.h"
#include "RenderTestProjects.h"
#include "app/render/FigureExporter.h"
#include "app/render/HeatmapRenderer.h"

#include <QFontDatabase>
#include <QRawFont>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace attnscope;

namespace {

const QString kHan = QStringLiteral("\u6211\u7231\u673a\u5668\u5b66\u4e60"); // 我爱机器学习

// One head of four Chinese tokens; `order` permutes the labels only (the vectors stay), so two
// orders draw the same cells and differ only where the labels' glyphs differ.
std::string chineseProject(const QStringList &tokens)
{
    QString list;
    for (const QString &t : tokens)
        list += (list.isEmpty() ? QString() : QStringLiteral(", ")) + QLatin1Char('"') + t + QLatin1Char('"');
    return QStringLiteral(R"({"format": "attnscope", "version": 1, "title": "T", "mode": "self",
  "heads": 1, "headDimQK": 2, "headDimV": 2, "scale": "inv_sqrt_dk",
  "query": {"tokens": [%1], "x": [[1, 0], [0.5, 1], [-1, 0.3], [0.2, -0.8]]},
  "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0.5], [-0.5, 1]], "v": [[1, 0], [0, 1]]}})")
        .arg(list)
        .toStdString();
}

const QStringList kTokens = {QStringLiteral("\u6211"), QStringLiteral("\u7231"), QStringLiteral("\u673a\u5668"),
                             QStringLiteral("\u5b66\u4e60")};
const QStringList kSwapped = {QStringLiteral("\u7231"), QStringLiteral("\u6211"), QStringLiteral("\u5b66\u4e60"),
                              QStringLiteral("\u673a\u5668")};

// The family Qt falls back to for Han characters in the figures' default font; empty where
// none has them (QRawFont::fromFont crashes in Qt 6.4 when no font has the writing system).
QString cjkFamily()
{
    if (QFontDatabase::families(QFontDatabase::SimplifiedChinese).isEmpty())
        return {};
    return QRawFont::fromFont(QFont(), QFontDatabase::SimplifiedChinese).familyName();
}

} // namespace

class TestCjkFigures : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void aCjkFontIsTheFallback();
    void pngDrawsDistinctGlyphs();
    void pdfDrawsDistinctGlyphsAndEmbedsTheFont();
    void svgKeepsTheTextAndNamesTheCjkFamily();
    void shortCjkColumnLabelsStayUpright();

private:
    QImage figure(const QStringList &tokens, const QString &suffix);
    QTemporaryDir m_dir;
};

void TestCjkFigures::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

QImage TestCjkFigures::figure(const QStringList &tokens, const QString &suffix)
{
    const test::ComputedProject c = test::computeJson(chineseProject(tokens));
    const QString path = m_dir.filePath(QStringLiteral("zh-%1.%2").arg(tokens.first(), suffix));
    QString error;
    if (!FigureExporter(c.project, c.trace).write(path, {}, {}, &error))
        qFatal("writing %s: %s", qPrintable(path), qPrintable(error));
    if (suffix == QLatin1String("png"))
        return QImage(path);
    if (suffix == QLatin1String("pdf"))
        return test::rasterisePdf(path, 100, path + QStringLiteral("-page"));
    return {};
}

void TestCjkFigures::aCjkFontIsTheFallback()
{
    // scripts/install-deps.sh installs fonts-wqy-microhei; the .deb depends on it.
    QVERIFY2(!cjkFamily().isEmpty(), "no font for Simplified Chinese");
    const QRawFont raw = QRawFont::fromFont(QFont(), QFontDatabase::SimplifiedChinese);
    for (const QChar ch : kHan)
        QVERIFY2(raw.supportsCharacter(ch), qPrintable(QStringLiteral("%1 lacks %2").arg(raw.familyName(), ch)));
}

void TestCjkFigures::pngDrawsDistinctGlyphs()
{
    // With no CJK font every label is the same empty box, and the two orders draw the same
    // image; with glyphs, the label area differs.
    const QImage a = figure(kTokens, QStringLiteral("png")), b = figure(kSwapped, QStringLiteral("png"));
    QVERIFY(!a.isNull() && !b.isNull());
    QCOMPARE(a.size(), b.size());
    const double diff = test::meanPixelDifference(a, b);
    QVERIFY2(diff > 0.5, qPrintable(QStringLiteral("mean difference %1").arg(diff)));
}

void TestCjkFigures::pdfDrawsDistinctGlyphsAndEmbedsTheFont()
{
    if (test::pdftoppm().isEmpty())
        QFAIL("pdftoppm (poppler-utils) is not installed: run scripts/install-deps.sh");
    const QImage a = figure(kTokens, QStringLiteral("pdf")), b = figure(kSwapped, QStringLiteral("pdf"));
    QVERIFY(!a.isNull() && !b.isNull());
    const double diff = test::meanPixelDifference(a, b);
    QVERIFY2(diff > 0.5, qPrintable(QStringLiteral("mean difference %1").arg(diff)));

    QProcess p;
    p.start(QStandardPaths::findExecutable(QStringLiteral("pdffonts")),
            {m_dir.filePath(QStringLiteral("zh-%1.pdf").arg(kTokens.first()))});
    QVERIFY(p.waitForFinished(60000) && p.exitCode() == 0);
    const QString fonts = QString::fromUtf8(p.readAllStandardOutput());
    // pdffonts: "name type... encoding emb sub uni object ID"; the CJK family, spaces removed.
    const QString name = cjkFamily().remove(QLatin1Char(' '));
    QVERIFY2(!name.isEmpty(), "no font for Simplified Chinese");
    bool embedded = false;
    for (const QString &line : fonts.split(QLatin1Char('\n')))
        if (line.contains(name, Qt::CaseInsensitive))
            embedded = QRegularExpression(QStringLiteral("\\s+yes\\s+(yes|no)\\s+(yes|no)\\s+\\d+\\s+\\d+\\s*$"))
                           .match(line)
                           .hasMatch();
    QVERIFY2(embedded, qPrintable(QStringLiteral("%1 not embedded:\n%2").arg(name, fonts)));
}

void TestCjkFigures::svgKeepsTheTextAndNamesTheCjkFamily()
{
    const test::ComputedProject c = test::computeJson(chineseProject(kTokens));
    const QString path = m_dir.filePath(QStringLiteral("zh.svg"));
    QString error;
    QVERIFY2(FigureExporter(c.project, c.trace).write(path, {}, {}, &error), qPrintable(error));
    const auto svg = test::readSvg(path);
    QVERIFY2(svg.valid, qPrintable(svg.error));
    const QString texts = svg.texts.join(QLatin1Char('|'));
    for (const QString &t : kTokens)
        QVERIFY2(svg.texts.contains(t), qPrintable(QStringLiteral("%1 not a <text>: %2").arg(t, texts)));
    // A viewer whose sans-serif has no Han glyphs still finds the family the figure was laid out with.
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY2(!cjkFamily().isEmpty(), "no font for Simplified Chinese");
    const QString family = QStringLiteral("'%1'").arg(cjkFamily());
    QVERIFY2(QString::fromUtf8(f.readAll()).contains(family), qPrintable(family));
}

void TestCjkFigures::shortCjkColumnLabelsStayUpright()
{
    const test::ComputedProject c = test::computeJson(chineseProject(kTokens));
    HeatmapOptions o;
    o.font.setPixelSize(13);
    const HeatmapData data = HeatmapData::of(ShownAttention::ofProject(c.project, c.trace), 0, HeatmapQuantity::Weights,
                                             ScaleScope::Absolute);
    const HeatmapLayout l = HeatmapRenderer(data, o).layout(QRectF(0, 0, 400, 320));
    QVERIFY(!l.columnLabels.isEmpty());
    // Two Han characters are about two em wide: they fit across a cell of ~60 px.
    QVERIFY2(!l.rotatedColumnLabels, qPrintable(QStringLiteral("cell %1 px").arg(l.cellWidth)));
    QVERIFY(l.columnLabels.height() < 2.5 * QFontMetricsF(o.font).height());
}

QTEST_MAIN(TestCjkFigures)
#include "tst_cjk_figures.moc"
