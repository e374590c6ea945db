// Heads and layers are numbered one way everywhere (issue 12): from 0, as PyTorch indexes them
// and as the CLI's --layer/--head and the stats JSON count. Head index 2 is called "Head 2" in
// the window, "head 2" in the figure the window exports, and is what `attnscope-cli --head 2`
// draws and exports; the numbers shown are checked against the data each one names.
#include "../common/CliRunner.h"
#include "../render/FigureTestUtil.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/ExportFigureDialog.h"
#include "app/gui/views/FigureActions.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "app/gui/views/RolloutView.h"
#include "app/gui/views/StatsTable.h"
#include "core/analysis/AttentionStats.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/Npy.h"

#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;
using attnscope::test::runCli;

namespace {

const QString kFixtures = QStringLiteral(ATTNSCOPE_SOURCE_DIR "/tests/fixtures/attention/");

// The map of one head as written by the CLI ([Tq,Tk] float32) or a head of [H,Tq,Tk].
bool npyHeadEquals(const QString &path, int head, const MatrixF &expected, QString *why)
{
    auto npy = readNpyFile(path.toStdString());
    if (!npy.ok()) {
        *why = QString::fromStdString(npy.error().message);
        return false;
    }
    const auto &shape = npy->shape;
    const std::int64_t rows = shape[shape.size() - 2], cols = shape.back();
    if (rows != expected.rows() || cols != expected.cols()) {
        *why = QStringLiteral("shape %1 x %2").arg(rows).arg(cols);
        return false;
    }
    const std::size_t offset = shape.size() == 3 ? std::size_t(head * rows * cols) : 0;
    for (Eigen::Index i = 0; i < expected.rows(); ++i)
        for (Eigen::Index j = 0; j < expected.cols(); ++j)
            if (std::abs(double(npy->data[offset + std::size_t(i * cols + j)]) - double(expected(i, j))) > 1e-6) {
                *why = QStringLiteral("cell %1,%2 differs").arg(i).arg(j);
                return false;
            }
    return true;
}

// A self-attention project with three heads whose maps all differ.
QString writeThreeHeadProject(const QDir &dir)
{
    QJsonArray x, w[3];
    for (int i = 0; i < 4; ++i)
        x.append(QJsonArray{(i % 3) - 1.0, 0.5 * i, 1.0 - 0.25 * i, (i * i) % 5 - 2.0});
    for (int m = 0; m < 3; ++m)
        for (int r = 0; r < 4; ++r) {
            QJsonArray row;
            for (int c = 0; c < 6; ++c)
                row.append(((r * 7 + c * 5 + m * 3) % 11 - 5) * 0.3 * (1 + c / 2));
            w[m].append(row);
        }
    QJsonObject project{{"format", "attnscope"},
                        {"version", 1},
                        {"title", "Three heads"},
                        {"mode", "self"},
                        {"heads", 3},
                        {"headDimQK", 2},
                        {"headDimV", 2},
                        {"query", QJsonObject{{"tokens", QJsonArray{"a", "b", "c", "d"}}, {"x", x}}},
                        {"weights", QJsonObject{{"q", w[0]}, {"k", w[1]}, {"v", w[2]}, {"o", QJsonValue()}}}};
    const QString path = dir.filePath(QStringLiteral("three-heads.attnscope.json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QJsonDocument(project).toJson());
    return path;
}

// The dialog remembers the last view: choose the one-head figure.
void chooseHeadView(ExportFigureDialog *dialog)
{
    auto *view = dialog->findChild<QComboBox *>(QStringLiteral("view"));
    QVERIFY(view);
    view->setCurrentIndex(view->findData(int(FigureView::Head)));
    QCOMPARE(dialog->options().view, FigureView::Head);
}

} // namespace

class TestHeadNumbering : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void projectHeadTwoIsCliHeadTwo();
    void attentionFileLayerOneHeadTwoIsCliLayerOneHeadTwo();
};

void TestHeadNumbering::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_head_numbering"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
}

void TestHeadNumbering::projectHeadTwoIsCliHeadTwo()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString project = writeThreeHeadProject(QDir(tmp.path()));
    QVERIFY(!project.isEmpty());
    MainWindow w;
    w.show();
    QSignalSpy shown(&w, &MainWindow::resultShown);
    QVERIFY(w.openFile(project));
    QTRY_VERIFY_WITH_TIMEOUT(w.currentResult() && w.currentResult()->trace.heads() == 3, 20000);
    w.views()->setCurrentHead(2);
    // The window's title of head index 2.
    QCOMPARE(w.views()->headView()->head(), 2);
    QCOMPARE(w.views()->headView()->data().title, QStringLiteral("Head 2"));
    const MatrixF shownMap = *w.views()->headView()->data().values;
    QVERIFY(shownMap.isApprox(w.currentResult()->trace.weights[2]));
    QVERIFY(!shownMap.isApprox(w.currentResult()->trace.weights[1]));

    // The figure the window exports for it says head 2.
    ExportFigureDialog *figure = w.figures()->showFigureDialog();
    QVERIFY(figure);
    chooseHeadView(figure);
    QCOMPARE(figure->options().head, 2);
    QCOMPARE(figure->findChild<QSpinBox *>(QStringLiteral("head"))->value(), 2);
    const QString guiSvg = tmp.filePath(QStringLiteral("gui.svg"));
    figure->setPath(guiSvg);
    QVERIFY2(figure->exportFigure(), qPrintable(figure->lastError()));
    figure->close();
    const auto gui = test::readSvg(guiSvg);
    QVERIFY2(gui.valid, qPrintable(gui.error));
    QVERIFY2(gui.title.contains(QStringLiteral("head 2")), qPrintable(gui.title));

    // `attnscope-cli render --head 2` draws the figure with the same title, and `export --head 2`
    // writes the map the window shows as head 2.
    const QString cliSvg = tmp.filePath(QStringLiteral("cli.svg"));
    const auto render = runCli({"render", project, "--view", "head", "--head", "2", "--out", cliSvg});
    QVERIFY2(render.code == 0, qPrintable(render.err));
    QCOMPARE(test::readSvg(cliSvg).title, gui.title);
    const QString out = tmp.filePath(QStringLiteral("compute"));
    const auto compute = runCli({"compute", project, "--out", out});
    QVERIFY2(compute.code == 0, qPrintable(compute.err));
    QString why;
    QVERIFY2(npyHeadEquals(out + QStringLiteral("/weights.npy"), 2, shownMap, &why), qPrintable(why));
}

