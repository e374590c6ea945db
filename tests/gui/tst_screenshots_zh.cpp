// The application in Chinese, in a real window under Xvfb: CTest runs this with
// LANG=zh_CN.UTF-8 and no language override, and the translators are installed as main() does.
// The main window, an open menu, the step view and an error dialog are captured from the screen
// into the build tree (screenshots/zh_CN-*.png), and a figure with Chinese tokens and Chinese
// titles is written as PNG, SVG and PDF beside them.

#include "app/engine/BackendChoice.h"
#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportDataDialog.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/HeatmapView.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/PresentationMode.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/TeachingView.h"
#include "app/gui/views/ViewToolBar.h"
#include "app/render/FigureExporter.h"
#include "core/formats/ProjectFile.h"

#include "../common/WindowTestUtil.h"

#include <QComboBox>
#include <QDir>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <fstream>

using namespace attnscope;

namespace {

const QString kDir = QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR);

QString shotPath(const QString &name)
{
    return kDir + QStringLiteral("/zh_CN-") + name;
}

// The screen around the window: menus and dialogs are windows of their own.
QPixmap grabAround(QWidget *w, int extraHeight = 0)
{
    const QRect r = w->frameGeometry().adjusted(0, 0, 0, extraHeight);
    return w->screen()->grabWindow(0, r.x(), r.y(), r.width(), r.height());
}

} // namespace

class TestScreenshotsZh : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void mainWindowMenuAndStepView();
    void errorDialog();
    void figureWithChineseTokens();
    void lessonViewsInChinese();
    void modernExamplesInChinese();

private:
    QTemporaryDir m_dir;
};

void TestScreenshotsZh::initTestCase()
{
    if (QGuiApplication::platformName() == QLatin1String("offscreen") ||
        QGuiApplication::platformName() == QLatin1String("minimal"))
        QSKIP("needs a real display (run under xvfb-run)");
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_screenshots_zh"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QVERIFY(QDir().mkpath(kDir));
    // main()'s call: LANG=zh_CN.UTF-8 (set by CTest) and no override give Chinese.
    QCOMPARE(QLocale::system().language(), QLocale::Chinese);
    QVERIFY(installTranslators(interfaceLocale(languageSetting())));
}

void TestScreenshotsZh::mainWindowMenuAndStepView()
{
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json")));
    QVERIFY(w.computeController()->waitForIdle(20000));
    QCOMPARE(w.menuBar()->actions().value(0)->text(), QStringLiteral("\u6587\u4ef6(&F)")); // 文件(&F)
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("main.png"))));

    // The View menu, with its Language submenu open.
    QMenu *view = nullptr;
    for (QAction *a : w.menuBar()->actions())
        if (a->text() == QStringLiteral("\u89c6\u56fe(&V)")) // 视图(&V)
            view = a->menu();
    QVERIFY(view);
    w.menuBar()->setActiveAction(view->menuAction());
    QTRY_VERIFY(view->isVisible());
    QMenu *language = nullptr;
    for (QAction *a : view->actions())
        if (a->menu() && a->text() == QStringLiteral("\u8bed\u8a00(&L)")) // 语言(&L)
            language = a->menu();
    QStringList titles;
    for (QAction *a : view->actions())
        titles << a->text();
    QVERIFY2(language, qPrintable(titles.join(QLatin1String(" | "))));
    view->setActiveAction(language->menuAction());
    language->popup(view->mapToGlobal(view->actionGeometry(language->menuAction()).topRight()));
    QTRY_VERIFY(language->isVisible());
    QVERIFY(test::waitForRepaint(view));
    QVERIFY(test::waitForRepaint(language));
    QVERIFY(grabAround(&w).save(shotPath(QStringLiteral("menu-view.png"))));
    language->hide();
    view->hide();

    // The step view with a cell explained.
    w.views()->tabs()->setCurrentWidget(w.views()->teaching());
    w.views()->teaching()->setSelection(0, 1);
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.views()->teaching()->html().contains(QStringLiteral("\u9010\u6b65\u8ba1\u7b97"))); // 逐步计算
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("step-view.png"))));
    // Its end: why the selected cell has its weight.
    w.views()->teaching()->verticalScrollBar()->setValue(w.views()->teaching()->verticalScrollBar()->maximum());
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("step-view-explanation.png"))));

    // The export dialog: the longest labels side by side with their controls.
    QDialog *exportDialog = w.figures()->showFigureDialog();
    QVERIFY(exportDialog);
    QVERIFY(QTest::qWaitForWindowExposed(exportDialog));
    QVERIFY(test::waitForRepaint(exportDialog));
    QVERIFY(grabAround(&w).save(shotPath(QStringLiteral("export-figure.png"))));
    exportDialog->close();
    w.document()->undoStack()->setClean();
}

