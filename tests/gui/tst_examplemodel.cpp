// The built-in example model (resources/models/tiny-gpt2, trained by its train.py) as the
// program finds it from the build tree: File > Examples > "Example model: tiny GPT-2" opens it,
// typed text runs through it, and every layer and head is in the model view. Registered only
// when the folder holds a trained model (tests/gui/CMakeLists.txt); whatever model is there is
// checked against its own config.json and tokenizer.

#include "app/gui/document/ExampleModel.h"
#include "app/gui/sources/ModelRunSource.h"
#include "app/gui/sources/SetSource.h"
#include "app/gui/views/AttentionViews.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"
#include "core/attention/CpuBackend.h"

#include "../common/TestUtil.h"

#include <QAction>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>

#include <algorithm>
#include <optional>

using namespace attnscope;

class TestExampleModel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void foundInTheSourceTree();
    void opensFromTheExamplesMenu();
    void headsDoWhatTheReadmeSays();
};

void TestExampleModel::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_examplemodel"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("compute/backend"), int(BackendRequest::Cpu));
    qunsetenv("ATTNSCOPE_EXAMPLE_MODEL");
}

void TestExampleModel::foundInTheSourceTree()
{
    // Not installed here (no share/ beside the test), so the source tree's folder it is.
    QCOMPARE(exampleModelDir(), QDir::cleanPath(test::sourcePath(QStringLiteral("resources/models/tiny-gpt2"))));
}

void TestExampleModel::opensFromTheExamplesMenu()
{
    const QString dir = exampleModelDir();
    auto model = TransformerModel::load(dir.toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    MainWindow w;
    w.show();
    auto *action = w.findChild<QAction *>(QStringLiteral("exampleModel"));
    QVERIFY(action && action->isEnabled());
    QSignalSpy shown(&w, &MainWindow::modelRunShown);
    action->trigger();
    QVERIFY(shown.wait(60000));
    QVERIFY(w.setSource());
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("tiny-gpt2")));
    // The box says what it is for, and the heads worth a look are named beside it (its README's).
    QVERIFY(w.modelSource()->textEdit()->isVisible());
    QVERIFY(w.modelSource()->textEdit()->placeholderText().contains(QStringLiteral("the model reads it")));
    QVERIFY(w.modelSource()->hintLabel()->isVisible());
    QVERIFY2(w.modelSource()->hintLabel()->text().contains(QStringLiteral("layer 1 head 0")),
             qPrintable(w.modelSource()->hintLabel()->text()));
    const std::string text = "The cat sat on the mat. The cat sat";
    w.modelSource()->textEdit()->setText(QString::fromStdString(text));
    QVERIFY(shown.wait(60000));
    QCOMPARE(w.modelSource()->run()->ids, model->encode(text)->ids);
    auto *view = w.findChild<ModelView *>(QStringLiteral("modelView"));
    QVERIFY(view);
    w.views()->tabs()->setCurrentWidget(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isFilled(), 60000);
    QCOMPARE(view->layers(), model->config().layers);
    QCOMPARE(view->heads(), model->config().heads);
    QCOMPARE(w.setSource()->attention()->set.layers(), model->config().layers);
    QCOMPARE(w.setSource()->attention()->set.heads(), model->config().heads);
}

// resources/models/tiny-gpt2/README.md names a previous-token head (layer 0, head 3) and
// induction heads (layer 1); these are the same measures as its analyse_heads.py.
void TestExampleModel::headsDoWhatTheReadmeSays()
{
    auto model = TransformerModel::load(exampleModelDir().toStdString());
    QVERIFY2(model, model ? "" : model.message().c_str());
    CpuBackend cpu;
    // Per head: the mean weight of each query on the token just before it, and the mean weight of
    // each query in the second copy on the token after the latest earlier occurrence of its token.
    struct Measures {
        double previous[3][4] = {};
        double induction[3][4] = {};
    };
    auto measure = [&](const std::string &once) -> std::optional<Measures> {
        auto input = model->encode(once + " " + once);
        auto run = input ? model->forward(*input, cpu) : Result<std::shared_ptr<const ModelRun>>(input.error());
        if (!run || (*run)->layers != 3 || (*run)->heads != 4)
            return std::nullopt;
        const auto &ids = (*run)->ids;
        const int t = int(ids.size());
        Measures m;
        for (int l = 0; l < 3; ++l)
            for (int h = 0; h < 4; ++h) {
                const auto a = (*run)->attention(l, h);
                for (int i = 1; i < t; ++i)
                    m.previous[l][h] += a(i, i - 1) / (t - 1);
                int n = 0;
                for (int i = t / 2 + 1; i < t; ++i)
                    for (int j = i - 1; j > 0; --j)
                        if (ids[j - 1] == ids[i]) {
                            m.induction[l][h] += a(i, j);
                            ++n;
                            break;
                        }
                m.induction[l][h] /= std::max(n, 1);
            }
        return m;
    };
    // The README's sentence, and a paragraph of the kind the model was trained on.
    const auto cat = measure("The cat sat on the mat.");
    const auto docs = measure("When you run a Python script, the interpreter reads the file, compiles it to byte "
                              "code and runs it. A list is a mutable sequence; a tuple is an immutable one.");
    QVERIFY(cat && docs);
    for (const Measures *m : {&*cat, &*docs})
        for (int l = 0; l < 3; ++l)
            qInfo("layer %d: previous %.3f %.3f %.3f %.3f, induction %.3f %.3f %.3f %.3f", l, m->previous[l][0],
                  m->previous[l][1], m->previous[l][2], m->previous[l][3], m->induction[l][0], m->induction[l][1],
                  m->induction[l][2], m->induction[l][3]);
    for (const Measures *m : {&*cat, &*docs}) {
        QVERIFY2(m->previous[0][3] > 0.3,
                 qPrintable(QStringLiteral("layer 0 head 3 previous: %1").arg(m->previous[0][3])));
        double elsewhere = 0; // the strongest induction weight outside layer 1
        for (int h = 0; h < 4; ++h) {
            QVERIFY2(h == 3 || m->previous[0][h] < 0.5 * m->previous[0][3], "layer 0 has another previous-token head");
            elsewhere = std::max({elsewhere, m->induction[0][h], m->induction[2][h]});
        }
        for (int h = 0; h < 4; ++h)
            QVERIFY2(m->induction[1][h] > 2 * elsewhere,
                     qPrintable(QStringLiteral("layer 1 head %1 induction: %2, outside layer 1 up to %3")
                                    .arg(h)
                                    .arg(m->induction[1][h])
                                    .arg(elsewhere)));
    }
    for (int h = 0; h < 4; ++h) {
        QVERIFY2(cat->induction[1][h] > 0.3,
                 qPrintable(QStringLiteral("layer 1 head %1: %2").arg(h).arg(cat->induction[1][h])));
        QVERIFY2(docs->induction[1][h] > 0.1,
                 qPrintable(QStringLiteral("layer 1 head %1: %2").arg(h).arg(docs->induction[1][h])));
        QVERIFY2(cat->induction[1][0] >= cat->induction[1][h], "layer 1 head 0 is not the strongest induction head");
    }
}

QTEST_MAIN(TestExampleModel)
#include "tst_examplemodel.moc"
