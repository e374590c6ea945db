// attnscope [FILE]: opens the project or attention file, or the built-in self-attention tutorial;
// attnscope --example-model: the built-in example model.

#include "app/engine/ProcessSetup.h"
#include "app/gui/document/ScriptedEdits.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>

int main(int argc, char *argv[])
{
    attnscope::configureProcessForTraces();
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.attnscope.AttnScope")); // icon on Wayland
    // The system's language (LANG=zh_CN.UTF-8) or View > Language's override, before any text is made.
    attnscope::installTranslators(attnscope::interfaceLocale(attnscope::languageSetting()));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "See every attention head."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("project"),
        QApplication::translate(
            "main", "A project (.attnscope.json) or an attention file (.npy, .npz, .safetensors) to open."));
    const QCommandLineOption exampleModel(
        QStringLiteral("example-model"),
        QApplication::translate("main", "Open the built-in example model (a small GPT-2) instead of a file."));
    parser.addOption(exampleModel);
    parser.process(app);

    attnscope::MainWindow window;
    const QStringList args = parser.positionalArguments();
    if (parser.isSet(exampleModel)) {
        // Loaded on a worker: the tutorial stands until the model's first run is shown, and
        // stays (with a message) when the model is not installed.
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
        if (!window.openExampleModel()) // the window says why too
            std::fprintf(stderr, "attnscope: %s\n", qPrintable(window.lastError()));
    } else if (!args.isEmpty() &&
               (attnscope::isAttentionFilePath(args.first().toStdString()) || QFileInfo(args.first()).isDir())) {
        // Read on a worker: the tutorial stands until the file is read, and stays if it cannot be.
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
        window.openFile(args.first());
    } else if (args.isEmpty() || !window.openFile(args.first()))
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
    window.show();
    // Copies of unsaved work left by a crash: offered now. ATTNSCOPE_TEST_* are for tests that
    // run this executable (tests/gui/tst_recovery.cpp): the answer to the offer, edits to
    // make, and a file to write the document's state to before quitting.
    const QByteArray answer = qgetenv("ATTNSCOPE_TEST_RECOVERY");
    window.offerRecovery(answer.isEmpty() ? std::nullopt : std::optional<bool>(answer == "recover"));
    if (const QString edits = qEnvironmentVariable("ATTNSCOPE_TEST_EDITS"); !edits.isEmpty())
        if (auto s = attnscope::applyScriptedEdits(*window.document(), edits); !s)
            std::fprintf(stderr, "%s\n", s.message().c_str());
    if (const QString dump = qEnvironmentVariable("ATTNSCOPE_TEST_DUMP"); !dump.isEmpty()) {
        if (auto s = attnscope::writeDocumentState(*window.document(), dump); !s)
            std::fprintf(stderr, "%s\n", s.message().c_str());
        // exit(), not quit(): quit() closes the windows first, and a modified document would ask.
        QTimer::singleShot(0, &app, [] { QCoreApplication::exit(0); });
    }
    return app.exec();
}
