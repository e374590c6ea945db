// File > Export Figure with the model or rollout tab in front: the dialog offers the attention
// set's figures, opens on the one in front, and writes the same pixels `attnscope-cli render
// --view model|rollout` writes for the same file (an independent process reading the file
// itself), or, for a project, what the library's set renderer paints for its one layer.

#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"

#include "../common/TestUtil.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <QUndoStack>

using namespace attnscope;

namespace {

const QString kFixtures = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/fixtures/attention/");

bool openAndWait(MainWindow &w, const QString &path)
{
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    if (!w.openFile(path) || !opened.wait(20000))
        return false;
    w.attentionController()->waitForIdle();
    return QTest::qWaitFor(
        [&] {
            return w.views()->modelView()->isFilled() && w.views()->rolloutView()->isFilled() &&
                   w.shownAttention().heads() == w.setSource()->attention()->set.heads();
        },
        20000);
}

// The first pixel where two images differ, as text (empty when equal).
QString firstDifference(const QImage &a, const QImage &b)
{
    if (a.size() != b.size())
        return QStringLiteral("sizes %1x%2 and %3x%4").arg(a.width()).arg(a.height()).arg(b.width()).arg(b.height());
    const QImage x = a.convertToFormat(QImage::Format_ARGB32), y = b.convertToFormat(QImage::Format_ARGB32);
    for (int r = 0; r < x.height(); ++r)
        for (int c = 0; c < x.width(); ++c)
            if (x.pixel(c, r) != y.pixel(c, r))
                return QStringLiteral("pixel (%1, %2): %3 and %4")
                    .arg(c)
                    .arg(r)
                    .arg(x.pixel(c, r), 8, 16)
                    .arg(y.pixel(c, r), 8, 16);
    return {};
}

} // namespace

class TestExportSet : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void setExportEqualsCliRender_data();
    void setExportEqualsCliRender();
    void headsTabStillExportsTheHead();
    void projectModelExportIsItsOneLayer();

private:
    // The figures are kept in the build tree as test artifacts.
    QDir m_out{QStringLiteral(ATTNSCOPE_EXPORTSET_DIR)};
};

void TestExportSet::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_exportset"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QVERIFY(m_out.mkpath(QStringLiteral(".")));
}

void TestExportSet::init()
{
    QSettings().remove(QStringLiteral("exportFigure"));
}

void TestExportSet::setExportEqualsCliRender_data()
{
    QTest::addColumn<QString>("tab");
    QTest::addColumn<QString>("view");
    QTest::addColumn<bool>("merge");
    QTest::addColumn<QString>("colorScale");
    QTest::newRow("model") << QStringLiteral("model") << QStringLiteral("model") << false << QString();
    QTest::newRow("rollout") << QStringLiteral("rollout") << QStringLiteral("rollout") << false << QString();
    QTest::newRow("model-merged-words") << QStringLiteral("model") << QStringLiteral("model") << true << QString();
    QTest::newRow("rollout-log-scale") << QStringLiteral("rollout") << QStringLiteral("rollout") << false
                                       << QStringLiteral("log");
}

