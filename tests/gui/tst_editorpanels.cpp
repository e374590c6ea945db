// The editor's dock panels (model panel, matrix tables, scale editor, mask window) through the
// real main window on a 1600×1000 offscreen screen: the wheel over a field it merely passes
// changes nothing and scrolls the panel, Ctrl+Z right after a spin box edit, the scale editor's
// undo steps, numbers a table cell refuses, sizes refused with a message, and the "Modern
// attention" fields (key/value heads, RoPE, soft-cap, sinks, the sliding window).

#include "app/gui/sources/ProjectSource.h"
#include "app/gui/views/EditorPanels.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/MaskEditor.h"
#include "app/gui/views/MatrixModel.h"
#include "app/gui/views/ModernAttentionPanel.h"
#include "core/attention/Validation.h"

#include "../common/TestUtil.h"
#include "../common/WindowTestUtil.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QGuiApplication>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>
#include <QWheelEvent>
#include <QtTest/qtestspontaneevent.h>

using namespace attnscope;

namespace {

// The editor panel's fields by name: spin boxes and combo boxes.
QWidget *field(MainWindow &w, const QString &name)
{
    ModelPanel *p = w.project()->modelPanel();
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

void typeInto(QAbstractSpinBox *spin, const QString &text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

} // namespace

class TestEditorPanels : public QObject
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
    void scaleEditorUndoStepsPerField();
    void cellRefusesNumbersBeyondFloat_data();
    void cellRefusesNumbersBeyondFloat();
    void sizeBeyondMemoryRefusedWithMessage();
    void pasteCopyAndTabInATable();
    void valueInputIsSeenAndEdited();
    void kvHeadsBoxOffersDivisorsAndRegroups();
    void ropeFieldsEditTheDocument();
    void softcapFieldsEditTheDocument();
    void sinksEditorAddsEditsAndRemoves();
    void maskWindowBoxEditsTheWindow();
};

void TestEditorPanels::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_editorpanels"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    // main() gives the offscreen platform a 1600×1000 screen; under Xvfb the server's is used.
    QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), QSize(1600, 1000));
}

void TestEditorPanels::cleanup()
{
    QSettings().remove(QStringLiteral("window"));
}

