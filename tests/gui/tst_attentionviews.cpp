// Imported attention in the real main window: File > Open of .npy/.npz/.safetensors files
// (read on a worker), the layers x heads model view, the layer selector, the head statistics
// table, the rollout and word merging. Expected numbers come from the fixtures' generator
// (tests/fixtures/attention/make_attention_fixtures.py, NumPy), not from the code under test.

#include "../common/TestUtil.h"

#include "app/gui/sources/ProjectSource.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportDataDialog.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/HeadLinesView.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StaleBanner.h"
#include "app/gui/views/StatsTable.h"
#include "app/gui/views/TeachingView.h"
#include "app/gui/views/WindowStatus.h"
#include "app/render/ColorScale.h"
#include "app/render/HeatmapRenderer.h"
#include "core/analysis/AttentionStats.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include <cmath>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attnscope;

namespace {

const QString kFixtures = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/fixtures/attention/");

QJsonObject expectedJson(const QString &fixture)
{
    QFile f(kFixtures + QStringLiteral("expected_") + QFileInfo(fixture).completeBaseName() + QStringLiteral(".json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Opens an attention file and waits until every attention view is filled.
bool openAndWait(MainWindow &w, const QString &path)
{
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    if (!w.openFile(path) || !opened.wait(20000))
        return false;
    w.attentionController()->waitForIdle();
    return QTest::qWaitFor(
        [&] {
            return w.views()->modelView()->isFilled() && w.views()->statsTable()->isFilled() &&
                   w.views()->rolloutView()->isFilled() &&
                   w.shownAttention().heads() == w.setSource()->attention()->set.heads();
        },
        20000);
}

bool sameMatrix(const MatrixF &a, const MatrixF &b, double tolerance)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return false;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j)
            if (std::abs(double(a(i, j)) - double(b(i, j))) > tolerance)
                return false;
    return true;
}

} // namespace

class TestAttentionViews : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void openingShowsLayersTimesHeadsTiles_data();
    void openingShowsLayersTimesHeadsTiles();
    void badFileLeavesDocumentUnchanged_data();
    void badFileLeavesDocumentUnchanged();
    void badFileLeavesAttentionDocumentUnchanged();
    void clickingTileSelectsLayerAndHead();
    void layerSelectorDrivesHeatmaps();
    void statisticsEqualCoreAndNumPy();
    void sortingByEntropyOrdersRows();
    void clickingStatsRowSelectsLayerAndHead();
    void findHeadsLikeThisSortsByDistance();
    void findHeadsLikeThisFromTheModelView();
    void rolloutMatchesNumPy();
    void mergingWordsShowsWords();
    void projectShowsItsOneLayer();
    void openingProjectLeavesReadOnlyMode();
    void aPooledProjectAfterAFileNamesItsBackend();
    void readOnlyDocumentExportsAndDescribesCells();
    void thumbnailsAreColouredLikeHeatmaps();
    void projectOpenedWhileReadingWins();
    void closingReadOnlyDocumentKeepsEditorLayout();
    void colourScaleChoiceReachesViewsAndFigures();
    void headViewHoversEitherSideAndTogglesHeads();
    void fileRewrittenWhileShownIsReportedNotFatal();
    void scoresFileIsSaidAndSoftmaxApplies();
    void exportDataOffersWhatTheFileHas();
    void rolloutZoomsLikeTheHead();
    void maskedAndSinkRowsAreNoticedNotRefused();
    void fifoGivenAsAttentionFileIsRefusedAndTheWindowCloses();

private:
    QTemporaryDir m_dir;
};

void TestAttentionViews::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_attentionviews"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestAttentionViews::openingShowsLayersTimesHeadsTiles_data()
{
    QTest::addColumn<QString>("path");
    const QStringList files = QDir(kFixtures).entryList(
        {QStringLiteral("*.npy"), QStringLiteral("*.npz"), QStringLiteral("*.safetensors")}, QDir::Files, QDir::Name);
    for (const QString &name : files)
        if (!name.startsWith(QLatin1String("expected_")))
            QTest::newRow(qPrintable(name)) << kFixtures + name;
}

void TestAttentionViews::openingShowsLayersTimesHeadsTiles()
{
    QFETCH(QString, path);
    const QJsonObject expected = expectedJson(path);
    QVERIFY(!expected.isEmpty());
    const int layers = expected.value(QLatin1String("layers")).toInt();
    const int heads = expected.value(QLatin1String("heads")).toInt();
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, path));
    QCOMPARE(w.views()->modelView()->layers(), layers);
    QCOMPARE(w.views()->modelView()->heads(), heads);
    QCOMPARE(int(w.views()->modelView()->thumbnails()->images.size()), layers * heads);
    QCOMPARE(w.views()->grid()->heads(), heads);
    QCOMPARE(w.views()->statsTable()->model()->rowCount(), layers * heads);
    // A file holds maps only: its tooltips say which tile, and nothing it does not know.
    QCOMPARE(w.views()->modelView()->tileToolTip(layers - 1, 0), QStringLiteral("Layer %1, head 0").arg(layers - 1));
    QVERIFY(w.setSource());
    QVERIFY(w.windowTitle().contains(QFileInfo(path).fileName()));
    QVERIFY(w.windowTitle().contains(QLatin1String("read-only")));
    QVERIFY(w.setSource()->layerSelector()->isVisibleTo(&w) == (layers > 1));
    // Read-only: no editors, no saving.
    for (QDockWidget *d : w.findChildren<QDockWidget *>())
        QVERIFY2(!d->isVisible(), qPrintable(d->objectName()));
    QVERIFY(!w.project()->saveTo(m_dir.filePath(QStringLiteral("x.attnscope.json"))));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("x.attnscope.json"))));
    // The tiles are readable and the model view scrolls rather than shrinking them.
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    QVERIFY(w.views()->modelView()->tileSize() >= ModelView::kMinTileSize);
}

