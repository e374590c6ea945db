// Window and interaction polish found by using AttnScope as a new user would (issue 12), through
// the real main window on a 1600×1000 offscreen screen: the wheel over a field it merely passes,
// Ctrl+Z right after a spin box edit, Save As's Ctrl+Shift+S wherever the focus is, the first
// window's size and the remembered one, status notices that neither overflow nor overlap, and
// NaN told apart from an overflow to ±Inf.

#include "app/gui/views/EditorPanels.h"
#include "app/gui/views/HeatmapView.h"
#include "app/gui/views/MainWindow.h"
#include "core/attention/CpuBackend.h"

#include "../common/TestUtil.h"

#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QLabel>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>
#include <QWheelEvent>
#include <QtTest/qtestspontaneevent.h>

#include <cmath>

using namespace attnscope;

namespace {

const QString kTutorial = QStringLiteral(":/examples/self-attention-tutorial.attnscope.json");
const QSize kScreen(1600, 1000);

bool settle(MainWindow &w)
{
    if (!w.computeController()->waitForIdle(30000))
        return false;
    QCoreApplication::processEvents();
    return w.currentResult() && w.currentResult()->generation == w.computeController()->latestGeneration() &&
           serializeProject(w.currentResult()->project) == serializeProject(w.document()->project());
}

std::unique_ptr<MainWindow> openWindow()
{
    auto w = std::make_unique<MainWindow>();
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get()))
        return nullptr;
    // Shortcuts need the active window (offscreen activates it; Xvfb without a window manager
    // may not, and then only the shortcut tests fail).
    w->activateWindow();
    QApplication::setActiveWindow(w.get());
    [[maybe_unused]] const bool active = QTest::qWaitForWindowActive(w.get(), 1000);
    if (!w->openExample(kTutorial) || !settle(*w))
        return nullptr;
    return w;
}

// The editor panel's fields by name: spin boxes and combo boxes.
QWidget *field(MainWindow &w, const QString &name)
{
    ModelPanel *p = w.modelPanel();
    if (name == QLatin1String("heads"))
        return p->headsBox();
    if (name == QLatin1String("headDimQK"))
        return p->headDimQKBox();
    if (name == QLatin1String("inputDim"))
        return p->inputDimBox();
    if (name == QLatin1String("seed"))
        return p->seedBox();
    if (name == QLatin1String("mode"))
        return p->modeBox();
    if (name == QLatin1String("maskFill"))
        return p->maskFillBox();
    if (name == QLatin1String("scaleMode"))
        return p->scaleBox();
    return nullptr;
}

QVariant valueOf(QWidget *field)
{
    if (auto *spin = qobject_cast<QSpinBox *>(field))
        return spin->value();
    if (auto *combo = qobject_cast<QComboBox *>(field))
        return combo->currentIndex();
    return {};
}

void wheel(QWidget *target, int angle)
{
    const QPointF at = QPointF(target->rect().center());
    QWheelEvent e(at, target->mapToGlobal(at), QPoint(), QPoint(0, angle), Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &e);
}

// Finite inputs whose Q·Kᵀ overflows float32: the scores of row 0 are +Inf, so its softmax is NaN.
Project overflowProject()
{
    auto p = parseProject(R"({"format": "attnscope", "version": 1, "title": "Overflow", "mode": "self",
  "heads": 1, "headDimQK": 2, "headDimV": 2, "scale": "none",
  "query": {"tokens": ["a", "b", "c"], "x": [[3e38, 3e38], [0.5, -0.25], [1, 2]]},
  "weights": {"q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]]}})");
    if (!p)
        qFatal("%s", p.message().c_str());
    return *p;
}

// Answers the next modal dialog: records whether it is a Save dialog and closes it.
struct DialogWatcher {
    bool sawSaveDialog = false;
    QString other;
    QTimer timer;
    DialogWatcher()
    {
        timer.setInterval(20);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            QWidget *modal = QApplication::activeModalWidget();
            if (!modal)
                return;
            if (auto *d = qobject_cast<QFileDialog *>(modal))
                sawSaveDialog = d->acceptMode() == QFileDialog::AcceptSave;
            else
                other = modal->metaObject()->className();
            modal->close();
        });
        timer.start();
    }
};

} // namespace