void TestScreenshotsZh::errorDialog()
{
    MainWindow w;
    w.resize(1100, 700);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QString bad = m_dir.filePath(QStringLiteral("bad.attnscope.json"));
    std::ofstream(bad.toStdString()) << R"({"format": "attnscope", "version": 1, "mode": "self", "heads": 1,
        "headDimQK": 2, "headDimV": 2, "query": {"tokens": ["a", "b"], "x": [[1, 0], [0, 1]]},
        "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0, 0], [0, 1, 0]], "v": [[1, 0], [0, 1]]}})";
    QVERIFY(!w.openFile(bad));
    QMessageBox *box = nullptr;
    QTRY_VERIFY((box = w.findChild<QMessageBox *>(QStringLiteral("errorBox"))) && box->isVisible());
    QVERIFY2(box->text().contains(QStringLiteral("\u5f62\u72b6\u5e94\u4e3a")), qPrintable(box->text())); // 形状应为
    QVERIFY(test::waitForRepaint(box));
    QVERIFY(grabAround(&w).save(shotPath(QStringLiteral("error-dialog.png"))));
    box->close();
    w.document()->undoStack()->setClean();
}

void TestScreenshotsZh::figureWithChineseTokens()
{
    auto project = parseProject(R"({"format": "attnscope", "version": 1, "title": "自注意力：我爱机器学习",
        "mode": "self", "heads": 2, "headDimQK": 2, "headDimV": 2,
        "query": {"tokens": ["我", "爱", "机器", "学习"], "x": [[1, 0], [0.5, 1], [-1, 0.3], [0.2, -0.8]]},
        "weights": {"q": [[1, 0, 0.3, 1], [0, 1, 1, -0.4]], "k": [[1, 0.5, 0.2, 1], [-0.5, 1, 0.7, 0]],
                    "v": [[1, 0, 0, 1], [0, 1, 1, 0]]}})");
    QVERIFY2(project, project.ok() ? "" : project.message().c_str());
    auto backend = createBackend(BackendRequest::Cpu, {});
    QVERIFY(backend);
    auto trace = backend->backend->compute(project->problem);
    QVERIFY(trace);
    FigureExporter exporter(*project, *trace);
    FigureOptions options;
    options.view = FigureView::Head;
    FigureSize size;
    for (const char *suffix : {"png", "svg", "pdf"}) {
        const QString path = shotPath(QStringLiteral("figure.") + QLatin1String(suffix));
        QString error;
        QVERIFY2(exporter.write(path, options, size, &error), qPrintable(error));
    }
    // The SVG keeps the words as text: the translated axis title and the tokens.
    QFile svg(shotPath(QStringLiteral("figure.svg")));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(svg.readAll());
    QVERIFY(text.contains(QStringLiteral(">\u67e5<")) && text.contains(QStringLiteral(">\u8be2<"))); // 查询, upright
    QVERIFY(text.contains(QStringLiteral("\u673a\u5668")));                                          // 机器
}