void TestAttentionViews::badFileLeavesDocumentUnchanged_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("problem"); // a word the one-line message names
    QFile good(kFixtures + QStringLiteral("lhtt_f32.npy"));
    QVERIFY(good.open(QIODevice::ReadOnly));
    const QByteArray bytes = good.readAll();
    const QString truncated = m_dir.filePath(QStringLiteral("truncated.npy"));
    QFile t(truncated);
    QVERIFY(t.open(QIODevice::WriteOnly));
    t.write(bytes.left(bytes.size() - 100));
    t.close();
    QTest::newRow("truncated") << truncated << QStringLiteral("truncated.npy");
    std::vector<float> values(2 * 3 * 3, 1.0f / 3.0f);
    values[4] = std::nanf("");
    const std::string nanBytes = npyBytes({2, 3, 3}, values.data());
    const QString nan = m_dir.filePath(QStringLiteral("nan.npy"));
    QFile n(nan);
    QVERIFY(n.open(QIODevice::WriteOnly));
    n.write(nanBytes.data(), qint64(nanBytes.size()));
    n.close();
    QTest::newRow("nan") << nan << QStringLiteral("NaN");
    QTest::newRow("missing") << m_dir.filePath(QStringLiteral("missing.safetensors"))
                             << QStringLiteral("missing.safetensors");
}

void TestAttentionViews::badFileLeavesDocumentUnchanged()
{
    QFETCH(QString, path);
    QFETCH(QString, problem);
    MainWindow w;
    w.show();
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult());
    const QString title = w.windowTitle();
    const ComputedTracePtr result = w.currentResult();
    Document *doc = w.document();
    QSignalSpy failed(&w, &MainWindow::openFailed);
    QVERIFY(w.openFile(path));
    QVERIFY(failed.wait(20000));
    QCOMPARE(w.windowTitle(), title);
    QCOMPARE(w.currentResult(), result);
    QCOMPARE(w.document(), doc);
    QVERIFY(!w.setSource());
    QVERIFY2(w.lastError().contains(problem), qPrintable(w.lastError()));
    QVERIFY(!w.lastError().contains(QLatin1Char('\n')));
    auto *box = w.findChild<QMessageBox *>(QStringLiteral("errorBox"));
    QVERIFY(box);
    QCOMPARE(box->text(), w.lastError());
}

void TestAttentionViews::badFileLeavesAttentionDocumentUnchanged()
{
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f16.npy")));
    const LoadedAttentionPtr before = w.setSource()->attention();
    const QString title = w.windowTitle();
    const QString truncated = m_dir.filePath(QStringLiteral("short.npy"));
    QFile t(truncated);
    QVERIFY(t.open(QIODevice::WriteOnly));
    t.write("\x93NUMPY\x01\x00", 8);
    t.close();
    QSignalSpy failed(&w, &MainWindow::openFailed);
    QVERIFY(w.openFile(truncated));
    QVERIFY(failed.wait(20000));
    QCOMPARE(w.setSource()->attention(), before);
    QCOMPARE(w.windowTitle(), title);
    QVERIFY(w.views()->modelView()->isFilled());
}

void TestAttentionViews::clickingTileSelectsLayerAndHead()
{
    const QString path = kFixtures + QStringLiteral("lhtt_f32.npy");
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, path));
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    ModelView *view = w.views()->modelView();
    const QRect tile = view->tileRect(2, 1);
    QSignalSpy shown(&w, &MainWindow::attentionShown);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, tile.center());
    QCOMPARE(w.setSource()->layer(), 2);
    QCOMPARE(w.views()->headView()->head(), 1);
    QCOMPARE(w.views()->tabs()->currentIndex(), 0);
    QVERIFY(shown.wait(20000));
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    QVERIFY(sameMatrix(*w.views()->headView()->data().values, set->map(0, 2, 1), 0.0));
    QCOMPARE(w.setSource()->layerSelector()->value(), 2); // shown numbered from 0, as the CLI and the JSON
}

void TestAttentionViews::layerSelectorDrivesHeatmaps()
{
    const QString path = kFixtures + QStringLiteral("lhtt_f16_st.safetensors");
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, path));
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    QSignalSpy shown(&w, &MainWindow::attentionShown);
    w.setSource()->layerSelector()->setValue(1); // layers count from 0 everywhere
    QVERIFY(shown.wait(20000));
    QCOMPARE(w.setSource()->layer(), 1);
    QCOMPARE(w.shownAttention().layer, 1);
    QVERIFY(!w.currentResult()); // a file: no project's result
    for (int h = 0; h < set->heads(); ++h)
        QVERIFY(sameMatrix((*w.shownAttention().weights())[size_t(h)], set->map(0, 1, h), 0.0));
    QCOMPARE(w.views()->modelView()->currentLayer(), 1);
}

void TestAttentionViews::statisticsEqualCoreAndNumPy()
{
    const QString path = kFixtures + QStringLiteral("lhtt_f64.npy");
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, path));
    const QJsonArray expected = expectedJson(path).value(QLatin1String("stats")).toArray();
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    const std::vector<HeadStats> core = headStatistics(*set);
    const HeadStatsModel *model = w.views()->statsTable()->statsModel();
    QCOMPARE(model->rowCount(), int(expected.size()));
    const char *keys[] = {"entropy", "distance", "confidence", "first", "self", "previous"};
    for (int r = 0; r < model->rowCount(); ++r) {
        const QJsonObject e = expected[r].toObject();
        QCOMPARE(model->index(r, HeadStatsModel::Layer).data().toInt(), e.value(QLatin1String("layer")).toInt());
        QCOMPARE(model->index(r, HeadStatsModel::Head).data().toInt(), e.value(QLatin1String("head")).toInt());
        const std::optional<double> coreValues[] = {core[size_t(r)].entropy,    core[size_t(r)].distance,
                                                    core[size_t(r)].confidence, core[size_t(r)].first,
                                                    core[size_t(r)].self,       core[size_t(r)].previous};
        for (int c = 0; c < 6; ++c) {
            const QModelIndex index = model->index(r, HeadStatsModel::Entropy + c);
            const double shown = index.data(Qt::UserRole).toDouble();
            QVERIFY(coreValues[c]);
            QCOMPARE(shown, *coreValues[c]);
            QCOMPARE(index.data().toString(), QString::number(*coreValues[c], 'f', 4));
            const double numpy = e.value(QLatin1String(keys[c])).toDouble();
            QVERIFY2(std::abs(shown - numpy) < 1e-6, qPrintable(QStringLiteral("%1 %2").arg(shown).arg(numpy)));
        }
    }
}

