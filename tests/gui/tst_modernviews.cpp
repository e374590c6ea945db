// The model view for today's models, built on the set's layerFacts (any source: a model run, a
// project, an attention file with facts): query heads framed by their key/value head, sliding-window
// layers named and their band's edge drawn, the first-token sink apart as a bar and out of the
// colour scale, and that choice remembered. Hand-made maps whose pooled values are known.

#include "app/gui/document/AttentionJobs.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/render/ColorMap.h"

#include "../common/TestUtil.h"

#include <QCheckBox>
#include <QDir>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

#include <memory>

using namespace attnscope;

namespace {

constexpr int kTokens = 12, kWindow = 4;

// Layer 0: 4 query heads sharing 2 key/value heads, causal, 0.6 on the first token and the rest
// spread over the others in reach. Layer 1: 4 heads of their own with a sliding window of 4
// (keys i-3..i), uniform in the window.
AttentionSet modernSet()
{
    std::vector<float> values;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (int i = 0; i < kTokens; ++i)
                for (int j = 0; j < kTokens; ++j) {
                    float w = 0.0f;
                    if (l == 0)
                        w = i == 0 ? (j == 0 ? 1.0f : 0.0f) : j == 0 ? 0.6f : j <= i ? 0.4f / float(i) : 0.0f;
                    else
                        w = j <= i && j > i - kWindow ? 1.0f / float(std::min(i + 1, kWindow)) : 0.0f;
                    values.push_back(w);
                }
    auto set = AttentionSet::fromFloats(std::move(values), 1, 2, 4, kTokens, kTokens);
    if (!set)
        qFatal("%s", set.message().c_str());
    set->layerFacts = {LayerFacts{4, 2, 0, 0.125}, LayerFacts{4, 4, kWindow, 0.125}};
    return std::move(set).value();
}

std::shared_ptr<const AttentionJobs::Thumbnails> thumbnailsOf(const AttentionSet &set, bool sinkApart,
                                                              ScaleScope scope = ScaleScope::PerHead)
{
    ShownAttention shown;
    shown.set = set;
    const std::atomic<bool> cancel{false};
    return std::make_shared<const AttentionJobs::Thumbnails>(
        AttentionJobs::thumbnails(shown, ColorMapKind::Viridis, scope, ColorScaleKind::Linear, cancel, {}, sinkApart));
}

bool near(QRgb a, QRgb b, int tolerance = 40)
{
    return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b)) <= tolerance;
}

} // namespace

class TestModernViews : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void queryHeadsAreFramedByTheirKeyValueHead();
    void smallModelsFillTheView();
    void slidingWindowLayerIsNamedAndItsBandDrawn();
    void sinkApartLeavesTheFirstKeyOutOfTheScale();
    void sinkApartIsRemembered();
};

void TestModernViews::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QSettings().clear();
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
}

void TestModernViews::queryHeadsAreFramedByTheirKeyValueHead()
{
    const AttentionSet set = modernSet();
    ModelView view;
    view.resize(720, 420);
    view.setLayerFacts(set.layerFacts);
    view.setThumbnails(thumbnailsOf(set, false));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.groupSize(0), 2);
    QCOMPARE(view.groupSize(1), 1); // its own keys and values: nothing framed
    QCOMPARE(view.groupFrame(0, 1), view.tileRect(0, 2).united(view.tileRect(0, 3)));
    // The second group's dashed frame is drawn in its colour along its left edge.
    const QImage image = view.viewport()->grab().toImage();
    const QRect frame = view.groupFrame(0, 1);
    int orange = 0;
    for (int y = frame.top(); y <= frame.bottom(); ++y)
        orange += near(image.pixel(frame.left() + 1, y), qRgb(0xc0, 0x5a, 0x1e)) ? 1 : 0;
    QVERIFY2(orange > frame.height() / 4, qPrintable(QString::number(orange)));
    // Layer 1's tiles have no frame there.
    const QRect ungrouped = view.tileRect(1, 2);
    for (int y = ungrouped.top(); y <= ungrouped.bottom(); ++y)
        QVERIFY(!near(image.pixel(ungrouped.left() + 1, y), qRgb(0xc0, 0x5a, 0x1e)));
}

// Two layers of four heads in a large window: the tiles grow until the rows or the columns fill
// the view (up to kMaxTileSize), rather than leaving most of it empty.
void TestModernViews::smallModelsFillTheView()
{
    const AttentionSet set = modernSet();
    ModelView view;
    view.resize(1400, 900);
    view.setLayerFacts(set.layerFacts);
    view.setThumbnails(thumbnailsOf(set, false));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QSize free(view.viewport()->width() - view.tileRect(0, 0).left(),
                     view.viewport()->height() - view.tileRect(0, 0).top());
    const int fill = std::min(free.width() / 4, free.height() / 2);
    QVERIFY2(fill > 160, qPrintable(QString::number(fill))); // the old cap would have left room
    QCOMPARE(view.tileSize(), std::min(fill, int(ModelView::kMaxTileSize)));
    QVERIFY(view.tileRect(1, 3).right() < view.viewport()->width());
}