void TestEditorPanels::wheelOverUnfocusedFieldChangesNothing_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : {"heads", "headDimQK", "inputDim", "seed", "mode", "maskFill", "scaleMode"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestEditorPanels::wheelOverUnfocusedFieldChangesNothing()
{
    QFETCH(QString, name);
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    QWidget *f = field(*w, name);
    QVERIFY(f);
    w->project()->matrixEditor(MatrixId::Wq)->table()->setFocus();
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

void TestEditorPanels::wheelOverFocusedSpinBoxStillSteps()
{
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    QSpinBox *heads = w->project()->modelPanel()->headsBox();
    heads->setFocus();
    QVERIFY(heads->hasFocus());
    const int value = heads->value();
    wheel(heads, 120);
    QCOMPARE(heads->value(), value + 1);
    QCOMPARE(w->document()->problem().spec.heads, value + 1);
}

void TestEditorPanels::wheelOverUnfocusedFieldScrollsThePanel()
{
    // A real (spontaneous) wheel event, as the platform delivers it: over an unfocused spin box
    // in the model panel it scrolls the panel instead.
    auto w = test::openTutorialWindow();
    QVERIFY(w);
    auto *modelDock = w->findChild<QDockWidget *>(QStringLiteral("ModelDock"));
    auto *scroll = w->findChild<QScrollArea *>(QStringLiteral("modelScroll"));
    QVERIFY(modelDock && scroll);
    w->resizeDocks({modelDock}, {160}, Qt::Vertical);
    QTRY_VERIFY(scroll->verticalScrollBar()->maximum() > 0);
    QSpinBox *heads = w->project()->modelPanel()->headsBox();
    scroll->ensureWidgetVisible(heads);
    w->project()->matrixEditor(MatrixId::Wq)->table()->setFocus();
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

void TestEditorPanels::undoShortcutRightAfterSpinBoxEdit_data()
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

void TestEditorPanels::undoShortcutRightAfterSpinBoxEdit()
{
    QFETCH(QString, name);
    QFETCH(bool, typed);
    QFETCH(QKeySequence, redo);
    auto w = test::openTutorialWindow();
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

void TestEditorPanels::scaleEditorUndoStepsPerField()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    ModelPanel *panel = w.project()->modelPanel();
    QUndoStack *stack = w.document()->undoStack();
    QComboBox *mode = panel->scaleBox();
    auto choose = [mode](ScaleMode m) {
        mode->setCurrentIndex(mode->findData(int(m)));
        emit mode->activated(mode->currentIndex());
    };
    choose(ScaleMode::Custom);
    QCOMPARE(stack->count(), 1);
    typeInto(panel->scaleValueBox(), QStringLiteral("0.5"));
    typeInto(panel->scaleValueBox(), QStringLiteral("0.25")); // consecutive value edits: one step
    QCOMPARE(w.document()->problem().spec.scale(), 0.25);
    QCOMPARE(stack->count(), 2);
    choose(ScaleMode::None); // a mode switch is always its own step
    QCOMPARE(stack->count(), 3);
    choose(ScaleMode::Custom);
    QCOMPARE(stack->count(), 4);
    stack->undo();
    QCOMPARE(w.document()->problem().spec.scaleMode, ScaleMode::None);
    stack->undo();
    QCOMPARE(w.document()->problem().spec.scaleMode, ScaleMode::Custom);
    QCOMPARE(w.document()->problem().spec.scale(), 0.25);
    QCOMPARE(panel->scaleBox()->currentData().toInt(), int(ScaleMode::Custom));
}

void TestEditorPanels::cellRefusesNumbersBeyondFloat_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("1e39") << QStringLiteral("1e39");
    QTest::newRow("-1e39") << QStringLiteral("-1e39");
    QTest::newRow("3.5e38") << QStringLiteral("3.5e38");
    QTest::newRow("inf") << QStringLiteral("inf");
    QTest::newRow("nan") << QStringLiteral("nan");
    QTest::newRow("1e999") << QStringLiteral("1e999");
}

void TestEditorPanels::cellRefusesNumbersBeyondFloat()
{
    QFETCH(QString, text);
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    MatrixModel *model = w.project()->matrixEditor(MatrixId::Wq)->model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const float before = w.document()->problem().weights.q(0, 0);
    QVERIFY(!model->setData(model->index(0, 0), text));
    QCOMPARE(w.document()->problem().weights.q(0, 0), before);
    QCOMPARE(w.document()->undoStack()->count(), 0);
    // The largest float is still a number: accepted, saved and opened again.
    QVERIFY(model->setData(model->index(0, 0), QStringLiteral("3.4e38")));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.attnscope.json"));
    QVERIFY(w.project()->saveTo(path));
    auto reread = Document::readProject(path);
    QVERIFY2(reread.ok(), reread ? "" : reread.message().c_str());
    QCOMPARE(reread->problem.weights.q(0, 0), 3.4e38f);
}

void TestEditorPanels::sizeBeyondMemoryRefusedWithMessage()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    QVERIFY(w.document()->setHeads(64));
    QVERIFY(w.document()->setHeadDimQK(4096));
    QVERIFY(w.computeController()->waitForIdle(30000));
    const MatrixF q = w.document()->problem().weights.q, k = w.document()->problem().weights.k;
    const int steps = w.document()->undoStack()->count();
    QSpinBox *dq = w.project()->modelPanel()->inputDimBox();
    typeInto(dq, QStringLiteral("65536")); // W_Q and W_K would be 64 GiB each
    QCOMPARE(w.document()->undoStack()->count(), steps);
    QCOMPARE(w.document()->problem().dq(), 4);
    QVERIFY(w.document()->problem().weights.q == q);
    QVERIFY(w.document()->problem().weights.k == k);
    QCOMPARE(dq->value(), 4); // the editor shows the document again
    QVERIFY2(w.lastError().contains(QStringLiteral("GiB")) && w.lastError().contains(QStringLiteral("65536")),
             qPrintable(w.lastError()));
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestEditorPanels::valueInputIsSeenAndEdited()
{
    // Tutorial 5's three inputs: the value input X_v could be neither seen nor edited.
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(w.openExample(QStringLiteral(":/examples/tutorial5-shapes/mha-three-inputs.attnscope.json")));
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult());
    const AttentionProblem &problem = w.document()->problem();
    QVERIFY(problem.hasSeparateValue());
    MatrixEditor *editor = w.project()->matrixEditor(MatrixId::Xv);
    QVERIFY(editor);
    auto *tabs = qobject_cast<QTabWidget *>(editor->parentWidget()->parentWidget());
    QVERIFY(tabs);
    QCOMPARE(tabs->tabText(tabs->indexOf(editor)), QStringLiteral("Value input"));
    QAbstractItemModel *model = editor->model();
    QAbstractItemModelTester tester(model);
    QCOMPARE(model->rowCount(), int(problem.xv->rows()));
    QCOMPARE(model->columnCount(), int(problem.xv->cols()) + 1); // the key tokens first
    QCOMPARE(model->data(model->index(1, 0)).toString(), QString::fromStdString(w.document()->project().keyTokens[1]));
    QCOMPARE(model->data(model->index(1, 2), Qt::EditRole).toFloat(), (*problem.xv)(1, 1));
    tabs->setCurrentWidget(editor);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/inputs-value-input.png")));

    // An edit is one undo step, and the values the heads mix are computed from it.
    const int steps = w.document()->undoStack()->count();
    QVERIFY(model->setData(model->index(1, 2), QStringLiteral("7.5")));
    QCOMPARE((*w.document()->problem().xv)(1, 1), 7.5f);
    QCOMPARE(w.document()->undoStack()->count(), steps + 1);
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult() && (*w.currentResult()->project.problem.xv)(1, 1) == 7.5f);
    const AttentionProblem &computed = w.currentResult()->project.problem;
    MatrixF values = *computed.xv * computed.weights.v;
    if (computed.weights.vBias)
        values.rowwise() += *computed.weights.vBias;
    const int dV = computed.spec.headDimV;
    const auto &v = w.currentResult()->trace.v; // one Tk x dV block per head
    QCOMPARE(int(v.size()), computed.spec.heads);
    for (int h = 0; h < computed.spec.heads; ++h) {
        const MatrixF expected = values.middleCols(h * dV, dV);
        QVERIFY(v[std::size_t(h)].rows() == expected.rows() && v[std::size_t(h)].cols() == dV);
        QVERIFY((v[std::size_t(h)] - expected).cwiseAbs().maxCoeff() < 1e-4f);
    }
    w.document()->undoStack()->undo();
    QVERIFY((*w.document()->problem().xv)(1, 1) != 7.5f);

    // Use off: the values come from the key input again (W_V follows its width); on: X_v is back.
    auto *use = editor->findChild<QCheckBox *>();
    QVERIFY(use && use->isEnabled() && use->isChecked());
    use->click();
    QVERIFY(!w.document()->problem().xv);
    QCOMPARE(w.document()->problem().weights.v.rows(), w.document()->problem().xkv.cols());
    QCOMPARE(model->rowCount(), 0);
    QVERIFY(validateProblem(w.document()->problem()).ok());
    use->click();
    QVERIFY(w.document()->problem().hasSeparateValue());
    QCOMPARE(*w.document()->problem().xv, w.document()->problem().xkv);
    QVERIFY(validateProblem(w.document()->problem()).ok());
}