void TestAttentionViews::sortingByEntropyOrdersRows()
{
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    StatsTable *table = w.views()->statsTable();
    const QJsonArray expected = expectedJson(QStringLiteral("lhtt_f32.npy")).value(QLatin1String("stats")).toArray();
    double lowest = 1e300, highest = -1e300;
    for (const QJsonValue &v : expected) {
        lowest = std::min(lowest, v.toObject().value(QLatin1String("entropy")).toDouble());
        highest = std::max(highest, v.toObject().value(QLatin1String("entropy")).toDouble());
    }
    for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
        // As a click on the header does.
        table->sortByColumn(HeadStatsModel::Entropy, order);
        QAbstractItemModel *view = table->model();
        QCOMPARE(view->rowCount(), int(expected.size()));
        for (int r = 1; r < view->rowCount(); ++r) {
            const double a = view->index(r - 1, HeadStatsModel::Entropy).data(Qt::UserRole).toDouble();
            const double b = view->index(r, HeadStatsModel::Entropy).data(Qt::UserRole).toDouble();
            QVERIFY2(order == Qt::AscendingOrder ? a <= b : a >= b, qPrintable(QString::number(r)));
        }
        const double first = view->index(0, HeadStatsModel::Entropy).data(Qt::UserRole).toDouble();
        QVERIFY(std::abs(first - (order == Qt::AscendingOrder ? lowest : highest)) < 1e-6);
    }
}

void TestAttentionViews::clickingStatsRowSelectsLayerAndHead()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    w.views()->tabs()->setCurrentWidget(w.views()->statsTable());
    StatsTable *table = w.views()->statsTable();
    table->sortByColumn(HeadStatsModel::Entropy, Qt::DescendingOrder);
    const int row = 3;
    // The table shows the layer and head indices themselves (counting from 0, as the JSON).
    const int layer = table->model()->index(row, HeadStatsModel::Layer).data().toInt();
    const int head = table->model()->index(row, HeadStatsModel::Head).data().toInt();
    QVERIFY(layer >= 0 && head >= 0);
    const QRect cell = table->visualRect(table->model()->index(row, HeadStatsModel::Entropy));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(w.setSource()->layer(), layer);
    QCOMPARE(w.views()->headView()->head(), head);
    QCOMPARE(w.views()->grid()->currentHead(), head);
}

void TestAttentionViews::findHeadsLikeThisSortsByDistance()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    w.views()->tabs()->setCurrentWidget(w.views()->statsTable());
    StatsTable *table = w.views()->statsTable();
    auto set = readAttentionFile((kFixtures + QStringLiteral("lhtt_f32.npy")).toStdString());
    QVERIFY(set.ok());
    const std::vector<HeadStats> core = headStatistics(*set);
    // The head picked by the context menu's action: the table's current row.
    table->sortByColumn(HeadStatsModel::Entropy, Qt::AscendingOrder);
    const int pick = 2;
    const int layer = table->model()->index(pick, HeadStatsModel::Layer).data().toInt();
    const int head = table->model()->index(pick, HeadStatsModel::Head).data().toInt();
    table->setCurrentIndex(table->model()->index(pick, HeadStatsModel::Entropy));
    QAction *find = table->findChild<QAction *>(QStringLiteral("findHeadsLikeThis"));
    QVERIFY(find);
    find->trigger();
    QAbstractItemModel *view = table->model();
    // The head itself first, at distance 0, then every other head by its distance to it, as core's
    // headDistances computes over the standardised metrics.
    QCOMPARE(view->index(0, HeadStatsModel::Layer).data().toInt(), layer);
    QCOMPARE(view->index(0, HeadStatsModel::Head).data().toInt(), head);
    QCOMPARE(view->index(0, HeadStatsModel::Unlike).data(Qt::UserRole).toDouble(), 0.0);
    std::size_t reference = 0;
    while (core[reference].layer != layer || core[reference].head != head)
        ++reference;
    const std::vector<double> distances = headDistances(core, reference);
    for (int r = 0; r < view->rowCount(); ++r) {
        const int l = view->index(r, HeadStatsModel::Layer).data().toInt();
        const int h = view->index(r, HeadStatsModel::Head).data().toInt();
        const double shown = view->index(r, HeadStatsModel::Unlike).data(Qt::UserRole).toDouble();
        QCOMPARE(shown, distances[std::size_t(l * set->heads() + h)]);
        if (r > 0)
            QVERIFY(view->index(r - 1, HeadStatsModel::Unlike).data(Qt::UserRole).toDouble() <= shown);
    }
    QCOMPARE(view->headerData(HeadStatsModel::Unlike, Qt::Horizontal).toString(),
             QStringLiteral("Unlike L%1 H%2").arg(layer).arg(head));
    QCOMPARE(view->headerData(HeadStatsModel::First, Qt::Horizontal).toString(), QStringLiteral("Sink mass"));
    QCOMPARE(table->currentIndex().row(), 0);
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/find-heads-like-this.png")));
    QVERIFY(!table->findHeadsLike(99, 0)); // no such head: nothing sorted by it
    QVERIFY(view->index(0, HeadStatsModel::Unlike).data().toString().isEmpty());
}

