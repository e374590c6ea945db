// The application as tests/gui/tst_autosave.cpp runs it: the product's start-up
// (runApplication) with the test hooks the product's binary does not carry, read from the
// environment:
//   ATTNSCOPE_TEST_RECOVERY=recover|keep  answers the recovery offer without asking
//   ATTNSCOPE_TEST_EDITS=SCRIPT           edits the document (ScriptedEdits.h)
//   ATTNSCOPE_TEST_DUMP=FILE              writes the document's state to FILE, then quits

#include "ScriptedEdits.h"

#include "app/gui/views/Application.h"
#include "app/gui/views/MainWindow.h"

#include <QCoreApplication>
#include <QTimer>

#include <cstdio>

int main(int argc, char *argv[])
{
    using namespace attnscope;
    StartupHooks hooks;
    if (const QByteArray answer = qgetenv("ATTNSCOPE_TEST_RECOVERY"); !answer.isEmpty())
        hooks.recoveryAnswer = answer == "recover";
    const QString edits = qEnvironmentVariable("ATTNSCOPE_TEST_EDITS");
    const QString dump = qEnvironmentVariable("ATTNSCOPE_TEST_DUMP");
    hooks.afterStart = [edits, dump](MainWindow &window) {
        if (!edits.isEmpty())
            if (auto s = applyScriptedEdits(*window.document(), edits); !s)
                std::fprintf(stderr, "%s\n", s.message().c_str());
        if (!dump.isEmpty()) {
            if (auto s = writeDocumentState(*window.document(), dump); !s)
                std::fprintf(stderr, "%s\n", s.message().c_str());
            // exit(), not quit(): quit() closes the windows first, and a modified document would ask.
            QTimer::singleShot(0, qApp, [] { QCoreApplication::exit(0); });
        }
    };
    return runApplication(argc, argv, hooks);
}
