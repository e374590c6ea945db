// The alignment view's renderer (a translation's cross-attention, source above, target below):
// the shifted labelling, the mean and one head, </s> hidden and the rows renormalised, hover,
// hit-testing against the anchors, long sentences' labels that never overlap, bad input named,
// and an English→Chinese figure kept in the build tree (figures/api/alignment-*.png).

#include "app/render/AlignmentRenderer.h"

#include <QDir>
#include <QImage>
#include <QPainter>
#include <QtTest>

using namespace attnscope;

namespace {

// Two heads of a T = 5, S = 4 layer; the last source column is </s>, heavy as it is in real models.
std::vector<MatrixF> twoHeads()
{
    MatrixF h0(5, 4), h1(5, 4);
    h0 << 0.1f, 0.1f, 0.1f, 0.7f, //
        0.6f, 0.1f, 0.1f, 0.2f,   //
        0.1f, 0.5f, 0.2f, 0.2f,   //
        0.1f, 0.1f, 0.6f, 0.2f,   //
        0.05f, 0.05f, 0.1f, 0.8f;
    h1 << 0.2f, 0.2f, 0.0f, 0.6f, //
        0.2f, 0.2f, 0.2f, 0.4f,   //
        0.0f, 0.7f, 0.1f, 0.2f,   //
        0.0f, 0.0f, 0.5f, 0.5f,   //
        0.1f, 0.1f, 0.1f, 0.7f;
    return {h0, h1};
}

const QStringList kSource = {QStringLiteral("The"), QStringLiteral("cat"), QStringLiteral("sat"),
                             QStringLiteral("</s>")};
// The decoder's input: the start token (Marian's pad), then the target, </s> included.
const QStringList kTarget = {QStringLiteral("<pad>"), QStringLiteral("\u732b"), QStringLiteral("\u5750"),
                             QStringLiteral("\u3002"), QStringLiteral("</s>")};
constexpr int kEos = 3;

AlignmentOptions options(int head = -1, bool shift = false, bool hide = false)
{
    AlignmentOptions o;
    o.head = head;
    o.shiftByOne = shift;
    o.hideEndOfSentence = hide;
    o.font.setPixelSize(12);
    return o;
}

const QRectF kRect(0, 0, 600, 300);

QImage render(const AlignmentRenderer &r, QSize size = {600, 300})
{
    QImage image(size, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    r.paint(p, QRectF(QPointF(0, 0), QSizeF(size)));
    return image;
}

int inkIn(const QImage &image, const QRect &box)
{
    int n = 0;
    for (int y = box.top(); y <= box.bottom(); ++y)
        for (int x = box.left(); x <= box.right(); ++x)
            if (image.pixel(x, y) != qRgb(255, 255, 255))
                ++n;
    return n;
}

QString figureDir()
{
    const QString dir = QStringLiteral(ATTNSCOPE_FIGURE_DIR "/api");
    QDir().mkpath(dir);
    return dir;
}

} // namespace

class TestAlignment : public QObject
{
    Q_OBJECT

private slots:
    void rowsAndLabels_data();
    void rowsAndLabels();
    void meanAndOneHead();
    void hiddenEndOfSentenceRenormalisesRows();
    void hoverShowsOnlyThoseLines();
    void anchorsHitTheirTokens();
    void longSentencesLabelsNeverOverlap_data();
    void longSentencesLabelsNeverOverlap();
    void badInputIsNamed();
    void englishToChineseFigure();
};

void TestAlignment::rowsAndLabels_data()
{
    QTest::addColumn<bool>("shift");
    QTest::addColumn<int>("rows");
    QTest::addColumn<QString>("first");
    QTest::addColumn<QString>("last");
    QTest::newRow("decoder input") << false << 5 << QStringLiteral("<pad>") << QStringLiteral("</s>");
    // Row i predicts token i+1: labelled with it, and the row after </s> dropped.
    QTest::newRow("shifted") << true << 4 << QStringLiteral("\u732b") << QStringLiteral("</s>");
}

void TestAlignment::rowsAndLabels()
{
    QFETCH(bool, shift);
    QFETCH(int, rows);
    QFETCH(QString, first);
    QFETCH(QString, last);
    const AlignmentRenderer r(twoHeads(), kSource, kTarget, kEos, options(-1, shift));
    QVERIFY(r.error().isEmpty());
    QCOMPARE(r.rows(), rows);
    QCOMPARE(r.targetLabel(0), first);
    QCOMPARE(r.targetLabel(rows - 1), last);
    QCOMPARE(r.targetLabel(rows), QString());
    // The shift relabels; decoder row 0 stays row 0: the mean of 0.1 and 0.2.
    QCOMPARE_LT(std::abs(r.weight(0, 1) - 0.15), 1e-6);
    QCOMPARE(r.describe(0, 1), shift ? QStringLiteral("\u732b → cat: 0.15") : QStringLiteral("<pad> → cat: 0.15"));
}

void TestAlignment::meanAndOneHead()
{
    const AlignmentRenderer mean(twoHeads(), kSource, kTarget, kEos, options(-1));
    const AlignmentRenderer head0(twoHeads(), kSource, kTarget, kEos, options(0));
    const AlignmentRenderer head1(twoHeads(), kSource, kTarget, kEos, options(1));
    QCOMPARE_LT(std::abs(mean.weight(1, 0) - 0.4), 1e-6);
    QCOMPARE_LT(std::abs(mean.weight(4, 3) - 0.75), 1e-6);
    QCOMPARE_LT(std::abs(head0.weight(2, 1) - 0.5), 1e-6);
    QCOMPARE_LT(std::abs(head1.weight(2, 1) - 0.7), 1e-6);
    QCOMPARE(head1.weight(3, 0), 0.0);
    QCOMPARE(mean.weight(-1, 0), 0.0);
    QCOMPARE(mean.weight(0, 4), 0.0);
}

void TestAlignment::hiddenEndOfSentenceRenormalisesRows()
{
    for (int head : {-1, 0, 1}) {
        const AlignmentRenderer shown(twoHeads(), kSource, kTarget, kEos, options(head, false, false));
        const AlignmentRenderer r(twoHeads(), kSource, kTarget, kEos, options(head, false, true));
        for (int i = 0; i < r.rows(); ++i) {
            double sum = 0;
            for (int j = 0; j < kEos; ++j) {
                sum += r.weight(i, j);
                // Each word keeps its share of what the words had.
                const double words = 1.0 - shown.weight(i, kEos);
                QCOMPARE_LT(std::abs(r.weight(i, j) - shown.weight(i, j) / words), 1e-5);
            }
            QCOMPARE_LT(std::abs(sum - 1.0), 1e-5);
            QCOMPARE(r.weight(i, kEos), 0.0);
        }
        // Mean, row 0: (0.15, 0.15, 0.05) over 0.35.
        if (head < 0)
            QCOMPARE_LT(std::abs(r.weight(0, 2) - 0.05 / 0.35), 1e-5);
        QVERIFY(r.sourceAnchor(kRect, kEos).isNull());
        QVERIFY(r.sourceLabelRect(kRect, kEos).isEmpty());
        for (double x = 0; x <= kRect.width(); x += 1)
            for (double y = 0; y <= kRect.height(); y += 3)
                QVERIFY(r.sourceAt(kRect, QPointF(x, y)) != kEos);
    }
    // Without an end-of-sentence column there is nothing to hide.
    const AlignmentRenderer none(twoHeads(), kSource, kTarget, -1, options(-1, false, true));
    QCOMPARE_LT(std::abs(none.weight(0, 3) - 0.65), 1e-6);
}

void TestAlignment::hoverShowsOnlyThoseLines()
{
    AlignmentRenderer r(twoHeads(), kSource, kTarget, kEos, options());
    // Just above a target's anchor only its own lines pass; just below a source's, only the lines into it.
    const auto aboveTarget = [&](int row) {
        return QRect((r.targetAnchor(kRect, row) + QPointF(-3, -14)).toPoint(), QSize(7, 7));
    };
    const auto belowSource = [&](int source) {
        return QRect((r.sourceAnchor(kRect, source) + QPointF(-3, 8)).toPoint(), QSize(7, 7));
    };
    const QImage all = render(r);
    for (int i = 0; i < r.rows(); ++i)
        QVERIFY2(inkIn(all, aboveTarget(i)) > 0, qPrintable(QString::number(i)));
    for (int j = 0; j < r.sources(); ++j)
        QVERIFY2(inkIn(all, belowSource(j)) > 0, qPrintable(QString::number(j)));

    r.setHover(2, -1);
    const QImage row = render(r);
    for (int i = 0; i < r.rows(); ++i)
        QCOMPARE(inkIn(row, aboveTarget(i)) > 0, i == 2);

    r.setHover(-1, 1);
    const QImage source = render(r);
    for (int j = 0; j < r.sources(); ++j)
        QCOMPARE(inkIn(source, belowSource(j)) > 0, j == 1);

    // A hovered row wins over a hovered source.
    r.setHover(0, 1);
    const QImage both = render(r);
    QVERIFY(inkIn(both, aboveTarget(0)) > 0);
    QCOMPARE(inkIn(both, aboveTarget(1)), 0);
}

void TestAlignment::anchorsHitTheirTokens()
{
    for (bool shift : {false, true}) {
        for (bool hide : {false, true}) {
            const AlignmentRenderer r(twoHeads(), kSource, kTarget, kEos, options(-1, shift, hide));
            for (int i = 0; i < r.rows(); ++i) {
                QCOMPARE(r.targetAt(kRect, r.targetAnchor(kRect, i)), i);
                QCOMPARE(r.targetAt(kRect, r.targetLabelRect(kRect, i).center()), i);
                QCOMPARE(r.sourceAt(kRect, r.targetAnchor(kRect, i)), -1);
            }
            for (int j = 0; j < r.sources(); ++j) {
                if (hide && j == kEos)
                    continue;
                QCOMPARE(r.sourceAt(kRect, r.sourceAnchor(kRect, j)), j);
                QCOMPARE(r.sourceAt(kRect, r.sourceLabelRect(kRect, j).center()), j);
                QCOMPARE(r.targetAt(kRect, r.sourceAnchor(kRect, j)), -1);
            }
            // Between the rows, among the lines: no token.
            QCOMPARE(r.targetAt(kRect, kRect.center()), -1);
            QCOMPARE(r.sourceAt(kRect, kRect.center()), -1);
            QCOMPARE(r.targetAt(kRect, QPointF(-5, r.targetAnchor(kRect, 0).y())), -1);
            QCOMPARE(r.targetAt(kRect, QPointF(kRect.right() + 5, r.targetAnchor(kRect, 0).y())), -1);
        }
    }
}

void TestAlignment::longSentencesLabelsNeverOverlap_data()
{
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("atLeastDrawn");
    // 40 tokens at 600 px: each label drawn, upright; 150: every few, with their positions.
    QTest::newRow("40") << 40 << 40;
    QTest::newRow("150") << 150 << 20;
}

void TestAlignment::longSentencesLabelsNeverOverlap()
{
    QFETCH(int, tokens);
    QFETCH(int, atLeastDrawn);
    const QStringList words = {QStringLiteral("international"), QStringLiteral("the"), QStringLiteral("negotiations"),
                               QStringLiteral("\u8c08\u5224"),  QStringLiteral(","),   QStringLiteral("unprecedented")};
    QStringList source, target;
    for (int i = 0; i < tokens; ++i) {
        source << words[i % words.size()];
        target << words[(i + 3) % words.size()];
    }
    const int t = tokens, s = tokens;
    std::vector<MatrixF> heads = {MatrixF::Constant(t, s, 1.0f / float(s))};
    const QRectF rect(0, 0, 600, 400);
    const AlignmentRenderer r(heads, source, target, s - 1, options());
    QVERIFY(r.error().isEmpty());
    for (bool sourceRow : {true, false}) {
        std::vector<QRectF> rects;
        for (int i = 0; i < tokens; ++i) {
            const QRectF box = sourceRow ? r.sourceLabelRect(rect, i) : r.targetLabelRect(rect, i);
            if (box.isEmpty())
                continue;
            QVERIFY(rect.contains(box));
            // Too long for the slot side by side: upright.
            QVERIFY2(box.height() > box.width(), qPrintable(QString::number(i)));
            rects.push_back(box);
        }
        QVERIFY2(int(rects.size()) >= atLeastDrawn, qPrintable(QString::number(rects.size())));
        for (size_t a = 0; a < rects.size(); ++a)
            for (size_t b = a + 1; b < rects.size(); ++b) {
                const QRectF both = rects[a].intersected(rects[b]);
                QVERIFY2(both.width() < 1e-6 || both.height() < 1e-6,
                         qPrintable(QStringLiteral("labels %1 and %2 overlap").arg(a).arg(b)));
            }
        // The labels and the anchors stay apart.
        const QPointF anchor = sourceRow ? r.sourceAnchor(rect, 0) : r.targetAnchor(rect, 0);
        QVERIFY(!rects.front().contains(anchor));
    }
    QImage image = render(r, rect.size().toSize());
    QVERIFY(image.save(figureDir() + QStringLiteral("/alignment-long-%1.png").arg(tokens)));
}

void TestAlignment::badInputIsNamed()
{
    const AlignmentRenderer labels(twoHeads(), kSource.mid(0, 3), kTarget, kEos, options());
    QCOMPARE(labels.error(), QStringLiteral("Cross-attention: 3 source labels for 4 source tokens"));
    QCOMPARE(labels.rows(), 0);
    const AlignmentRenderer targets(twoHeads(), kSource, kTarget.mid(0, 4), kEos, options());
    QCOMPARE(targets.error(), QStringLiteral("Cross-attention: 4 target labels for 5 target rows"));
    std::vector<MatrixF> ragged = twoHeads();
    ragged[1] = MatrixF::Zero(5, 3);
    const AlignmentRenderer shapes(ragged, kSource, kTarget, kEos, options());
    QCOMPARE(shapes.error(), QStringLiteral("Cross-attention: head 1 is 5 x 3, head 0 is 5 x 4"));
    const AlignmentRenderer eos(twoHeads(), kSource, kTarget, 4, options());
    QCOMPARE(eos.error(),
             QStringLiteral("Cross-attention: end-of-sentence column 4 is not one of the 4 source tokens"));
    // The message is what is painted.
    QVERIFY(inkIn(render(shapes), QRect(0, 0, 600, 40)) > 0);
    // No heads: nothing to draw, and no complaint.
    const AlignmentRenderer empty({}, {}, {}, -1, options());
    QVERIFY(empty.error().isEmpty());
    QCOMPARE(empty.rows(), 0);
    QCOMPARE(inkIn(render(empty), QRect(0, 0, 600, 300)), 0);
}

void TestAlignment::englishToChineseFigure()
{
    // "▁The ▁cat ▁sat ▁on ▁the ▁mat . </s>" → "<pad> 猫 坐 在 垫子 上 。 </s>", labels readable.
    const QStringList source = QStringLiteral("The cat sat on the mat . </s>").split(QLatin1Char(' '));
    const QStringList target = {QStringLiteral("<pad>"),  QStringLiteral("\u732b"),       QStringLiteral("\u5750"),
                                QStringLiteral("\u5728"), QStringLiteral("\u57ab\u5b50"), QStringLiteral("\u4e0a"),
                                QStringLiteral("\u3002"), QStringLiteral("</s>")};
    // Decoder row i attends to the source word of the token it predicts (row i+1's word), plus </s>.
    const int predicted[] = {1, 2, 3, 5, 3, 6, 7, 7};
    MatrixF a = MatrixF::Constant(8, 8, 0.02f);
    for (int i = 0; i < 8; ++i) {
        a(i, predicted[i]) += 0.6f;
        a(i, 7) += 0.26f;
        a.row(i) /= a.row(i).sum();
    }
    MatrixF b = a;
    b.col(7) *= 3.0f;
    for (int i = 0; i < 8; ++i)
        b.row(i) /= b.row(i).sum();
    const std::vector<MatrixF> heads = {a, b};

    AlignmentOptions o = options(-1, true, false);
    o.font.setPixelSize(15);
    const AlignmentRenderer shifted(heads, source, target, 7, o);
    QCOMPARE(shifted.targetLabel(0), QStringLiteral("\u732b"));
    // 猫 is predicted by row 0, which looks at "cat".
    QCOMPARE(shifted.sourceAt(kRect, shifted.sourceAnchor(kRect, 1)), 1);
    QVERIFY(shifted.weight(0, 1) > shifted.weight(0, 0));
    const QImage image = render(shifted, {800, 320});
    QVERIFY(image.save(figureDir() + QStringLiteral("/alignment-en-zh.png")));

    o.hideEndOfSentence = true;
    o.hoverTarget = 1;
    const AlignmentRenderer hidden(heads, source, target, 7, o);
    QVERIFY(render(hidden, {800, 320}).save(figureDir() + QStringLiteral("/alignment-en-zh-hover.png")));

    // The Chinese labels are drawn as glyphs: two different characters give different pixels.
    QStringList other = target;
    other[1] = QStringLiteral("\u72d7"); // 狗
    const AlignmentRenderer dog(heads, source, other, 7, options(-1, true, false));
    const QRect label = dog.targetLabelRect(kRect, 0).toAlignedRect();
    const QImage cat = render(AlignmentRenderer(heads, source, target, 7, options(-1, true, false)));
    const QImage dogImage = render(dog);
    QVERIFY(inkIn(cat, label) > 0);
    QVERIFY(cat.copy(label) != dogImage.copy(label));
}

QTEST_MAIN(TestAlignment)
#include "tst_alignment.moc"
