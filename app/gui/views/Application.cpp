#include "app/gui/views/Application.h"

#include "app/engine/ProcessSetup.h"
#include "app/gui/views/Language.h"
#include "app/gui/views/MainWindow.h"
#include "core/formats/AttentionFile.h"
#include "core/formats/QkDump.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>

#include <cstdio>

namespace attnscope {

int runApplication(int argc, char *argv[], const StartupHooks &hooks)
{
    configureProcessForTraces();
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.attnscope.AttnScope")); // icon on Wayland
    // The system's language (LANG=zh_CN.UTF-8) or View > Language's override, before any text is made.
    installTranslators(interfaceLocale(languageSetting()));

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

    MainWindow window;
    const QStringList args = parser.positionalArguments();
    if (parser.isSet(exampleModel)) {
        // Loaded on a worker: the tutorial stands until the model's first run is shown, and
        // stays (with a message) when the model is not installed.
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
        if (!window.openExampleModel()) // the window says why too
            std::fprintf(stderr, "attnscope: %s\n", qPrintable(window.lastError()));
    } else if (!args.isEmpty() && (isAttentionFilePath(args.first().toStdString()) ||
                                   QkDump::isDump(args.first().toStdString()) || QFileInfo(args.first()).isDir())) {
        // Read on a worker: the tutorial stands until the file is read, and stays if it cannot be.
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
        window.openFile(args.first());
    } else if (args.isEmpty() || !window.openFile(args.first()))
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
    window.show();
    // Copies of unsaved work left by a crash: offered now.
    window.offerRecovery(hooks.recoveryAnswer);
    if (hooks.afterStart)
        hooks.afterStart(window);
    return app.exec();
}

} // namespace attnscope