void TestScreenshotsZh::lessonViewsInChinese()
{
    // The views a lesson uses, in the Chinese interface: a file of scores under its banner, the
    // example model's Chinese pieces merged into characters, the model view on the log scale,
    // presentation mode, Export Data on a file, a zoomed head, a slide figure.
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QVERIFY(w.openFile(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/fixtures/attention/rows/scores_lhtt_f32.npy")));
    QVERIFY(opened.wait(20000));
    QVERIFY(w.banner()->isStale());
    QVERIFY2(w.banner()->reason().contains(QStringLiteral("softmax")), qPrintable(w.banner()->reason()));
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("scores-banner.png"))));
    ExportDataDialog *data = w.figures()->showDataDialog();
    QVERIFY(data);
    QVERIFY(QTest::qWaitForWindowExposed(data));
    QVERIFY(test::waitForRepaint(data));
    QVERIFY(grabAround(data).save(shotPath(QStringLiteral("export-data-file.png"))));
    data->close();

    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    QVERIFY(w.openModel(QStringLiteral(ATTNSCOPE_SOURCE_DIR "/resources/models/tiny-gpt2")));
    QVERIFY(shown.wait(30000));
    shown.clear();
    w.modelSource()->textEdit()->setText(QStringLiteral("我爱自然语言处理。注意力机制很有趣"));
    QVERIFY(shown.wait(30000));
    w.setSource()->mergeWordsAction()->setChecked(true);
    QTRY_VERIFY_WITH_TIMEOUT(w.shownAttention().merges() && w.views()->headView()->data().values &&
                                 w.views()->headView()->data().rows() == 17,
                             30000);
    w.views()->tabs()->setCurrentIndex(0);
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("model-chinese-merged.png"))));
    auto *colorScale = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(colorScale);
    colorScale->setCurrentIndex(colorScale->findData(int(ColorScaleKind::Log)));
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->isFilled(), 30000);
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("model-view-log.png"))));

    w.views()->tabs()->setCurrentIndex(0);
    w.presentation()->setOn(true);
    QTRY_VERIFY(w.windowState() & Qt::WindowFullScreen);
    QVERIFY(test::waitForRepaint(&w));
    QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("presentation-mode.png"))));
    w.presentation()->setOn(false);

    // The head, zoomed: its block's labels.
    HeatmapView *head = w.views()->headView();
    head->zoomBy(2.0, QPointF(4, 4));
    QVERIFY(head->isZoomed());
    QVERIFY(test::waitForRepaint(head));
    QVERIFY(head->grab().save(shotPath(QStringLiteral("head-zoomed.png"))));

    // A slide figure at 16 pt, its words in Chinese.
    FigureOptions options = w.figures()->currentOptions();
    options.fontSize = 16;
    FigureExporter exporter(w.shownAttention());
    QString error;
    QVERIFY2(exporter.write(shotPath(QStringLiteral("slide-figure.png")), options, FigureSize{}, &error),
             qPrintable(error));
}

// The "Today's attention" examples in the Chinese interface: each one's heads and notes, the RoPE
// example's step view at the rotation of q and k, the window's band in the mask view.
void TestScreenshotsZh::modernExamplesInChinese()
{
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QDir folder(QStringLiteral(":/examples/modern-attention"));
    const QStringList names = folder.entryList({QStringLiteral("*.attnscope.json")}, QDir::Files, QDir::Name);
    QCOMPARE(names.size(), 7);
    for (const QString &name : names) {
        QVERIFY(w.openExample(folder.filePath(name)));
        QVERIFY(w.computeController()->waitForIdle(20000));
        QVERIFY(w.views()->notes()->isVisible());
        QVERIFY2(w.views()->notes()->text().contains(QRegularExpression(QStringLiteral("\\p{Han}"))),
                 qPrintable(w.views()->notes()->text()));
        w.views()->tabs()->setCurrentIndex(0);
        QVERIFY(test::waitForRepaint(&w));
        const QString base = name.section(QLatin1Char('.'), 0, 0);
        QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("modern-%1.png").arg(base))));
        if (base == QLatin1String("4-rope")) {
            TeachingView *steps = w.views()->teaching();
            w.views()->tabs()->setCurrentWidget(steps);
            steps->setSelection(5, 4); // "cat" at 5 and "the" at 4: the angles of both positions
            QVERIFY(steps->html().contains(QStringLiteral("RoPE 之后的 Q_h")));
            steps->scrollToAnchor(TeachingRenderer::kAnchorRope);
            QVERIFY(test::waitForRepaint(&w));
            QVERIFY(w.screen()->grabWindow(w.winId()).save(shotPath(QStringLiteral("modern-4-rope-steps.png"))));
        }
    }
}

QTEST_MAIN(TestScreenshotsZh)
#include "tst_screenshots_zh.moc"