void TestAttentionViews::findHeadsLikeThisFromTheModelView()
{
    // The model view's context menu: the head under the mouse, then the statistics in front,
    // sorted by likeness to it.
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    w.views()->modelView()->setCurrent(2, 3);
    QAction *find = w.views()->findHeadsLikeAction();
    QVERIFY(find);
    find->trigger();
    StatsTable *table = w.views()->statsTable();
    QCOMPARE(w.views()->tabs()->currentWidget(), static_cast<QWidget *>(table));
    QTRY_VERIFY(table->isFilled());
    QTRY_COMPARE(table->headAtRow(0), std::make_pair(2, 3));
    QCOMPARE(table->model()->index(0, HeadStatsModel::Unlike).data(Qt::UserRole).toDouble(), 0.0);
}

void TestAttentionViews::rolloutMatchesNumPy()
{
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    auto expected = readNpyFile((kFixtures + QStringLiteral("expected_lhtt_f32_rollout.npy")).toStdString());
    QVERIFY(expected.ok());
    const HeatmapData &d = w.views()->rolloutView()->data();
    QVERIFY(d.values);
    QCOMPARE(int(d.rows()), int(expected->shape[0]));
    QCOMPARE(int(d.cols()), int(expected->shape[1]));
    for (Eigen::Index i = 0; i < d.rows(); ++i)
        for (Eigen::Index j = 0; j < d.cols(); ++j)
            QVERIFY(std::abs(double((*d.values)(i, j)) - expected->data[size_t(i * d.cols() + j)]) < 1e-5);
    QCOMPARE(d.rowLabels.value(0), QStringLiteral("[CLS]"));
    // It follows the toolbar's colour scale, which it ignored.
    auto *colorScale = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(colorScale);
    w.views()->tabs()->setCurrentWidget(w.views()->rolloutView());
    const QImage linear = w.views()->rolloutView()->grab().toImage();
    colorScale->setCurrentIndex(colorScale->findData(int(ColorScaleKind::Log)));
    QCOMPARE(w.views()->rolloutView()->colorScale(), ColorScaleKind::Log);
    QVERIFY(w.views()->rolloutView()->grab().toImage() != linear);
}

void TestAttentionViews::mergingWordsShowsWords()
{
    const QString path = kFixtures + QStringLiteral("lhtt_f32.npy");
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, path));
    QVERIFY(w.setSource()->mergeWordsAction()->isEnabled());
    auto expected = readNpyFile((kFixtures + QStringLiteral("expected_lhtt_f32_merged_l0h0.npy")).toStdString());
    QVERIFY(expected.ok());
    QSignalSpy shown(&w, &MainWindow::attentionShown);
    w.setSource()->setLayer(0);
    w.views()->setCurrentHead(0);
    w.setSource()->mergeWordsAction()->setChecked(true);
    QVERIFY(shown.wait(20000));
    const HeatmapData &d = w.views()->headView()->data();
    QCOMPARE(int(d.rows()), int(expected->shape[0]));
    for (Eigen::Index i = 0; i < d.rows(); ++i)
        for (Eigen::Index j = 0; j < d.cols(); ++j)
            QVERIFY(std::abs(double((*d.values)(i, j)) - expected->data[size_t(i * d.cols() + j)]) < 1e-5);
    QVERIFY(d.rowLabels.contains(QStringLiteral("transformer")));
    QTRY_COMPARE(w.views()->rolloutView()->data().rows(), d.rows());
    // The thumbnails of the tokens are there already: wait for those of the words (a race before).
    QTRY_VERIFY(w.views()->modelView()->isFilled() &&
                w.views()->modelView()->thumbnails()->images.front().height() == int(d.rows()));
    // Off again: the tokens come back.
    w.setSource()->mergeWordsAction()->setChecked(false);
    QVERIFY(shown.wait(20000));
    QVERIFY(w.views()->headView()->data().rowLabels.contains(QStringLiteral("##er")));
}

void TestAttentionViews::projectShowsItsOneLayer()
{
    MainWindow w;
    w.show();
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult());
    const int heads = w.currentResult()->trace.heads();
    w.views()->tabs()->setCurrentWidget(w.views()->modelView());
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->isFilled(), 20000);
    QCOMPARE(w.views()->modelView()->layers(), 1);
    QCOMPARE(w.views()->modelView()->heads(), heads);
    QVERIFY(!w.setSource()); // no layers to choose: no layer selector
    const auto *layers = w.findChild<QSpinBox *>(QStringLiteral("layerSelector"));
    QVERIFY(!layers || !layers->isVisibleTo(&w));
    // The project says how its layer attends: its heads and its scale.
    const double scale = w.document()->problem().spec.scale();
    const QString tip = w.views()->modelView()->tileToolTip(0, 0);
    QVERIFY2(tip.contains(QStringLiteral("%1 heads, each with its own keys and values").arg(heads)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("scores scaled by %1").arg(scale, 0, 'g', 6)), qPrintable(tip));
    w.views()->tabs()->setCurrentWidget(w.views()->statsTable());
    QTRY_COMPARE(w.views()->statsTable()->model()->rowCount(), heads);
}

void TestAttentionViews::aPooledProjectAfterAFileNamesItsBackend()
{
    // The status bar kept "Attention file: npy, float32" over a project opened next when no
    // result replaced it (a project shown pooled computes none).
    MainWindow w;
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    QVERIFY2(w.status()->backend().startsWith(QStringLiteral("Attention file")), qPrintable(w.status()->backend()));
    MemoryBudget budget;
    budget.pooledCells = 1; // every project is shown pooled
    w.setMemoryBudget(budget);
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QVERIFY(w.project()->isPooled());
    QVERIFY2(w.status()->backend().startsWith(QStringLiteral("Backend:")), qPrintable(w.status()->backend()));
}

