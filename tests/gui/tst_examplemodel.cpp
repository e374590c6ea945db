// The built-in example model (resources/models/tiny-gpt2, trained by its train.py) as the
// program finds it from the build tree: File > Examples > "Example model: tiny GPT-2" opens it,
// typed text runs through it, and every layer and head is in the model view. Registered only
// when the folder holds a trained model (tests/gui/CMakeLists.txt); whatever model is there is
// checked against its own config.json and tokenizer.

#include "app/gui/document/ExampleModel.h"
#include "app/gui/views/MainWindow.h"
#include "app/gui/views/ModelView.h"

#include "../common/TestUtil.h"

#include <QAction>
#include <QDir>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>

using namespace attnscope;

class TestExampleModel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void foundInTheSourceTree();
    void opensFromTheExamplesMenu();
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
    QVERIFY(w.isReadOnly());
    QVERIFY(w.windowTitle().startsWith(QStringLiteral("tiny-gpt2")));
    const std::string text = "The cat sat on the mat. The cat sat";
    w.modelTextEdit()->setText(QString::fromStdString(text));
    QVERIFY(shown.wait(60000));
    QCOMPARE(w.modelRun()->ids, model->encode(text)->ids);
    auto *view = w.findChild<ModelView *>(QStringLiteral("modelView"));
    QVERIFY(view);
    w.viewTabs()->setCurrentWidget(view);
    QTRY_VERIFY_WITH_TIMEOUT(view->isFilled(), 60000);
    QCOMPARE(view->layers(), model->config().layers);
    QCOMPARE(view->heads(), model->config().heads);
    QCOMPARE(w.attention()->set.layers(), model->config().layers);
    QCOMPARE(w.attention()->set.heads(), model->config().heads);
}

QTEST_MAIN(TestExampleModel)
#include "tst_examplemodel.moc"
