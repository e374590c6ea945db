// The alignment view in a real window (run under Xvfb by CTest): an English→Chinese
// cross-attention layer shown, its controls driven through their object names (head selector,
// shift by one step, hide </s>), hover with its tooltip, export, and screenshots of each state
// kept in the build tree (screenshots/alignment-*.png).

#include "app/gui/views/AlignmentView.h"

#include "../common/WindowTestUtil.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QPainter>
#include <QScreen>
#include <QSignalSpy>
#include <QTest>

using namespace attnscope;

namespace {

const QStringList kSource = QStringLiteral("The cat sat on the mat . </s>").split(QLatin1Char(' '));
const QStringList kTarget = {QStringLiteral("<pad>"),  QStringLiteral("\u732b"),       QStringLiteral("\u5750"),
                             QStringLiteral("\u5728"), QStringLiteral("\u57ab\u5b50"), QStringLiteral("\u4e0a"),
                             QStringLiteral("\u3002"), QStringLiteral("</s>")};
constexpr int kEos = 7;

// Two heads: row i looks at the source word of the token it predicts, and at </s> (more so in head 1).
std::vector<MatrixF> heads()
{
    const int predicted[] = {1, 2, 3, 5, 3, 6, 7, 7};
    MatrixF a = MatrixF::Constant(8, 8, 0.02f);
    for (int i = 0; i < 8; ++i) {
        a(i, predicted[i]) += 0.6f;
        a(i, kEos) += 0.26f;
        a.row(i) /= a.row(i).sum();
    }
    MatrixF b = a;
    b.col(kEos) *= 3.0f;
    for (int i = 0; i < 8; ++i)
        b.row(i) /= b.row(i).sum();
    return {a, b};
}

} // namespace

class TestAlignmentView : public QObject
{
    Q_OBJECT

private slots:
    void controlsChangeWhatIsDrawn();
};

void TestAlignmentView::controlsChangeWhatIsDrawn()
{
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    AlignmentView view;
    view.resize(900, 460);
    view.setCross(heads(), kSource, kTarget, kEos);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    auto *head = view.findChild<QComboBox *>(QStringLiteral("alignmentHead"));
    auto *shift = view.findChild<QCheckBox *>(QStringLiteral("alignmentShift"));
    auto *hideEos = view.findChild<QCheckBox *>(QStringLiteral("alignmentHideEos"));
    QVERIFY(head && shift && hideEos);
    const auto shoot = [&](const QString &name) {
        QVERIFY(test::waitForRepaint(&view));
        const QPixmap shot = view.screen()->grabWindow(view.winId());
        QVERIFY(!shot.isNull());
        QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/alignment-") + name + QStringLiteral(".png")));
        // The lines are on the screen, not only in the widget: the canvas is not blank.
        const QImage canvas = shot.toImage().copy(view.canvas()->geometry());
        int ink = 0;
        for (int y = 0; y < canvas.height(); y += 2)
            for (int x = 0; x < canvas.width(); x += 2)
                ink += canvas.pixel(x, y) != qRgb(255, 255, 255);
        QVERIFY2(ink > 200, qPrintable(name));
    };

    // The mean first, then one entry per head.
    QCOMPARE(head->count(), 3);
    QCOMPARE(head->currentIndex(), 0);
    QCOMPARE(view.head(), -1);
    QCOMPARE(view.rows(), 8);
    shoot(QStringLiteral("mean"));

    QSignalSpy changed(&view, &AlignmentView::headChanged);
    head->setCurrentIndex(2);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toInt(), 1);
    QCOMPARE(view.head(), 1);
    view.setHead(-1);
    QCOMPARE(head->currentIndex(), 0);
    QCOMPARE(changed.count(), 2);
    view.setHead(2); // no such head: ignored
    QCOMPARE(view.head(), -1);

    // Shifted: the row after </s> is dropped and row 0 is labelled 猫.
    QTest::mouseClick(shift, Qt::LeftButton);
    QVERIFY(shift->isChecked());
    QCOMPARE(view.rows(), 7);
    shoot(QStringLiteral("shifted"));

    QVERIFY(!view.sourceAnchor(kEos).isNull());
    QTest::mouseClick(hideEos, Qt::LeftButton);
    QVERIFY(hideEos->isChecked());
    QVERIFY(view.sourceAnchor(kEos).isNull());

    // Hovering 猫 shows its lines; its tooltip names its strongest source word first.
    QTest::mouseMove(view.canvas(), view.targetAnchor(0).toPoint());
    QTRY_COMPARE(view.hoverTarget(), 0);
    QVERIFY2(view.canvas()->toolTip().startsWith(QStringLiteral("\u732b → cat: ")),
             qPrintable(view.canvas()->toolTip()));
    shoot(QStringLiteral("hover"));
    QTest::mouseMove(view.canvas(), view.sourceAnchor(5).toPoint());
    QTRY_COMPARE(view.hoverSource(), 5);
    QCOMPARE(view.hoverTarget(), -1);

    // Shift off again: T rows; the figure export paints what is shown.
    QTest::mouseClick(shift, Qt::LeftButton);
    QCOMPARE(view.rows(), 8);
    QImage figure(800, 360, QImage::Format_RGB32);
    figure.fill(Qt::black);
    {
        QPainter p(&figure);
        view.renderTo(p, QRectF(0, 0, 800, 360));
    }
    QCOMPARE(figure.pixel(2, 2), qRgb(255, 255, 255));
    QVERIFY(figure.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/alignment-export.png")));

    // A new layer keeps the head chosen, where it exists.
    view.setHead(1);
    view.setCross(heads(), kSource, kTarget, kEos);
    QCOMPARE(head->currentIndex(), 2);
    view.setCross({heads().front()}, kSource, kTarget, kEos);
    QCOMPARE(head->count(), 2);
    QCOMPARE(view.head(), -1);
}

QTEST_MAIN(TestAlignmentView)
#include "tst_alignmentview.moc"
