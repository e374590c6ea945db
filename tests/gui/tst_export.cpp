// Export from the GUI with real widgets (offscreen): the Export Figure dialog's live preview
// and file, Copy Figure on the clipboard, and Export Data compared with the files
// `attnscope-cli compute` writes for the same project.

#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportDataDialog.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/MainWindow.h"
#include "core/formats/Npy.h"

#include "../common/TestUtil.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QXmlStreamReader>

using namespace attnscope;

namespace {

const QString kMultihead = QStringLiteral("multihead-causal");

bool settle(MainWindow &w)
{
    if (!w.computeController()->waitForIdle(20000))
        return false;
    return w.currentResult() && w.currentResult()->generation == w.computeController()->latestGeneration();
}

} // namespace

class TestExport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void figureDialogPreviewFollowsOptions();
    void figureDialogWritesTheFile();
    void figureDialogRefusesABadName();
    void copyFigurePutsAnImageOnTheClipboard();
    void dataExportEqualsCliCompute();
    void dataExportBundlesAndCsv();
    void figureDialogRemembersTheLastChoice();
    void exportsProposeAFolderThatExists();
    void eachViewHasItsOwnSize();

private:
    std::unique_ptr<MainWindow> m_window;
    QTemporaryDir m_tmp;
};

void TestExport::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_export"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    QVERIFY(m_tmp.isValid());
}

void TestExport::init()
{
    // Each test starts from the dialog's defaults (figureDialogRemembersTheLastChoice tests
    // what it remembers).
    QSettings().remove(QStringLiteral("exportFigure"));
    m_window = std::make_unique<MainWindow>();
    m_window->resize(1200, 800);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(m_window->openExample(QStringLiteral(":/examples/%1.attnscope.json").arg(kMultihead)));
    QVERIFY(settle(*m_window));
}

void TestExport::cleanup()
{
    if (m_window && m_window->document())
        m_window->document()->undoStack()->setClean();
    m_window.reset();
}

void TestExport::figureDialogPreviewFollowsOptions()
{
    ExportFigureDialog *d = m_window->figures()->showFigureDialog();
    QVERIFY(d);
    QVERIFY(d->isVisible());
    QVERIFY(d->previewCount() >= 1);
    QCOMPARE(d->options().view, FigureView::Head); // the heads tab shows the enlarged head
    const QImage before = d->previewImage();
    QVERIFY(!before.isNull());
    QSignalSpy spy(d, &ExportFigureDialog::previewUpdated);

    auto *map = d->findChild<QComboBox *>(QStringLiteral("colorMap"));
    QVERIFY(map);
    map->setCurrentIndex(map->findData(int(ColorMapKind::Magma)));
    QVERIFY(spy.wait(5000));
    const QImage magma = d->previewImage();
    QVERIFY(magma != before);
    // The preview is the exported figure, scaled: the top-left cell has Magma's colour.
    const FigureOptions o = d->options();
    QCOMPARE(o.colorMap, ColorMapKind::Magma);
    const ComputedTracePtr r = m_window->currentResult();
    const FigureExporter exporter(r->project, r->trace);
    const QSizeF page = exporter.pageSize(o, d->figureSize());
    const FigureRenderer renderer(ShownAttention::ofTensors(r), o);
    const auto maps = renderer.heatmaps(QRectF(QPointF(0, 0), page));
    QCOMPARE(maps.size(), size_t(1));
    const HeatmapLayout l = HeatmapRenderer(*maps[0].data, maps[0].options).layout(maps[0].target);
    const double scale = double(magma.width()) / page.width();
    const QPointF corner = (l.grid.topLeft() + QPointF(l.cellWidth * 0.25, l.cellHeight * 0.25)) * scale;
    QCOMPARE(QColor(magma.pixel(corner.toPoint())).name(),
             QColor::fromRgb(ColorMap(ColorMapKind::Magma).at((*maps[0].data->values)(0, 0))).name());

    // Another view, and a title typed in: each repaints the preview.
    auto *view = d->findChild<QComboBox *>(QStringLiteral("view"));
    view->setCurrentIndex(view->findData(int(FigureView::Heads)));
    QVERIFY(spy.wait(5000));
    QCOMPARE(d->options().view, FigureView::Heads);
    QVERIFY(d->previewImage().size() != magma.size() || d->previewImage() != magma);
    const int count = d->previewCount();
    QTest::keyClicks(d->findChild<QLineEdit *>(QStringLiteral("title")), QStringLiteral("My heads"));
    QTRY_VERIFY(d->previewCount() > count);
    QCOMPARE(*d->options().title, QStringLiteral("My heads"));
    d->findChild<QCheckBox *>(QStringLiteral("showTitle"))->setChecked(false);
    QTRY_VERIFY(d->options().title && d->options().title->isEmpty());
    // The colour scale beside the colour map (issue 9): chosen, it reaches the options.
    auto *colorScale = d->findChild<QComboBox *>(QStringLiteral("colorScale"));
    QVERIFY(colorScale);
    const int previews = d->previewCount();
    colorScale->setCurrentIndex(colorScale->findData(QStringLiteral("log")));
    QCOMPARE(d->options().colorScale, ColorScaleKind::Log);
    QTRY_VERIFY(d->previewCount() > previews);
    d->reject();
}