void TestEditorPanels::pasteCopyAndTabInATable()
{
    // Ctrl+V put one number into one cell (the table's own editor), Ctrl+C copied one cell, and
    // Tab at a row's end went into the next row's token name.
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    MatrixEditor *editor = w.project()->matrixEditor(MatrixId::Xq);
    QTableView *table = editor->table();
    QAbstractItemModel *model = editor->model();
    QUndoStack *undo = w.document()->undoStack();
    const MatrixF before = w.document()->problem().xq;
    QCOMPARE(before.rows(), 3);
    QCOMPARE(before.cols(), 4);
    table->setFocus();
    const auto select = [&](int row, int column) {
        table->selectionModel()->setCurrentIndex(model->index(row, column), QItemSelectionModel::ClearAndSelect);
    };
    // A tutorial's list, pasted at row 1's first number (view column 1: column 0 is the token).
    const int steps = undo->count();
    QGuiApplication::clipboard()->setText(QStringLiteral("[[5, 6], [7, 8]]"));
    select(1, 1);
    QTest::keySequence(table, QKeySequence::Paste);
    QCOMPARE(undo->count(), steps + 1); // one undo step
    const MatrixF &x = w.document()->problem().xq;
    QCOMPARE(x(1, 0), 5.0f);
    QCOMPARE(x(1, 1), 6.0f);
    QCOMPARE(x(2, 0), 7.0f);
    QCOMPARE(x(2, 1), 8.0f);
    QVERIFY(x.row(0) == before.row(0));
    QCOMPARE(x(1, 2), before(1, 2));
    undo->undo();
    QVERIFY(w.document()->problem().xq == before);
    // One number fills the selection; Ctrl+C copies it back out as tab-separated lines.
    QGuiApplication::clipboard()->setText(QStringLiteral("0.5"));
    table->setCurrentIndex(model->index(0, 2));
    table->selectionModel()->select(QItemSelection(model->index(0, 2), model->index(1, 3)),
                                    QItemSelectionModel::ClearAndSelect);
    QTest::keySequence(table, QKeySequence::Paste);
    QCOMPARE(undo->count(), steps + 1);
    QVERIFY(w.document()->problem().xq.block(0, 1, 2, 2).isConstant(0.5f));
    QGuiApplication::clipboard()->clear();
    QTest::keySequence(table, QKeySequence::Copy);
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("0.5\t0.5\n0.5\t0.5\n"));
    // Too large a block, or text that is no block of numbers: refused in one line, nothing changed.
    const MatrixF kept = w.document()->problem().xq;
    QGuiApplication::clipboard()->setText(QStringLiteral("1 2 3 4 5"));
    select(2, 1);
    QTest::keySequence(table, QKeySequence::Paste);
    QVERIFY2(w.lastError().contains(QStringLiteral("1 \u00d7 5")) &&
                 w.lastError().contains(QStringLiteral("room for 1 \u00d7 4")),
             qPrintable(w.lastError()));
    QGuiApplication::clipboard()->setText(QStringLiteral("1 2\n3"));
    QTest::keySequence(table, QKeySequence::Paste);
    QCOMPARE(w.lastError(), QStringLiteral("Paste into X (query): line 2 has 1 number, line 1 has 2"));
    QVERIFY(w.document()->problem().xq == kept);
    QCOMPARE(undo->count(), steps + 1);
    // Tab at a row's end: the next row's first number, never its token; Shift+Tab back.
    select(0, 4);
    QTest::keyClick(table, Qt::Key_Tab);
    QCOMPARE(table->currentIndex(), model->index(1, 1));
    QTest::keyClick(table, Qt::Key_Backtab, Qt::ShiftModifier);
    QCOMPARE(table->currentIndex(), model->index(0, 4));
    QTest::keyClick(table, Qt::Key_Tab);
    QTest::keyClick(table, Qt::Key_Tab);
    QCOMPARE(table->currentIndex(), model->index(1, 2));
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestEditorPanels::kvHeadsBoxOffersDivisorsAndRegroups()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    ModelPanel *panel = w.project()->modelPanel();
    QComboBox *kv = panel->kvHeadsBox();
    QVERIFY(w.document()->setHeads(4));
    const auto offered = [kv] {
        QList<int> values;
        for (int i = 0; i < kv->count(); ++i)
            values << kv->itemData(i).toInt();
        return values;
    };
    QCOMPARE(offered(), (QList<int>{1, 2, 4}));
    QCOMPARE(kv->currentData().toInt(), 4);
    MatrixModel *wk = w.project()->matrixEditor(MatrixId::Wk)->model();
    QAbstractItemModelTester tester(wk, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const int dK = w.document()->problem().spec.headDimQK, steps = w.document()->undoStack()->count();
    kv->setCurrentIndex(kv->findData(2));
    emit kv->activated(kv->currentIndex());
    QCOMPARE(w.document()->problem().spec.keyValueHeads(), 2);
    QCOMPARE(w.document()->undoStack()->count(), steps + 1);
    QVERIFY(validateProblem(w.document()->problem()).ok());
    // The table has G·dK columns, each headed by its key/value head and the query heads reading it.
    QCOMPARE(wk->columnCount(), 2 * dK);
    QCOMPARE(wk->headerData(dK, Qt::Horizontal).toString(), QStringLiteral("g1·0"));
    QCOMPARE(wk->headerData(dK, Qt::Horizontal, Qt::ToolTipRole).toString(),
             QStringLiteral("Key/value head 1: read by query heads 2\u20133"));
    MatrixModel *wq = w.project()->matrixEditor(MatrixId::Wq)->model();
    QCOMPARE(wq->headerData(dK, Qt::Horizontal).toString(), QStringLiteral("h1·0"));
    QCOMPARE(w.project()->matrixEditor(MatrixId::Wv)->model()->columnCount(),
             2 * w.document()->problem().spec.headDimV);
    // Only divisors of the new head count are offered; G follows the heads (gcd(6, 2) = 2).
    typeInto(panel->headsBox(), QStringLiteral("6"));
    QCOMPARE(offered(), (QList<int>{1, 2, 3, 6}));
    QCOMPARE(kv->currentData().toInt(), 2);
    // Undo shows the document's G again.
    w.document()->undoStack()->undo();
    w.document()->undoStack()->undo();
    QCOMPARE(kv->currentData().toInt(), 4);
    QCOMPARE(wk->columnCount(), 4 * dK);
    QCOMPARE(wk->headerData(dK, Qt::Horizontal).toString(), QStringLiteral("h1·0"));
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestEditorPanels::ropeFieldsEditTheDocument()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    ModelPanel *panel = w.project()->modelPanel();
    ModernAttentionPanel *modern = panel->modernPanel();
    QUndoStack *stack = w.document()->undoStack();
    // Folded for a project that uses none of its fields (the dock shows the rest unscrolled).
    QVERIFY(!modern->isExpanded());
    QVERIFY(!modern->ropeBox()->isVisible());
    modern->expandButton()->click();
    QVERIFY(modern->ropeBox()->isVisible());
    QCheckBox *rope = modern->ropeBox();
    QVERIFY(!rope->isChecked());
    QVERIFY(!modern->ropeBaseBox()->isEnabled());
    QVERIFY(!modern->queryPositionsEdit()->isEnabled());
    // The tutorial's dK is 3: RoPE is refused with core's message and the box stays off.
    rope->click();
    QVERIFY(!rope->isChecked());
    QVERIFY(!w.document()->problem().spec.rope);
    QCOMPARE(stack->count(), 0);
    QVERIFY2(w.lastError().startsWith(QStringLiteral("rope: needs an even headDimQK")), qPrintable(w.lastError()));
    typeInto(panel->headDimQKBox(), QStringLiteral("4"));
    rope->click();
    QVERIFY(rope->isChecked());
    QVERIFY(w.document()->problem().spec.rope);
    QVERIFY(modern->ropeBaseBox()->isEnabled());
    QCOMPARE(modern->ropeBaseBox()->value(), 10000.0);
    typeInto(modern->ropeBaseBox(), QStringLiteral("500000"));
    QCOMPARE(w.document()->problem().spec.rope->base, 500000.0);
    // Self-attention: the keys are the query tokens and share their positions.
    QLineEdit *positions = modern->queryPositionsEdit();
    QVERIFY(positions->isEnabled());
    QVERIFY(!modern->keyPositionsEdit()->isEnabled());
    const auto type = [positions](const QString &text) {
        positions->setFocus();
        positions->selectAll();
        QTest::keyClicks(positions, text);
        QTest::keyClick(positions, Qt::Key_Return);
    };
    type(QStringLiteral("0 2,5"));
    QCOMPARE(w.document()->problem().spec.rope->queryPositions, (std::vector<std::int64_t>{0, 2, 5}));
    QCOMPARE(positions->text(), QStringLiteral("0, 2, 5"));
    QVERIFY(validateProblem(w.document()->problem()).ok());
    QCoreApplication::processEvents(); // the panel's layout, grown by the opened section
    auto *scroll = w.findChild<QScrollArea *>(QStringLiteral("modelScroll"));
    QVERIFY(scroll);
    scroll->ensureWidgetVisible(modern);
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/model-modern-attention.png")));
    // A wrong count or a negative number: one line naming the field, the document untouched, the
    // typed text kept for correcting.
    const std::string kept = serializeProject(w.document()->project());
    const int steps = stack->count();
    type(QStringLiteral("0 1"));
    QCOMPARE(w.lastError(), QStringLiteral("rope.queryPositions: expected 3 positions (one per row), found 2"));
    QCOMPARE(positions->text(), QStringLiteral("0 1"));
    type(QStringLiteral("0 -1 2"));
    QCOMPARE(w.lastError(), QStringLiteral("rope.queryPositions[1]: expected a whole number of 0 or more, found -1"));
    QCOMPARE(serializeProject(w.document()->project()), kept);
    QCOMPARE(stack->count(), steps);
    // Undo puts every field back as the document has it.
    stack->undo();
    QVERIFY(w.document()->problem().spec.rope->queryPositions.empty());
    QCOMPARE(positions->text(), QString());
    stack->undo();
    QCOMPARE(modern->ropeBaseBox()->value(), 10000.0);
    stack->undo();
    QVERIFY(!rope->isChecked());
    QVERIFY(!modern->ropeBaseBox()->isEnabled());
    QVERIFY(!positions->isEnabled());
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestEditorPanels::softcapFieldsEditTheDocument()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    ModernAttentionPanel *modern = w.project()->modelPanel()->modernPanel();
    QUndoStack *stack = w.document()->undoStack();
    modern->setExpanded(true);
    QCheckBox *cap = modern->softcapBox();
    QDoubleSpinBox *value = modern->softcapValueBox();
    QVERIFY(!cap->isChecked());
    QVERIFY(!value->isEnabled());
    cap->click();
    QCOMPARE(w.document()->problem().spec.softcap, std::optional<double>(50.0));
    QVERIFY(value->isEnabled());
    typeInto(value, QStringLiteral("30"));
    typeInto(value, QStringLiteral("20")); // consecutive value edits: one step
    QCOMPARE(w.document()->problem().spec.softcap, std::optional<double>(20.0));
    QCOMPARE(stack->count(), 2);
    cap->click();
    QVERIFY(!w.document()->problem().spec.softcap);
    QVERIFY(!value->isEnabled());
    stack->undo();
    QVERIFY(cap->isChecked());
    QCOMPARE(value->value(), 20.0);
    stack->undo();
    QCOMPARE(value->value(), 50.0);
    stack->undo();
    QVERIFY(!cap->isChecked());
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestEditorPanels::sinksEditorAddsEditsAndRemoves()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    QVERIFY(w.document()->setHeads(2));
    MatrixEditor *editor = w.project()->matrixEditor(MatrixId::Sinks);
    QVERIFY(editor);
    auto *tabs = qobject_cast<QTabWidget *>(editor->parentWidget()->parentWidget());
    QVERIFY(tabs);
    QCOMPARE(tabs->tabText(tabs->indexOf(editor)), QStringLiteral("Sinks"));
    MatrixModel *model = editor->model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model->rowCount(), 0);
    auto *use = editor->findChild<QCheckBox *>();
    QVERIFY(use && use->isEnabled() && !use->isChecked());
    use->click();
    QVERIFY(w.document()->problem().weights.sinks);
    QVERIFY(w.document()->problem().weights.sinks->isZero());
    QCOMPARE(model->rowCount(), 1);
    QCOMPARE(model->columnCount(), 2);
    QCOMPARE(model->headerData(1, Qt::Horizontal).toString(), QStringLiteral("h1"));
    QVERIFY(model->setData(model->index(0, 1), QStringLiteral("0.5")));
    QCOMPARE((*w.document()->problem().weights.sinks)(1), 0.5f);
    QVERIFY(validateProblem(w.document()->problem()).ok());
    w.document()->undoStack()->undo();
    QCOMPARE(model->data(model->index(0, 1), Qt::EditRole).toString(), QStringLiteral("0"));
    w.document()->undoStack()->undo();
    QVERIFY(!w.document()->problem().weights.sinks);
    QVERIFY(!use->isChecked());
    QCOMPARE(model->rowCount(), 0);
    QVERIFY(w.computeController()->waitForIdle(30000));
}