void TestExportSet::setExportEqualsCliRender()
{
    QFETCH(QString, tab);
    QFETCH(QString, view);
    QFETCH(bool, merge);
    QFETCH(QString, colorScale);
    const QString file = kFixtures + QStringLiteral("lhtt_f32.npy");
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, file));
    if (merge) {
        w.setSource()->mergeWordsAction()->setChecked(true);
        w.attentionController()->waitForIdle();
        QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->isFilled(), 20000);
    }
    w.views()->tabs()->setCurrentWidget(tab == QLatin1String("model")
                                            ? static_cast<QWidget *>(w.views()->modelView())
                                            : static_cast<QWidget *>(w.views()->rolloutView()));

    ExportFigureDialog *d = w.figures()->showFigureDialog();
    QVERIFY(d);
    QCOMPARE(FigureOptions::viewKey(d->options().view), view); // opens on the tab in front
    QCOMPARE(d->options().mergeWords, merge);
    if (!colorScale.isEmpty()) {
        auto *scale = d->findChild<QComboBox *>(QStringLiteral("colorScale"));
        QVERIFY(scale->isEnabled());
        scale->setCurrentIndex(scale->findData(colorScale));
    }
    const QString png = m_out.filePath(QStringLiteral("gui-%1.png").arg(QLatin1String(QTest::currentDataTag())));
    d->setPath(png);
    QSignalSpy accepted(d, &QDialog::accepted);
    d->findChild<QPushButton *>(QStringLiteral("exportButton"))->click();
    QCOMPARE(accepted.count(), 1);
    const QImage gui(png);
    QVERIFY(!gui.isNull());

    // The CLI reads the file itself and renders with its defaults, which are the window's.
    const QString cliPng = m_out.filePath(QStringLiteral("cli-%1.png").arg(QLatin1String(QTest::currentDataTag())));
    QStringList args{QStringLiteral("render"), file, QStringLiteral("--view"), view, QStringLiteral("--out"), cliPng};
    if (merge)
        args << QStringLiteral("--merge-words");
    // The colour scale was chosen in the dialog only: Copy Figure keeps the window's (linear).
    const QStringList dialogOnly =
        colorScale.isEmpty() ? QStringList() : QStringList{QStringLiteral("--color-scale"), colorScale};
    const auto render = [&](const QStringList &extra) {
        QProcess cli;
        cli.start(QStringLiteral(ATTNSCOPE_CLI), args + extra);
        if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
            qWarning("%s", cli.readAllStandardError().constData());
        return QImage(cliPng);
    };
    const QImage expected = render(dialogOnly);
    QVERIFY(!expected.isNull());
    const QString diff = firstDifference(gui, expected);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));

    // Copy Figure follows the same choice: the set's figure at 144 DPI, not the current head.
    QApplication::clipboard()->clear();
    QVERIFY(w.figures()->copyFigure());
    QTRY_VERIFY(!QApplication::clipboard()->image().isNull());
    const QImage copied = QApplication::clipboard()->image();
    const QImage expectedCopy = render({QStringLiteral("--dpi"), QStringLiteral("144")});
    QVERIFY(!expectedCopy.isNull());
    const QString copyDiff = firstDifference(copied, expectedCopy);
    QVERIFY2(copyDiff.isEmpty(), qPrintable(copyDiff));
    w.document()->undoStack()->setClean();
}

void TestExportSet::headsTabStillExportsTheHead()
{
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    w.views()->tabs()->setCurrentIndex(0);
    ExportFigureDialog *d = w.figures()->showFigureDialog();
    QVERIFY(d);
    QCOMPARE(d->options().view, FigureView::Head);
    auto *view = d->findChild<QComboBox *>(QStringLiteral("view"));
    QVERIFY(view->findData(int(FigureView::Model)) >= 0);
    QVERIFY(view->findData(int(FigureView::Rollout)) >= 0);
    d->reject();
}

void TestExportSet::projectModelExportIsItsOneLayer()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QVERIFY(w.computeController()->waitForIdle(20000));
    QTRY_VERIFY(w.currentResult() && w.currentResult()->trace.heads() > 1);
    const ComputedTracePtr result = w.currentResult();
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->isFilled(), 20000);

    ExportFigureDialog *d = w.figures()->showFigureDialog();
    QVERIFY(d);
    QCOMPARE(d->options().view, FigureView::Model);
    const QString png = m_out.filePath(QStringLiteral("project-model.png"));
    d->setPath(png);
    QVERIFY2(d->exportFigure(), qPrintable(d->lastError()));
    d->reject();
    const QImage gui(png);
    QVERIFY(!gui.isNull());

    // The library's figure of the project as `attnscope-cli render` makes it: its one layer,
    // its causal mask hatched as in its own figures.
    QCOMPARE(ShownAttention::ofTensors(result).set.layers(), 1);
    FigureOptions o;
    o.view = FigureView::Model;
    FigureSize size; // 150 DPI, natural size: the dialog's defaults
    const QImage expected = FigureExporter(result->project, result->trace).image(o, size);
    const QString diff = firstDifference(gui, expected);
    QVERIFY2(diff.isEmpty(), qPrintable(diff));
    // Not the set without the mask: the masked cells are hatched, not coloured as weights 0.
    AttentionSet set = AttentionSet::fromTrace(result->trace, result);
    QVERIFY(set.setTokens(result->project.queryTokens, result->project.keyLabels()));
    const QImage unmasked = FigureExporter(set, QString::fromStdString(result->project.title)).image(o, size);
    QVERIFY(!firstDifference(gui, unmasked).isEmpty());
    // Not the enlarged head the dialog exported before this change.
    FigureOptions head;
    const QImage headImage = FigureExporter(result->project, result->trace).image(head, size);
    QVERIFY(!firstDifference(gui, headImage).isEmpty());
    w.document()->undoStack()->setClean();
}

QTEST_MAIN(TestExportSet)
#include "tst_exportset.moc"