void TestModernViews::slidingWindowLayerIsNamedAndItsBandDrawn()
{
    const AttentionSet set = modernSet();
    ModelView view;
    view.resize(720, 420);
    view.setLayerFacts(set.layerFacts);
    view.setThumbnails(thumbnailsOf(set, false));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(view.layerNote(0).isEmpty());
    QCOMPARE(view.layerNote(1), QStringLiteral("window 4"));
    QVERIFY(!view.windowEdge(0, 0));
    const auto edge = view.windowEdge(1, 2);
    QVERIFY(edge);
    // Row i reaches keys i-3..i: the edge runs from (key 0, query 3) to (key 9, query 12).
    const QRectF r = view.mapRect(1, 2);
    QCOMPARE(edge->p1(), QPointF(r.left(), r.top() + 3.0 / kTokens * r.height()));
    QCOMPARE(edge->p2(), QPointF(r.left() + 9.0 / kTokens * r.width(), r.bottom()));
    // A window as long as the text cuts nothing: no edge.
    AttentionSet wide = set;
    wide.layerFacts[1].window = kTokens;
    view.setLayerFacts(wide.layerFacts);
    QVERIFY(!view.windowEdge(1, 2));
    view.setLayerFacts(set.layerFacts);
    QVERIFY(view.viewport()->grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-view-groups-window.png")));
}

void TestModernViews::sinkApartLeavesTheFirstKeyOutOfTheScale()
{
    const AttentionSet set = modernSet();
    const ColorMap map(ColorMapKind::Viridis);
    // Drawn as any other key: per head, the scale runs to the sink's 1.0 (row 0), so the 0.4 of
    // key 1 in row 1 is a dark 0.4 of it.
    const auto together = thumbnailsOf(set, false);
    QVERIFY(!together->sinkApart);
    QVERIFY(together->sinks.empty());
    const QImage &whole = together->images[0];
    QCOMPARE(whole.width(), kTokens);
    QCOMPARE(whole.pixel(0, 0), map.at(1.0));
    QCOMPARE(whole.pixel(0, 5), map.at(0.6));
    QCOMPARE(whole.pixel(1, 1), map.at(0.4));
    // Apart: the map shows keys 1.. only, its own largest value (0.4 in row 1) on top of the scale,
    // and the sink is a one-pixel bar coloured over [0, 1].
    const auto apart = thumbnailsOf(set, true);
    QVERIFY(apart->sinkApart);
    QCOMPARE(apart->sinks.size(), apart->images.size());
    const QImage &rest = apart->images[0];
    QCOMPARE(rest.width(), kTokens - 1);
    QCOMPARE(rest.pixel(0, 1), map.at(1.0)); // key 1 of row 1: 0.4, the largest of keys 1..
    const QImage &bar = apart->sinks[0];
    QCOMPARE(bar.size(), QSize(1, kTokens));
    QCOMPARE(bar.pixel(0, 0), map.at(1.0));
    QCOMPARE(bar.pixel(0, 5), map.at(0.6));
    // In the view: the bar at the tile's left, the map beside it.
    ModelView view;
    view.resize(720, 420);
    view.setLayerFacts(set.layerFacts);
    view.setThumbnails(apart);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QRectF sink = view.sinkRect(0, 1), shown = view.mapRect(0, 1);
    QVERIFY(!sink.isEmpty());
    QVERIFY(sink.right() < shown.left());
    QVERIFY(sink.width() < shown.width() / 8);
    const QImage image = view.viewport()->grab().toImage();
    QVERIFY(near(image.pixel(sink.center().toPoint()), map.at(0.6), 12));
    // The window's edge starts at key 1 now, the map's left edge.
    const auto edge = view.windowEdge(1, 0);
    QVERIFY(edge);
    QCOMPARE(edge->p1(), QPointF(view.mapRect(1, 0).left(),
                                 view.mapRect(1, 0).top() + 4.0 / kTokens * view.mapRect(1, 0).height()));
    QVERIFY(image.save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-view-sink-apart.png")));
}

void TestModernViews::sinkApartIsRemembered()
{
    {
        MainWindow w;
        w.show();
        auto *box = w.findChild<QCheckBox *>(QStringLiteral("viewSinkApart"));
        QVERIFY(box);
        QVERIFY(!box->isChecked());
        box->setChecked(true);
        QVERIFY(w.findChild<ViewToolBar *>()->settings().sinkApart);
        QVERIFY(w.close());
    }
    MainWindow again;
    auto *box = again.findChild<QCheckBox *>(QStringLiteral("viewSinkApart"));
    QVERIFY(box && box->isChecked());
    QVERIFY(again.findChild<ViewToolBar *>()->settings().sinkApart);
}

QTEST_MAIN(TestModernViews)
#include "tst_modernviews.moc"