void TestAttentionViews::openingProjectLeavesReadOnlyMode()
{
    MainWindow w;
    w.show();
    auto *inputs = w.findChild<QDockWidget *>(QStringLiteral("InputsDock"));
    QVERIFY(inputs && inputs->isVisible());
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    QVERIFY(!inputs->isVisible());
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    QVERIFY(!w.setSource());
    QVERIFY(inputs->isVisible());
    QVERIFY(!w.windowTitle().contains(QLatin1String("read-only")));
    QVERIFY(w.computeController()->waitForIdle());
    QTRY_VERIFY(w.currentResult() && w.currentResult()->project.problem.xq.cols() > 1);
}

void TestAttentionViews::readOnlyDocumentExportsAndDescribesCells()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    w.views()->tabs()->setCurrentIndex(0);
    w.views()->setCurrentHead(2);
    // Weights only: the hover text gives the weight (there are no scores to explain it with).
    const float weight = (*w.views()->headView()->data().values)(3, 1);
    const QString text = w.views()->headView()->cellDescription(3, 1);
    QVERIFY2(text.contains(QString::number(double(weight), 'g', 5)), qPrintable(text));
    // Every view of the layer paints weights-only data (no scores, no intermediate tensors).
    for (QWidget *page :
         {static_cast<QWidget *>(w.views()->lines()), static_cast<QWidget *>(w.views()->meanView()),
          static_cast<QWidget *>(w.views()->modelView()), static_cast<QWidget *>(w.views()->rolloutView()),
          static_cast<QWidget *>(w.views()->statsTable())}) {
        w.views()->tabs()->setCurrentWidget(page);
        QVERIFY(!page->grab().isNull());
    }
    QVERIFY(w.views()->tabs()->isTabVisible(0));
    QVERIFY(!w.views()->tabs()->isTabVisible(w.views()->tabs()->indexOf(w.views()->teaching())));
    w.views()->tabs()->setCurrentIndex(0);
    QVERIFY(w.figures()->copyFigure());
    const QImage copied = QGuiApplication::clipboard()->image();
    QVERIFY(!copied.isNull());
    // The figure dialog offers what a weights-only document has, and writes it.
    ExportFigureDialog *figure = w.figures()->showFigureDialog();
    QVERIFY(figure);
    auto *view = figure->findChildren<QComboBox *>().value(0);
    QVERIFY(view);
    for (QComboBox *box : figure->findChildren<QComboBox *>()) {
        QCOMPARE(box->findData(int(FigureView::Teaching)) >= 0 && box == view, false);
        QVERIFY(box->findText(QStringLiteral("Scores (scaled, before mask)")) < 0);
    }
    const QString png = m_dir.filePath(QStringLiteral("head.png"));
    figure->setPath(png);
    QVERIFY2(figure->exportFigure(), qPrintable(figure->lastError()));
    QImage written(png);
    QVERIFY(!written.isNull());
    figure->close();
    // The data dialog writes the weights of the layer shown.
    ExportDataDialog *data = w.figures()->showDataDialog();
    QVERIFY(data);
    data->setTensor(QStringLiteral("weights-layer"));
    QCOMPARE(data->layer(), 0);
    data->setHead(2);
    const QString npy = m_dir.filePath(QStringLiteral("head.npy"));
    data->setPath(npy);
    QVERIFY2(data->exportData(), qPrintable(data->lastError()));
    auto read = readNpyFile(npy.toStdString());
    QVERIFY(read.ok());
    QCOMPARE(read->shape, (std::vector<std::int64_t>{4, 11, 11})); // every head of the layer
    QCOMPARE(float(read->data[(2 * 11 + 3) * 11 + 1]), weight);
    data->close();
}

void TestAttentionViews::thumbnailsAreColouredLikeHeatmaps()
{
    const QString path = kFixtures + QStringLiteral("lhtt_f32.npy");
    MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, path));
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    const ColorMap viridis(ColorMapKind::Viridis);
    const int layer = 1, head = 2;
    const MatrixF m = set->map(0, layer, head);
    // Plain loops: GCC 12 warns falsely inside Eigen's AVX-512 maxCoeff().
    auto largest = [](const MatrixF &x) {
        float top = 0.0f;
        for (Eigen::Index k = 0; k < x.size(); ++k)
            top = std::max(top, x.data()[k]);
        return top;
    };
    float allMax = 0.0f;
    for (int l = 0; l < set->layers(); ++l)
        for (int h = 0; h < set->heads(); ++h)
            allMax = std::max(allMax, largest(set->map(0, l, h)));
    const float mapMax = largest(m);
    QComboBox *scope = nullptr;
    for (QComboBox *box : w.findChildren<QComboBox *>())
        if (box->findData(int(ScaleScope::PerHead)) >= 0 && box->count() == 3 &&
            box->itemText(box->findData(int(ScaleScope::PerHead))).contains(QLatin1String("head")))
            scope = box;
    QVERIFY(scope);
    for (ScaleScope s : {ScaleScope::Absolute, ScaleScope::PerHead, ScaleScope::Shared}) {
        QSignalSpy updated(w.views(), &AttentionViews::setViewsUpdated);
        const auto before = w.views()->modelView()->thumbnails();
        scope->setCurrentIndex(scope->findData(int(s)));
        if (s != ScaleScope::Absolute)
            QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->thumbnails() != before, 20000);
        const double top = s == ScaleScope::Absolute ? 1.0 : s == ScaleScope::PerHead ? mapMax : allMax;
        // 11 tokens: one pixel per cell.
        const QImage &image = w.views()->modelView()->thumbnails()->images[size_t(layer * set->heads() + head)];
        QCOMPARE(image.size(), QSize(11, 11));
        for (int i = 0; i < 11; ++i)
            for (int j = 0; j < 11; ++j)
                QCOMPARE(QColor(image.pixel(j, i)).name(), QColor(viridis.at(double(m(i, j)) / top)).name());
    }
    // The toolbar's log and percentile scales colour the thumbnails too (they stayed linear, so a
    // sink's small rest and a long head's tail looked empty): as the heatmap colours that map.
    auto *colorScale = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(colorScale);
    scope->setCurrentIndex(scope->findData(int(ScaleScope::Absolute)));
    for (ColorScaleKind kind : {ColorScaleKind::Log, ColorScaleKind::Percentile}) {
        const auto before = w.views()->modelView()->thumbnails();
        colorScale->setCurrentIndex(colorScale->findData(int(kind)));
        QTRY_VERIFY_WITH_TIMEOUT(w.views()->modelView()->thumbnails() != before, 20000);
        HeatmapData d;
        d.values = &m;
        const ColorScale scale = ColorScale::build(kind, {&d});
        const QImage &image = w.views()->modelView()->thumbnails()->images[size_t(layer * set->heads() + head)];
        int changed = 0;
        for (int i = 0; i < 11; ++i)
            for (int j = 0; j < 11; ++j) {
                QCOMPARE(QColor(image.pixel(j, i)).name(), QColor(viridis.at(scale.position(m(i, j)))).name());
                changed += image.pixel(j, i) != viridis.at(double(m(i, j)));
            }
        QVERIFY2(changed > 11, qPrintable(QString::number(changed))); // not the linear picture again
    }
    colorScale->setCurrentIndex(colorScale->findData(int(ColorScaleKind::Linear)));
}