class TestPolish : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void wheelOverUnfocusedFieldChangesNothing_data();
    void wheelOverUnfocusedFieldChangesNothing();
    void wheelOverFocusedSpinBoxStillSteps();
    void wheelOverUnfocusedFieldScrollsThePanel();
    void undoShortcutRightAfterSpinBoxEdit_data();
    void undoShortcutRightAfterSpinBoxEdit();
    void saveAsShortcutWhereverTheFocusIs_data();
    void saveAsShortcutWhereverTheFocusIs();
    void firstWindowShowsEveryDockOn1600x1000();
    void secondWindowRestoresGeometryAndDocks();
    void longStatusNoticesElideWithFullTextInToolTip();
    void nanAndInfinityShownDistinctly();
};

void TestPolish::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_polish"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    // main() gives the offscreen platform a 1600×1000 screen; under Xvfb the server's is used.
    QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), kScreen);
    qInfo("QKeySequence::SaveAs here: %s",
          qPrintable(QKeySequence::listToString(QKeySequence::keyBindings(QKeySequence::SaveAs))));
}

void TestPolish::cleanup()
{
    QSettings().remove(QStringLiteral("window"));
}

void TestPolish::wheelOverUnfocusedFieldChangesNothing_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : {"heads", "headDimQK", "inputDim", "seed", "mode", "maskFill", "scaleMode"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestPolish::wheelOverUnfocusedFieldChangesNothing()
{
    QFETCH(QString, name);
    auto w = openWindow();
    QVERIFY(w);
    QWidget *f = field(*w, name);
    QVERIFY(f);
    w->matrixEditor(MatrixId::Wq)->table()->setFocus();
    QVERIFY(!f->hasFocus());
    const std::string before = serializeProject(w->document()->project());
    const int steps = w->document()->undoStack()->count();
    const QVariant value = valueOf(f);
    wheel(f, 120);
    wheel(f, -240);
    QCOMPARE(valueOf(f), value);
    QCOMPARE(w->document()->undoStack()->count(), steps);
    QCOMPARE(serializeProject(w->document()->project()), before);
    QVERIFY(!f->hasFocus());
}

void TestPolish::wheelOverFocusedSpinBoxStillSteps()
{
    auto w = openWindow();
    QVERIFY(w);
    QSpinBox *heads = w->modelPanel()->headsBox();
    heads->setFocus();
    QVERIFY(heads->hasFocus());
    const int value = heads->value();
    wheel(heads, 120);
    QCOMPARE(heads->value(), value + 1);
    QCOMPARE(w->document()->problem().spec.heads, value + 1);
}

void TestPolish::wheelOverUnfocusedFieldScrollsThePanel()
{
    // A real (spontaneous) wheel event, as the platform delivers it: over an unfocused spin box
    // in the model panel it scrolls the panel instead.
    auto w = openWindow();
    QVERIFY(w);
    auto *modelDock = w->findChild<QDockWidget *>(QStringLiteral("ModelDock"));
    auto *scroll = w->findChild<QScrollArea *>(QStringLiteral("modelScroll"));
    QVERIFY(modelDock && scroll);
    w->resizeDocks({modelDock}, {160}, Qt::Vertical);
    QTRY_VERIFY(scroll->verticalScrollBar()->maximum() > 0);
    QSpinBox *heads = w->modelPanel()->headsBox();
    scroll->ensureWidgetVisible(heads);
    w->matrixEditor(MatrixId::Wq)->table()->setFocus();
    const int value = heads->value(), scrolled = scroll->verticalScrollBar()->value();
    const std::string before = serializeProject(w->document()->project());
    // As the platform delivers it: spontaneous, to the widget under the pointer (the spin box's
    // line edit), handed on to the parents that ignore it.
    const QPoint centre = heads->rect().center();
    QWidget *under = heads->childAt(centre) ? heads->childAt(centre) : heads;
    const QPointF local = under->mapFrom(heads, QPointF(centre));
    QWheelEvent e(local, under->mapToGlobal(local), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QSpontaneKeyEvent::setSpontaneous(&e);
    qApp->notify(under, &e);
    QCoreApplication::processEvents();
    QCOMPARE(heads->value(), value);
    QCOMPARE(serializeProject(w->document()->project()), before);
    QVERIFY(!heads->hasFocus());
    QVERIFY2(scroll->verticalScrollBar()->value() > scrolled, "the panel did not scroll");
}

void TestPolish::undoShortcutRightAfterSpinBoxEdit_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("typed"); // a value typed and Return, or a step (the Up key)
    QTest::addColumn<QKeySequence>("redo");
    const QKeySequence ctrlShiftZ(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), ctrlY(Qt::CTRL | Qt::Key_Y);
    QTest::newRow("heads typed, Ctrl+Shift+Z") << QStringLiteral("heads") << true << ctrlShiftZ;
    QTest::newRow("heads stepped, Ctrl+Y") << QStringLiteral("heads") << false << ctrlY;
    QTest::newRow("dK typed, Ctrl+Y") << QStringLiteral("headDimQK") << true << ctrlY;
    QTest::newRow("d_q stepped, Ctrl+Shift+Z") << QStringLiteral("inputDim") << false << ctrlShiftZ;
}

void TestPolish::undoShortcutRightAfterSpinBoxEdit()
{
    QFETCH(QString, name);
    QFETCH(bool, typed);
    QFETCH(QKeySequence, redo);
    auto w = openWindow();
    QVERIFY(w);
    auto *spin = qobject_cast<QSpinBox *>(field(*w, name));
    QVERIFY(spin);
    spin->setFocus();
    QVERIFY(spin->hasFocus());
    const std::string before = serializeProject(w->document()->project());
    const int value = spin->value();
    if (typed) {
        spin->selectAll();
        QTest::keyClicks(spin, QString::number(value + 1));
        QTest::keyClick(spin, Qt::Key_Return);
    } else {
        QTest::keyClick(spin, Qt::Key_Up);
    }
    QCOMPARE(spin->value(), value + 1);
    const std::string edited = serializeProject(w->document()->project());
    QVERIFY(edited != before);
    QVERIFY(spin->hasFocus());

    QTest::keyClick(spin, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(serializeProject(w->document()->project()), before);
    QCOMPARE(spin->value(), value);
    QTest::keySequence(spin, redo);
    QCOMPARE(serializeProject(w->document()->project()), edited);
    QCOMPARE(spin->value(), value + 1);
    QVERIFY(spin->hasFocus());
}

void TestPolish::saveAsShortcutWhereverTheFocusIs_data()
{
    QTest::addColumn<QString>("focus");
    QTest::newRow("heatmap") << QStringLiteral("heatmap");
    QTest::newRow("table cell being edited") << QStringLiteral("cell");
    QTest::newRow("spin box") << QStringLiteral("spin");
    QTest::newRow("spin box after an edit") << QStringLiteral("spinEdited");
}

void TestPolish::saveAsShortcutWhereverTheFocusIs()
{
    QFETCH(QString, focus);
    auto w = openWindow();
    QVERIFY(w);
    if (focus == QLatin1String("heatmap")) {
        w->headView()->setFocus();
    } else if (focus == QLatin1String("cell")) {
        QTableView *table = w->matrixEditor(MatrixId::Wq)->table();
        const QModelIndex cell = table->model()->index(0, 0);
        table->setCurrentIndex(cell);
        table->edit(cell);
        QTRY_VERIFY(QApplication::focusWidget() && QApplication::focusWidget()->parentWidget() == table->viewport());
    } else {
        QSpinBox *heads = w->modelPanel()->headsBox();
        heads->setFocus();
        if (focus == QLatin1String("spinEdited"))
            QTest::keyClick(heads, Qt::Key_Up);
    }
    QWidget *target = QApplication::focusWidget();
    QVERIFY(target);
    // The cell's editor closes when the dialog takes the focus: its name is kept, not the widget.
    const QString focused = QString::fromLatin1(target->metaObject()->className());
    DialogWatcher watcher;
    QTest::keyClick(target, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_VERIFY2(watcher.sawSaveDialog,
                 qPrintable(QStringLiteral("focus in %1; other dialog: %2").arg(focused, watcher.other)));
}

void TestPolish::firstWindowShowsEveryDockOn1600x1000()
{
    QSettings().remove(QStringLiteral("window")); // the first run: no saved size or layout
    auto w = openWindow();
    QVERIFY(w);
    QCoreApplication::processEvents();
    const QRect available = w->screen()->availableGeometry();
    QVERIFY2(available.contains(w->frameGeometry()), qPrintable(QStringLiteral("window %1×%2 at %3,%4 on %5×%6")
                                                                    .arg(w->frameGeometry().width())
                                                                    .arg(w->frameGeometry().height())
                                                                    .arg(w->frameGeometry().x())
                                                                    .arg(w->frameGeometry().y())
                                                                    .arg(available.width())
                                                                    .arg(available.height())));
    // Most of the screen, not a corner of it.
    QVERIFY2(w->width() >= available.width() * 3 / 4 && w->height() >= available.height() * 3 / 4,
             qPrintable(QStringLiteral("%1×%2").arg(w->width()).arg(w->height())));
    int docks = 0;
    for (QDockWidget *d : w->findChildren<QDockWidget *>()) {
        if (!d->isVisible() || d->visibleRegion().isEmpty())
            continue; // a tab behind another dock
        ++docks;
        QWidget *c = d->widget();
        const QSize min = c->minimumSizeHint();
        QVERIFY2(c->width() >= min.width() && c->height() >= min.height(),
                 qPrintable(QStringLiteral("%1: %2×%3, needs %4×%5")
                                .arg(d->objectName())
                                .arg(c->width())
                                .arg(c->height())
                                .arg(min.width())
                                .arg(min.height())));
    }
    QVERIFY(docks >= 4);
    // The model panel shows every field: its scroll area has nothing to scroll.
    auto *scroll = w->findChild<QScrollArea *>(QStringLiteral("modelScroll"));
    QVERIFY(scroll);
    QCOMPARE(scroll->verticalScrollBar()->maximum(), 0);
    QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR)));
    QVERIFY(w->grab().save(QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR "/first-run-1600x1000.png")));
    // Under Xvfb (QT_QPA_PLATFORM=xcb): the screen itself, as a user would see it.
    if (QGuiApplication::platformName() == QLatin1String("xcb"))
        QVERIFY(w->screen()->grabWindow(0).save(
            QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR "/first-run-1600x1000-screen.png")));
}