void TestExport::figureDialogWritesTheFile()
{
    ExportFigureDialog *d = m_window->figures()->showFigureDialog();
    QVERIFY(d);
    QSignalSpy accepted(d, &QDialog::accepted);
    const QString path = m_tmp.filePath(QStringLiteral("dialog-figure.svg"));
    d->findChild<QLineEdit *>(QStringLiteral("path"))->setText(path);
    auto *view = d->findChild<QComboBox *>(QStringLiteral("view"));
    view->setCurrentIndex(view->findData(int(FigureView::Mask)));
    d->findChild<QPushButton *>(QStringLiteral("exportButton"))->click();
    QCOMPARE(accepted.count(), 1);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    QStringList texts;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements);
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(texts.contains(QStringLiteral("mat")));
    QVERIFY(texts.join(QLatin1Char(' ')).contains(QStringLiteral("attention mask")));

    // PNG at a chosen size and DPI.
    ExportFigureDialog *p = m_window->figures()->showFigureDialog();
    const QString png = m_tmp.filePath(QStringLiteral("dialog-figure.png"));
    p->setPath(png);
    p->findChild<QSpinBox *>(QStringLiteral("dpi"))->setValue(300);
    p->findChild<QSpinBox *>(QStringLiteral("width"))->setValue(900);
    p->findChild<QSpinBox *>(QStringLiteral("height"))->setValue(600);
    QVERIFY2(p->exportFigure(), qPrintable(p->lastError()));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(900, 600));
    QCOMPARE(int(std::lround(image.dotsPerMeterX() * 0.0254)), 300);
    p->reject();
}

void TestExport::figureDialogRefusesABadName()
{
    ExportFigureDialog *d = m_window->figures()->showFigureDialog();
    const QString path = m_tmp.filePath(QStringLiteral("figure.gif"));
    d->setPath(path);
    d->findChild<QPushButton *>(QStringLiteral("exportButton"))->click();
    QVERIFY(d->isVisible()); // stays open with the reason
    QVERIFY2(d->lastError().contains(QStringLiteral(".png, .svg or .pdf")), qPrintable(d->lastError()));
    QVERIFY(!QFile::exists(path));
    d->setPath(m_tmp.filePath(QStringLiteral("missing/figure.png")));
    QVERIFY(!d->exportFigure());
    QVERIFY2(d->lastError().contains(QStringLiteral("missing/figure.png")), qPrintable(d->lastError()));
    d->reject();
}