void TestAttentionViews::projectOpenedWhileReadingWins()
{
    MainWindow w;
    w.show();
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QVERIFY(w.openFile(kFixtures + QStringLiteral("lhtt_f32.npy")));
    // Opened after the attention file, before its read finished: the project is the document.
    QVERIFY(w.openExample(QStringLiteral(":/examples/multihead-causal.attnscope.json")));
    const QString title = w.windowTitle();
    QVERIFY(w.attentionController()->waitForIdle());
    // Every job's answer, the read's included, has come back to the GUI thread and been handled.
    QTRY_VERIFY(!w.attentionController()->isBusy());
    QCOMPARE(opened.count(), 0);
    QVERIFY(!w.setSource());
    QCOMPARE(w.windowTitle(), title);
}

void TestAttentionViews::closingReadOnlyDocumentKeepsEditorLayout()
{
    {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
        QVERIFY(w.close());
    }
    MainWindow next;
    next.show();
    auto *inputs = next.findChild<QDockWidget *>(QStringLiteral("InputsDock"));
    QVERIFY(inputs);
    QVERIFY(inputs->isVisible()); // not hidden as the read-only document had them
}

// The toolbar's colour scale (linear, log, percentile) is what the heatmaps paint with and
// what an exported figure starts from.
void TestAttentionViews::colourScaleChoiceReachesViewsAndFigures()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    auto *box = w.findChild<QComboBox *>(QStringLiteral("viewColorScale"));
    QVERIFY(box);
    QCOMPARE(w.views()->headView()->options().colorScale, ColorScaleKind::Linear);
    const QImage linear = w.views()->headView()->grab().toImage();
    box->setCurrentIndex(box->findData(int(ColorScaleKind::Log)));
    QCOMPARE(w.views()->headView()->settings().colorScale, ColorScaleKind::Log);
    QCOMPARE(w.views()->headView()->options().colorScale, ColorScaleKind::Log);
    QCOMPARE(w.figures()->currentOptions().colorScale, ColorScaleKind::Log);
    QVERIFY(w.views()->headView()->grab().toImage() != linear);
    box->setCurrentIndex(box->findData(int(ColorScaleKind::Percentile)));
    QCOMPARE(w.views()->headView()->options().colorScale, ColorScaleKind::Percentile);
}

// The head view: hovering a key shows the lines into it (hovering a query, those out of it); in
// the overlay a click on a head's legend entry switches its lines off, another on again.
void TestAttentionViews::headViewHoversEitherSideAndTogglesHeads()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    HeadLinesView *view = w.views()->lines();
    w.views()->tabs()->setCurrentWidget(view);
    QTRY_VERIFY(w.shownAttention().weights());
    auto move = [&](QPointF at) {
        QMouseEvent e(QEvent::MouseMove, at, view->mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(view, &e);
    };
    const QImage all = view->grab().toImage();
    move(view->keyAnchor(2) + QPointF(12, 0));
    QCOMPARE(view->hoverKey(), 2);
    QCOMPARE(view->hoverQuery(), -1);
    const QImage intoKey = view->grab().toImage();
    QVERIFY(intoKey != all);
    move(view->queryAnchor(3) - QPointF(12, 0));
    QCOMPARE(view->hoverQuery(), 3);
    QCOMPARE(view->hoverKey(), -1);
    move(QPointF(view->width() / 2.0, 2));
    QCOMPARE(view->hoverKey(), -1);

    view->setOverlay(true);
    const QImage overlay = view->grab().toImage();
    HeadViewOptions o;
    o.overlay = true;
    o.font = view->font();
    const ShownAttention shown = w.shownAttention();
    const HeadViewRenderer renderer(shown, o);
    QPointF legend(-1, -1);
    for (int y = view->height() - 1; y > view->height() - 40 && legend.x() < 0; --y)
        for (int x = 0; x < view->width() && legend.x() < 0; ++x)
            if (renderer.legendHeadAt(QRectF(view->rect()), QPointF(x + 0.5, y + 0.5)) == 1)
                legend = QPointF(x + 2.5, y + 0.5);
    QVERIFY(legend.x() >= 0);
    QTest::mouseClick(view, Qt::LeftButton, {}, legend.toPoint());
    QVERIFY(!view->isHeadShown(1));
    QVERIFY(view->isHeadShown(0));
    QVERIFY(view->grab().toImage() != overlay);
    QTest::mouseClick(view, Qt::LeftButton, {}, legend.toPoint());
    QVERIFY(view->isHeadShown(1));
    QCOMPARE(view->grab().toImage(), overlay);
}

