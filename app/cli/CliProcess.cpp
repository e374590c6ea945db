#include "app/cli/CliCommands.h"
#include "app/cli/TerminalOutput.h"
#include "app/engine/ProcessSetup.h"

#include <QCoreApplication>
#include <QGuiApplication>

#include <csignal>
#include <cstring>

#include <unistd.h>

namespace attnscope {

int runCliProcess(int argc, char *argv[], const CliHooks &hooks)
{
    configureProcessForTraces();
    // Past a file-size limit (ulimit -f) a write should fail with EFBIG, which the commands
    // report and clean up after, instead of the signal killing the process mid-file.
    std::signal(SIGXFSZ, SIG_IGN);
    cli::routeQtMessages();
    auto run = [&hooks] {
        QCoreApplication::setApplicationName("attnscope-cli");
        // Whatever a command prints reaches the terminal through terminalText().
        cli::TerminalOutput stdoutDevice(STDOUT_FILENO), stderrDevice(STDERR_FILENO);
        QTextStream out(&stdoutDevice);
        QTextStream err(&stderrDevice);
        const int code = runCli(QCoreApplication::arguments(), out, err, hooks);
        out.flush();
        err.flush();
        return code;
    };
    // Painting figures needs fonts and a QGuiApplication; the other commands stay headless
    // with QCoreApplication. Without a display, render uses the offscreen platform.
    if (argc > 1 && std::strcmp(argv[1], "render") == 0) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        QGuiApplication app(argc, argv);
        return run();
    }
    QCoreApplication app(argc, argv);
    return run();
}

} // namespace attnscope