void TestExport::copyFigurePutsAnImageOnTheClipboard()
{
    QApplication::clipboard()->clear();
    QVERIFY(QApplication::clipboard()->image().isNull());
    QAction *copy = m_window->figures()->copyAction();
    QCOMPARE(copy->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    copy->trigger();
    const QImage image = QApplication::clipboard()->image();
    QVERIFY(!image.isNull());
    // The same figure the exporter makes of the view in front, at 144 DPI.
    const ComputedTracePtr r = m_window->currentResult();
    FigureSize size;
    size.dpi = 144;
    const QImage expected = FigureExporter(r->project, r->trace).image(m_window->figures()->currentOptions(), size);
    QCOMPARE(image.size(), expected.size());
    QCOMPARE(image.convertToFormat(QImage::Format_RGB32), expected.convertToFormat(QImage::Format_RGB32));

    // The shortcut, on the head view tab: a different figure.
    m_window->views()->tabs()->setCurrentIndex(1);
    QCOMPARE(m_window->figures()->currentOptions().view, FigureView::HeadView);
    QTest::keyClick(m_window.get(), Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_VERIFY(QApplication::clipboard()->image().size() != image.size());
}

void TestExport::dataExportEqualsCliCompute()
{
    // The CLI computes the same project file with the CPU backend, as the window does.
    const QString cliDir = m_tmp.filePath(QStringLiteral("cli"));
    QProcess cli;
    cli.start(QStringLiteral(ATTNSCOPE_CLI),
              {QStringLiteral("compute"),
               test::sourcePath(QStringLiteral("resources/examples/%1.attnscope.json").arg(kMultihead)),
               QStringLiteral("--out"), cliDir, QStringLiteral("--backend"), QStringLiteral("cpu")});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());

    const QString guiDir = m_tmp.filePath(QStringLiteral("gui"));
    QVERIFY(QDir().mkpath(guiDir));
    for (const char *name : {"q", "k", "v", "scores", "weights", "context", "output"}) {
        ExportDataDialog *d = m_window->figures()->showDataDialog();
        QVERIFY(d);
        QSignalSpy accepted(d, &QDialog::accepted);
        const QString path = QDir(guiDir).filePath(QLatin1String(name) + QStringLiteral(".npy"));
        auto *tensor = d->findChild<QComboBox *>(QStringLiteral("tensor"));
        tensor->setCurrentIndex(tensor->findData(QLatin1String(name)));
        d->findChild<QLineEdit *>(QStringLiteral("path"))->setText(path);
        d->findChild<QPushButton *>(QStringLiteral("exportButton"))->click();
        QVERIFY2(accepted.count() == 1, qPrintable(d->lastError()));
        auto got = readNpyFile(path.toStdString());
        auto expected = readNpyFile(QDir(cliDir).filePath(QLatin1String(name) + QStringLiteral(".npy")).toStdString());
        QVERIFY2(got, got ? "" : got.message().c_str());
        QVERIFY(expected);
        const std::string diff = test::compareNpy(name, *got, *expected);
        QVERIFY2(diff.empty(), diff.c_str());
        // Same backend, same inputs: the very same bytes.
        QFile a(path), b(QDir(cliDir).filePath(QLatin1String(name) + QStringLiteral(".npy")));
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());
    }
}

void TestExport::dataExportBundlesAndCsv()
{
    const ComputedTracePtr r = m_window->currentResult();
    QString error;
    const QString npz = m_tmp.filePath(QStringLiteral("all.npz"));
    QVERIFY2(writeTraceData(TraceLabels::of(r->project), r->trace, npz, {}, 0, &error), qPrintable(error));
    QFile f(npz);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray zip = f.readAll();
    QVERIFY(zip.startsWith("PK\x03\x04"));
    for (const char *name : {"q.npy", "weights.npy", "context.npy", "mask.npy"})
        QVERIFY2(zip.contains(name), name);

    const QString json = m_tmp.filePath(QStringLiteral("all.json"));
    QVERIFY2(writeTraceData(TraceLabels::of(r->project), r->trace, json, {}, 0, &error), qPrintable(error));
    QFile j(json);
    QVERIFY(j.open(QIODevice::ReadOnly));
    QVERIFY(j.readAll().contains("\"weights\""));

    // CSV of head 2's weights: token-labelled, one row per query.
    ExportDataDialog *d = m_window->figures()->showDataDialog();
    const QString csv = m_tmp.filePath(QStringLiteral("weights-head2.csv"));
    d->setTensor(QStringLiteral("weights"));
    d->setHead(1);
    d->setPath(csv);
    QVERIFY2(d->exportData(), qPrintable(d->lastError()));
    QFile c(csv);
    QVERIFY(c.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(c.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), int(r->trace.weights[1].rows()) + 1);
    QVERIFY(lines[0].contains(QStringLiteral("mat")));
    QVERIFY(lines[1].startsWith(QStringLiteral("the,")));
    const double w10 = lines[2].split(QLatin1Char(','))[1].toDouble();
    QCOMPARE(float(w10), r->trace.weights[1](1, 0));

    d->setPath(m_tmp.filePath(QStringLiteral("weights.xlsx")));
    QVERIFY(!d->exportData());
    QVERIFY2(d->lastError().contains(QStringLiteral(".csv, .npy, .npz or .json")), qPrintable(d->lastError()));
    d->reject();
}