void TestAttentionViews::fileRewrittenWhileShownIsReportedNotFatal()
{
    // The script that dumped the file runs again while it is shown: np.save truncates the file
    // in place and writes it anew. Every page past the new end used to raise SIGBUS at the
    // next read (the window died, 3 of 3); now the views grey under a banner that says the
    // file changed, and Reopen reads it as it is.
    const QString path = m_dir.filePath(QStringLiteral("rewritten.npy"));
    QFile::remove(path);
    QVERIFY(QFile::copy(kFixtures + QStringLiteral("lhtt_f32.npy"), path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    const QByteArray whole = test::readAll(path);
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, path));
    QVERIFY(!w.banner()->isStale());

    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_TRUNC);
    QVERIFY(fd >= 0);
    QCOMPARE_EQ(::write(fd, whole.constData(), 128), ssize_t(128)); // the header, then the writer is slow
    ::close(fd);
    // Every view reads the file again: another layer, the statistics, the rollout.
    w.setSource()->layerSelector()->setValue(1);
    w.views()->tabs()->setCurrentWidget(w.views()->statsTable());
    w.views()->tabs()->setCurrentWidget(w.views()->rolloutView());
    QTRY_VERIFY_WITH_TIMEOUT(w.banner()->isStale(), 20000);
    QVERIFY2(w.banner()->reason().contains(QStringLiteral("the file changed on disk; reopen it")),
             qPrintable(w.banner()->reason()));
    w.attentionController()->waitForIdle();
    QCoreApplication::processEvents();
    auto *reopen = w.findChild<QPushButton *>(QStringLiteral("reopenButton"));
    QVERIFY(reopen);
    QVERIFY(reopen->isVisible());
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/attention-file-changed.png")));

    // The writer finishes; Reopen shows the file as it is now.
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(whole), whole.size());
    f.close();
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QTest::mouseClick(reopen, Qt::LeftButton);
    QVERIFY(opened.wait(20000));
    QVERIFY(!w.banner()->isStale());
    QVERIFY(!reopen->isVisible());
    QVERIFY(w.setSource()->attention()->set.checkSource().ok());
}

void TestAttentionViews::scoresFileIsSaidAndSoftmaxApplies()
{
    // Scores before softmax used to open silently: entropy -32, confidence 5.08. Now the views
    // grey under a banner naming the row sums, and Apply Softmax shows the file's softmax.
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("rows/scores_lhtt_f32.npy")));
    QVERIFY(w.banner()->isStale());
    QVERIFY2(w.banner()->reason().startsWith(QStringLiteral("Row sums -14 to 20.4: 11 of 24 rows sum above 1; "
                                                            "23 rows have negative values")),
             qPrintable(w.banner()->reason()));
    QVERIFY2(w.status()->notice().startsWith(QStringLiteral("Not attention weights")), qPrintable(w.status()->text()));
    auto *apply = w.findChild<QPushButton *>(QStringLiteral("reopenButton"));
    QVERIFY(apply && apply->isVisible());
    QCOMPARE(apply->text(), QStringLiteral("Apply Softmax"));
    QVERIFY(QDir().mkpath(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR)));
    QVERIFY(w.grab().save(QStringLiteral(ATTNSCOPE_SCREENSHOT_DIR "/attention-file-scores.png")));

    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QTest::mouseClick(apply, Qt::LeftButton);
    QVERIFY(opened.wait(20000));
    QVERIFY(!w.banner()->isStale());
    QVERIFY(w.setSource()->attention()->softmaxApplied);
    QVERIFY2(w.status()->backend().endsWith(QStringLiteral("softmax applied")), qPrintable(w.status()->backend()));
    QVERIFY2(w.status()->notice().startsWith(QStringLiteral("Softmax applied to every row")),
             qPrintable(w.status()->notice()));
    // What is shown is NumPy's softmax of the stored scores.
    auto expected =
        readNpyFile((kFixtures + QStringLiteral("rows/expected_scores_lhtt_f32_softmax.npy")).toStdString());
    QVERIFY(expected.ok());
    const AttentionSet &set = w.setSource()->attention()->set;
    QCOMPARE(set.layers(), 2);
    for (std::size_t n = 0; n < expected->data.size(); ++n)
        QVERIFY(std::abs(double(set.at(0, int(n / 72), int(n / 36 % 2), std::int64_t(n / 6 % 6), std::int64_t(n % 6))) -
                         expected->data[n]) < 1e-6);
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->statsTable()->isFilled(), 20000);
}