void TestHeadNumbering::attentionFileLayerOneHeadTwoIsCliLayerOneHeadTwo()
{
    const QString path = kFixtures + QStringLiteral("lhtt_f32.npy");
    auto set = readAttentionFile(path.toStdString());
    QVERIFY(set.ok());
    QVERIFY(set->layers() >= 2 && set->heads() >= 3);
    MainWindow w;
    w.show();
    QSignalSpy opened(&w, &MainWindow::attentionOpened);
    QVERIFY(w.openFile(path));
    QVERIFY(opened.wait(20000));
    QSignalSpy shown(&w, &MainWindow::attentionShown);
    // The toolbar's layer selector shows the layer index itself.
    w.setSource()->layerSelector()->setValue(1);
    QCOMPARE(w.setSource()->layerSelector()->text(), QStringLiteral("Layer 1"));
    QVERIFY(shown.wait(20000));
    QCOMPARE(w.setSource()->layer(), 1);
    w.views()->setCurrentHead(2);
    QCOMPARE(w.views()->headView()->data().title, QStringLiteral("Head 2"));
    const MatrixF shownMap = *w.views()->headView()->data().values;
    QVERIFY(shownMap.isApprox(set->map(0, 1, 2)));

    // The statistics table's row "layer 1, head 2" is the JSON's {"layer": 1, "head": 2}.
    QTRY_VERIFY_WITH_TIMEOUT(w.views()->statsTable()->isFilled(), 20000);
    const HeadStatsModel *model = w.views()->statsTable()->statsModel();
    int row = -1;
    for (int r = 0; r < model->rowCount(); ++r)
        if (model->index(r, HeadStatsModel::Layer).data().toInt() == 1 &&
            model->index(r, HeadStatsModel::Head).data().toInt() == 2)
            row = r;
    QVERIFY(row >= 0);
    QTemporaryDir tmp;
    const QString json = tmp.filePath(QStringLiteral("stats.json"));
    const auto stats = runCli({"stats", path, "--out", json});
    QVERIFY2(stats.code == 0, qPrintable(stats.err));
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    bool found = false;
    for (const QJsonValue v : QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String("stats")).toArray()) {
        const QJsonObject o = v.toObject();
        if (o.value(QLatin1String("layer")).toInt() == 1 && o.value(QLatin1String("head")).toInt() == 2) {
            found = true;
            QCOMPARE(model->index(row, HeadStatsModel::Entropy).data(Qt::UserRole).toDouble(),
                     o.value(QLatin1String("entropy")).toDouble());
        }
    }
    QVERIFY(found);

    // The window's figure of the head and the CLI's --layer 1 --head 2 figure carry one title.
    ExportFigureDialog *figure = w.figures()->showFigureDialog();
    QVERIFY(figure);
    chooseHeadView(figure);
    QCOMPARE(figure->options().head, 2);
    const QString guiSvg = tmp.filePath(QStringLiteral("gui.svg"));
    figure->setPath(guiSvg);
    QVERIFY2(figure->exportFigure(), qPrintable(figure->lastError()));
    figure->close();
    const QString guiTitle = test::readSvg(guiSvg).title;
    QVERIFY2(guiTitle.contains(QStringLiteral("layer 1, head 2")), qPrintable(guiTitle));
    const QString cliSvg = tmp.filePath(QStringLiteral("cli.svg"));
    const auto render = runCli({"render", path, "--view", "head", "--layer", "1", "--head", "2", "--out", cliSvg});
    QVERIFY2(render.code == 0, qPrintable(render.err));
    QCOMPARE(test::readSvg(cliSvg).title, guiTitle);
    const QString npy = tmp.filePath(QStringLiteral("head.npy"));
    const auto exported = runCli({"export", path, "--tensor", "weights", "--layer", "1", "--head", "2", "--out", npy});
    QVERIFY2(exported.code == 0, qPrintable(exported.err));
    QString why;
    QVERIFY2(npyHeadEquals(npy, 2, shownMap, &why), qPrintable(why));
}

QTEST_MAIN(TestHeadNumbering)
#include "tst_head_numbering.moc"