void TestPolish::secondWindowRestoresGeometryAndDocks()
{
    QSettings().remove(QStringLiteral("window"));
    QSize size;
    int modelWidth = 0;
    {
        auto first = openWindow();
        QVERIFY(first);
        first->resize(1300, 850);
        auto *model = first->findChild<QDockWidget *>(QStringLiteral("ModelDock"));
        first->findChild<QDockWidget *>(QStringLiteral("MaskDock"))->hide();
        first->resizeDocks({model}, {430}, Qt::Horizontal);
        QTRY_COMPARE(first->size(), QSize(1300, 850));
        QCoreApplication::processEvents();
        size = first->size();
        modelWidth = model->width();
        first->document()->undoStack()->setClean();
        QVERIFY(first->close());
    }
    auto second = openWindow();
    QVERIFY(second);
    QCOMPARE(second->size(), size);
    QVERIFY(!second->findChild<QDockWidget *>(QStringLiteral("MaskDock"))->isVisible());
    QCOMPARE(second->findChild<QDockWidget *>(QStringLiteral("ModelDock"))->width(), modelWidth);
}

void TestPolish::longStatusNoticesElideWithFullTextInToolTip()
{
    auto w = openWindow();
    QVERIFY(w);
    w->resize(1000, 700);
    QTRY_COMPARE(w->width(), 1000);
    QStatusBar *bar = w->statusBar();
    // Every visible widget of the status bar lies inside it, none over another, and some
    // widget holds `text` whole, as its text or its tooltip.
    auto check = [bar](const QString &text) -> QString {
        QCoreApplication::processEvents();
        if (bar->width() > 1000)
            return QStringLiteral("the status bar is %1 px wide").arg(bar->width());
        QList<QWidget *> shown;
        for (QWidget *c : bar->findChildren<QWidget *>(QString(), Qt::FindDirectChildrenOnly))
            if (c->isVisible())
                shown << c;
        bool found = false;
        for (QWidget *c : shown) {
            if (!bar->rect().contains(c->geometry()))
                return QStringLiteral("%1 %2 lies outside the status bar")
                    .arg(c->metaObject()->className(), c->toolTip().left(40));
            for (QWidget *o : shown)
                if (o != c && o->geometry().intersects(c->geometry()))
                    return QStringLiteral("two status widgets overlap");
            found |= c->toolTip().contains(text);
            if (auto *l = qobject_cast<QLabel *>(c))
                found |= l->text().contains(text) && l->width() >= l->sizeHint().width();
        }
        return found ? QString() : QStringLiteral("\"%1\" cannot be read").arg(text.left(40));
    };
    QTemporaryDir dir;
    const QString name = QStringLiteral("a-project-with-a-very-long-name-that-a-student-gave-it-to-remember-what-"
                                        "it-was-about-multi-head-attention-on-three-inputs.attnscope.json");
    QVERIFY(QFile::copy(kTutorial, dir.filePath(name)));
    QFile(dir.filePath(name)).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    QVERIFY(w->openFile(dir.filePath(name)));
    QVERIFY(settle(*w));
    QString problem = check(name);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    const QString notice = QStringLiteral(
        "Vulkan is not available (no device with compute queues and storage buffers large enough for this "
        "project was found: llvmpipe (LLVM 15.0.6, 256 bits) refused the allocation of 4096 MiB): "
        "computing on the CPU with Eigen instead, which is slower for large projects");
    emit w->computeController()->backendChanged(QStringLiteral("CPU (Eigen)"), QStringLiteral("x86-64 AVX2"), notice);
    problem = check(notice);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    problem = check(name);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    const QString error = QStringLiteral(
        "compute: the GPU stopped answering while computing the scores of head 3 (VK_ERROR_DEVICE_LOST after "
        "1.2 s in the softmax shader); the partial result was discarded and nothing was changed");
    emit w->computeController()->failed(error, 0, ErrorKind::DeviceLost);
    problem = check(error);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    problem = check(MainWindow::failureAdvice(ErrorKind::DeviceLost));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR)));
    QVERIFY(w->grab().save(QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR "/status-notices-1000.png")));
}

