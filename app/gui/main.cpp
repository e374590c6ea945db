// attnscope [PROJECT]: opens the project, or the built-in self-attention tutorial.

#include "app/engine/ProcessSetup.h"
#include "app/gui/views/MainWindow.h"

#include <QApplication>
#include <QCommandLineParser>

int main(int argc, char *argv[])
{
    attnscope::configureProcessForTraces();
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationName(QStringLiteral("AttnScope"));
    QApplication::setApplicationVersion(QStringLiteral(ATTNSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "See every attention head."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("project"),
                                 QApplication::translate("main", "An .attnscope.json project to open."));
    parser.process(app);

    attnscope::MainWindow window;
    const QStringList args = parser.positionalArguments();
    if (args.isEmpty() || !window.openFile(args.first()))
        window.openExample(QStringLiteral(":/examples/self-attention-tutorial.attnscope.json"));
    window.show();
    return app.exec();
}
