#include "app/cli/CliCommands.h"

#include <QCoreApplication>

#include <cstdio>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("attnscope-cli");
    QTextStream out(stdout);
    QTextStream err(stderr);
    const int code = attnscope::runCli(QCoreApplication::arguments(), out, err);
    out.flush();
    err.flush();
    return code;
}