void TestPolish::nanAndInfinityShownDistinctly()
{
    auto c = std::make_shared<ComputedTrace>();
    c->project = overflowProject();
    auto trace = CpuBackend().compute(c->project.problem);
    QVERIFY2(trace, trace ? "" : trace.message().c_str());
    c->trace = std::move(*trace);
    // Counted here over every tensor, as the banner counts them.
    std::int64_t nan = 0, inf = 0;
    auto count = [&](const MatrixF &m) {
        nan += m.array().isNaN().count();
        inf += m.array().isInf().count();
    };
    for (const auto *all :
         {&c->trace.q, &c->trace.k, &c->trace.v, &c->trace.scores, &c->trace.weights, &c->trace.headOutputs})
        for (const MatrixF &m : *all)
            count(m);
    count(c->trace.context);
    count(c->trace.output);
    QVERIFY(nan > 0 && inf > 0);
    QVERIFY(std::isinf(c->trace.scores[0](0, 0)) && c->trace.scores[0](0, 0) > 0);
    QVERIFY(std::isnan(c->trace.weights[0](0, 0)));

    for (const bool scores : {false, true}) {
        HeatmapView view;
        HeatmapViewSettings s;
        s.quantity = scores ? HeatmapQuantity::Scores : HeatmapQuantity::Weights;
        s.showValues = false;
        view.setSettings(s);
        view.setResult(c);
        view.resize(700, 520);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto *warning = view.findChild<QLabel *>(QStringLiteral("nonFiniteWarning"));
        QVERIFY(warning);
        QTRY_VERIFY(warning->isVisible());
        // The banner says how many of each there are, and which colour each has.
        const QString text = warning->text();
        QVERIFY2(text.contains(QStringLiteral("%1 NaN").arg(nan)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("%1 infinite").arg(inf)), qPrintable(text));
        const QImage shot = view.grab().toImage();
        QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR)));
        QVERIFY(shot.save(QStringLiteral(ATTNSCOPE_POLISH_SCREENSHOT_DIR "/overflow-%1.png")
                              .arg(scores ? QStringLiteral("scores") : QStringLiteral("weights"))));
        const QPoint px = (view.cellRect(0, 0).topLeft() + QPointF(3, 3)).toPoint();
        const QColor expected = scores ? HeatmapRenderer::infinityColor() : HeatmapRenderer::nanColor();
        QCOMPARE(QColor(shot.pixel(px)).name(), expected.name());
        const QString hover = view.cellDescription(0, 0);
        QVERIFY2(hover.contains(QStringLiteral("+Inf")), qPrintable(hover));
        QVERIFY2(hover.contains(QStringLiteral("NaN")), qPrintable(hover));
        QVERIFY2(!hover.contains(QStringLiteral("inf")) && !hover.contains(QStringLiteral("nan")), qPrintable(hover));
    }
    QVERIFY(HeatmapRenderer::infinityColor() != HeatmapRenderer::nanColor());
}

// The offscreen platform's screen is 800×600 unless told otherwise: give it the 1600×1000 screen
// that the first-run size is promised for (Xvfb is started with one for the screenshots).
int main(int argc, char *argv[])
{
    QTemporaryDir screenDir;
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (platform.isEmpty() || platform == "offscreen") {
        QFile config(screenDir.filePath(QStringLiteral("screen.json")));
        if (!config.open(QIODevice::WriteOnly) ||
            config.write(R"({"screens": [{"name": "test", "x": 0, "y": 0, "width": 1600, "height": 1000,
                                          "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})") < 0)
            return 2;
        config.close();
        qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.fileName().toLocal8Bit());
    }
    QApplication app(argc, argv);
    TestPolish test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_polish.moc"