void TestAttentionViews::exportDataOffersWhatTheFileHas()
{
    // Export Data on a file proposed "New project.npz" and wrote the layer shown plus eight empty
    // arrays. It offers what the file has, and writes exactly that.
    const QString path = kFixtures + QStringLiteral("lhtt_f32.npy");
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, path));
    w.setSource()->layerSelector()->setValue(1);
    QTRY_COMPARE(w.views()->attention().layer, 1);
    ExportDataDialog *data = w.figures()->showDataDialog();
    QVERIFY(data);
    // The file's own name, but never the file itself (nor another file that is there).
    QCOMPARE(QFileInfo(data->path()).completeBaseName().left(8), QStringLiteral("lhtt_f32"));
    QVERIFY2(!QFileInfo::exists(data->path()), qPrintable(data->path()));
    auto *what = data->findChild<QComboBox *>(QStringLiteral("tensor"));
    QStringList keys;
    for (int i = 0; i < what->count(); ++i)
        keys << what->itemData(i).toString();
    QCOMPARE(keys, (QStringList{"weights-all", "weights-layer", "weights-head", "mean", "rollout", "stats"}));
    QCOMPARE(data->layer(), 1); // the layer shown

    auto file = readNpyFile(path.toStdString());
    QVERIFY(file.ok());
    const auto exported = [&](const QString &key, const QString &name) -> std::optional<NpyArray> {
        data->setTensor(key);
        data->setPath(m_dir.filePath(name));
        if (!data->exportData()) {
            qWarning("%s", qPrintable(data->lastError()));
            return std::nullopt;
        }
        auto read = readNpyFile(m_dir.filePath(name).toStdString());
        return read ? std::optional<NpyArray>(*read) : std::nullopt;
    };
    auto all = exported(QStringLiteral("weights-all"), QStringLiteral("all.npy"));
    QVERIFY(all);
    QCOMPARE(all->shape, file->shape);
    QCOMPARE(all->data, file->data);
    data->setLayer(2);
    auto layer = exported(QStringLiteral("weights-layer"), QStringLiteral("layer.npy"));
    QVERIFY(layer);
    QCOMPARE(layer->shape, (std::vector<std::int64_t>{4, 11, 11}));
    QCOMPARE(layer->data[0], file->data[2 * 4 * 121]);
    data->setHead(3);
    auto head = exported(QStringLiteral("weights-head"), QStringLiteral("head.npy"));
    QVERIFY(head);
    QCOMPARE(head->shape, (std::vector<std::int64_t>{11, 11}));
    QCOMPARE(head->data[5], file->data[(2 * 4 + 3) * 121 + 5]);
    auto mean = exported(QStringLiteral("mean"), QStringLiteral("mean.npy"));
    QVERIFY(mean);
    double want = 0;
    for (int h = 0; h < 4; ++h)
        want += file->data[std::size_t((2 * 4 + h) * 121 + 12)] / 4;
    QVERIFY(std::abs(mean->data[12] - want) < 1e-6);
    auto rollout = exported(QStringLiteral("rollout"), QStringLiteral("rollout.npy"));
    QVERIFY(rollout);
    auto expected = readNpyFile((kFixtures + QStringLiteral("expected_lhtt_f32_rollout.npy")).toStdString());
    QVERIFY(expected.ok());
    for (std::size_t n = 0; n < expected->data.size(); ++n)
        QVERIFY(std::abs(rollout->data[n] - expected->data[n]) < 1e-6);
    // The statistics: one row per head of every layer.
    data->setTensor(QStringLiteral("stats"));
    data->setPath(m_dir.filePath(QStringLiteral("stats.csv")));
    QVERIFY2(data->exportData(), qPrintable(data->lastError()));
    QFile stats(m_dir.filePath(QStringLiteral("stats.csv")));
    QVERIFY(stats.open(QIODevice::ReadOnly));
    QCOMPARE(stats.readAll().count('\n'), 1 + 3 * 4);
    // The file shown is refused as the output: it is read from while shown.
    data->setTensor(QStringLiteral("weights-all"));
    data->setPath(path);
    const QByteArray before = test::readAll(path);
    QVERIFY(!data->exportData());
    QVERIFY2(data->lastError().contains(QStringLiteral("is the attention file shown")), qPrintable(data->lastError()));
    QCOMPARE(test::readAll(path), before);
    // A suffix that does not hold the choice is refused by name, and nothing is written.
    data->setTensor(QStringLiteral("weights-all"));
    data->setPath(m_dir.filePath(QStringLiteral("all.csv")));
    QVERIFY(!data->exportData());
    QVERIFY2(data->lastError().endsWith(QStringLiteral("is written as .npy.")), qPrintable(data->lastError()));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("all.csv"))));
    data->close();
}

void TestAttentionViews::rolloutZoomsLikeTheHead()
{
    // Every heatmap zooms: the rollout could not.
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f32.npy")));
    RolloutView *rollout = w.views()->rolloutView();
    w.views()->tabs()->setCurrentWidget(rollout);
    QTRY_VERIFY(rollout->isVisible() && rollout->data().values);
    QCOMPARE(rollout->visibleCells(), QRect(0, 0, 11, 11));
    const QPointF at = rollout->layout().grid.center();
    for (int notch = 0; notch < 4; ++notch) {
        QWheelEvent wheel(at, rollout->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(rollout, &wheel);
    }
    QVERIFY(rollout->isZoomed());
    const QRect zoomed = rollout->visibleCells();
    QVERIFY(zoomed.width() < 11 && zoomed.width() >= HeatmapZoom::kMinCells);
    // The block's labels are the tokens of the block.
    QCOMPARE(rollout->layout().rowLabels.isEmpty(), false);
    QTest::keyClick(rollout, Qt::Key_Home);
    QVERIFY(!rollout->isZoomed());
}

void TestAttentionViews::maskedAndSinkRowsAreNoticedNotRefused()
{
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("rows/sinks_htt_f16.npy")));
    QVERIFY(!w.banner()->isStale());
    QVERIFY2(w.status()->notice().contains(QStringLiteral("1 of 10 rows are all zero (masked queries)")),
             qPrintable(w.status()->notice()));
    QVERIFY2(w.status()->notice().contains(QStringLiteral("5 of 10 rows sum below 1")),
             qPrintable(w.status()->notice()));
    // Softmax rows say nothing.
    QVERIFY(openAndWait(w, kFixtures + QStringLiteral("lhtt_f16.npy")));
    QCOMPARE(w.status()->notice(), QString());
}

void TestAttentionViews::fifoGivenAsAttentionFileIsRefusedAndTheWindowCloses()
{
    // A FIFO named like an attention file blocked the worker reading it in open() for good, and
    // the window could not close: its destructor waited for that worker.
    const QString fifo = m_dir.filePath(QStringLiteral("pipe.npy"));
    QFile::remove(fifo);
    QCOMPARE_EQ(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    auto w = std::make_unique<MainWindow>();
    w->show();
    QSignalSpy failed(w.get(), &MainWindow::openFailed);
    QVERIFY(w->openFile(fifo));
    QVERIFY(failed.wait(20000));
    QVERIFY2(w->lastError().contains(QStringLiteral("not a regular file")), qPrintable(w->lastError()));
    QVERIFY(!w->setSource());
    w.reset(); // returns: no worker is left waiting on the FIFO
}

QTEST_MAIN(TestAttentionViews)
#include "tst_attentionviews.moc"