void TestEditorPanels::maskWindowBoxEditsTheWindow()
{
    const auto window = test::openTutorialWindow();
    QVERIFY(window);
    MainWindow &w = *window;
    MaskEditor *mask = w.project()->maskEditor();
    QSpinBox *width = mask->windowBox();
    QUndoStack *stack = w.document()->undoStack();
    QCOMPARE(width->value(), 0);
    QCOMPARE(width->text(), QStringLiteral("no window"));
    QVERIFY2(width->toolTip().contains(QStringLiteral("i - W < j")), qPrintable(width->toolTip()));
    typeInto(width, QStringLiteral("2"));
    QCOMPARE(w.document()->problem().mask.window, std::int64_t(2));
    QVERIFY(!w.document()->problem().mask.causal); // the window alone; the preset adds causal
    QCOMPARE(MaskPreset(mask->presetBox()->currentData().toInt()), MaskPreset::SlidingWindow);
    typeInto(width, QStringLiteral("3")); // consecutive edits of the width: one step
    QCOMPARE(w.document()->problem().mask.window, std::int64_t(3));
    QCOMPARE(stack->count(), 1);
    stack->undo();
    QCOMPARE(w.document()->problem().mask.window, std::int64_t(0));
    QCOMPARE(width->value(), 0);
    QCOMPARE(MaskPreset(mask->presetBox()->currentData().toInt()), MaskPreset::None);
    // The preset: causal and the last width used, as Mistral has it.
    mask->presetBox()->setCurrentIndex(mask->presetBox()->findData(int(MaskPreset::SlidingWindow)));
    mask->applyPreset();
    QCOMPARE(w.document()->problem().mask.window, std::int64_t(3));
    QVERIFY(w.document()->problem().mask.causal);
    QCOMPARE(width->value(), 3);
    mask->presetBox()->setCurrentIndex(mask->presetBox()->findData(int(MaskPreset::None)));
    mask->applyPreset();
    QCOMPARE(w.document()->problem().mask.window, std::int64_t(0));
    QCOMPARE(width->value(), 0);
    QVERIFY(w.computeController()->waitForIdle(30000));
}

ATTNSCOPE_TEST_MAIN_1600X1000(TestEditorPanels)
#include "tst_editorpanels.moc"