void TestExport::figureDialogRemembersTheLastChoice()
{
    ExportFigureDialog *d = m_window->figures()->showFigureDialog();
    QVERIFY(d);
    QCOMPARE(d->options().view, FigureView::Head);
    auto *view = d->findChild<QComboBox *>(QStringLiteral("view"));
    view->setCurrentIndex(view->findData(int(FigureView::Heads)));
    auto *map = d->findChild<QComboBox *>(QStringLiteral("colorMap"));
    map->setCurrentIndex(map->findData(int(ColorMapKind::Cividis)));
    d->findChild<QSpinBox *>(QStringLiteral("dpi"))->setValue(300);
    d->findChild<QCheckBox *>(QStringLiteral("labels"))->setChecked(false);
    const QString path = m_tmp.filePath(QStringLiteral("remembered.png"));
    d->setPath(path);
    QVERIFY2(d->exportFigure(), qPrintable(d->lastError()));
    d->accept();

    // Opened again in this session: the view and options chosen last.
    ExportFigureDialog *again = m_window->figures()->showFigureDialog();
    QVERIFY(again);
    QCOMPARE(again->options().view, FigureView::Heads);
    QCOMPARE(again->options().colorMap, ColorMapKind::Cividis);
    QVERIFY(!again->options().labels);
    QCOMPARE(again->figureSize().dpi, 300);
    QVERIFY2(again->path().endsWith(QStringLiteral(".png")), qPrintable(again->path()));
    again->reject();

    // And in the next session, through QSettings.
    m_window->document()->undoStack()->setClean();
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(m_window->openExample(QStringLiteral(":/examples/%1.attnscope.json").arg(kMultihead)));
    QVERIFY(settle(*m_window));
    ExportFigureDialog *next = m_window->figures()->showFigureDialog();
    QVERIFY(next);
    QCOMPARE(next->options().view, FigureView::Heads);
    QCOMPARE(next->options().colorMap, ColorMapKind::Cividis);
    QCOMPARE(next->figureSize().dpi, 300);
    next->reject();
}

void TestExport::eachViewHasItsOwnSize()
{
    // One width and height served every view: a size set for the grid of heads squeezed the
    // step view into it.
    ExportFigureDialog *d = m_window->figures()->showFigureDialog();
    QVERIFY(d);
    auto *view = d->findChild<QComboBox *>(QStringLiteral("view"));
    auto *width = d->findChild<QSpinBox *>(QStringLiteral("width"));
    auto *height = d->findChild<QSpinBox *>(QStringLiteral("height"));
    QVERIFY(view && width && height);
    view->setCurrentIndex(view->findData(int(FigureView::Heads)));
    width->setValue(1400);
    height->setValue(700);
    view->setCurrentIndex(view->findData(int(FigureView::Teaching)));
    QCOMPARE(width->value(), 0); // auto: the step view's natural size
    QCOMPARE(height->value(), 0);
    QCOMPARE(d->figureSize().width, 0);
    width->setValue(900);
    view->setCurrentIndex(view->findData(int(FigureView::Heads)));
    QCOMPARE(width->value(), 1400);
    QCOMPARE(height->value(), 700);
    d->accept();
    // Remembered per view for the next export.
    ExportFigureDialog *again = m_window->figures()->showFigureDialog();
    auto *againView = again->findChild<QComboBox *>(QStringLiteral("view"));
    QCOMPARE(again->options().view, FigureView::Heads);
    QCOMPARE(again->figureSize().width, 1400);
    againView->setCurrentIndex(againView->findData(int(FigureView::Teaching)));
    QCOMPARE(again->figureSize().width, 900);
    again->reject();
}

void TestExport::exportsProposeAFolderThatExists()
{
    // The first export proposed ~/Documents, which need not exist (the export then failed), and
    // an export did not move the next proposal to its folder.
    QSettings().setValue(QStringLiteral("files/lastDir"), m_tmp.filePath(QStringLiteral("gone/away")));
    MainWindow w;
    QVERIFY(w.openExample(QStringLiteral(":/examples/%1.attnscope.json").arg(kMultihead)));
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult());
    ExportFigureDialog *d = w.figures()->showFigureDialog();
    QVERIFY(d);
    const QFileInfo proposed(d->path());
    QVERIFY2(proposed.absoluteDir().exists(), qPrintable(d->path()));
    QVERIFY2(QFileInfo(proposed.absolutePath()).isWritable(), qPrintable(d->path()));
    const QString folder = m_tmp.filePath(QStringLiteral("slides"));
    QVERIFY(QDir().mkpath(folder));
    QSignalSpy accepted(d, &QDialog::accepted);
    d->setPath(QDir(folder).filePath(QStringLiteral("heads.png")));
    d->findChild<QPushButton *>(QStringLiteral("exportButton"))->click();
    QTRY_COMPARE(accepted.count(), 1);
    ExportDataDialog *data = w.figures()->showDataDialog();
    QVERIFY(data);
    QCOMPARE(QFileInfo(data->path()).absolutePath(), QFileInfo(folder).absoluteFilePath());
    data->reject();
    QSettings().remove(QStringLiteral("files/lastDir"));
}

QTEST_MAIN(TestExport)
#include "tst_export.moc"
