#include "app/cli/CliCommands.h"

#include <QCoreApplication>
#include <QGuiApplication>

#include <cstring>

#include <cstdio>
#include <malloc.h>

int main(int argc, char *argv[])
{
    // A trace holds H x Tq x Tk floats per tensor and every recompute replaces it. glibc would
    // hand those blocks back to the kernel on free and fault them in again, zero-filled, on the
    // next compute (about 15% of a 1024-token compute); keeping them in the heap avoids that.
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    auto run = [] {
        QCoreApplication::setApplicationName("attnscope-cli");
        QTextStream out(stdout);
        QTextStream err(stderr);
        const int code = attnscope::runCli(QCoreApplication::arguments(), out, err);
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
