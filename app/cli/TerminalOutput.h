#pragma once

#include <QIODevice>

#include <string>

namespace attnscope::cli {

// attnscope-cli's stdout or stderr: everything a command prints passes through core's
// terminalText() on its way out, so that text from a file (a project's title, token labels, a
// file name in an error) can never steer the terminal (set its title, clear the screen) or
// break the one-line error contract, whichever call site prints it. Line breaks stay; a
// UTF-8 sequence cut between two writes is held back until its end arrives.
class TerminalOutput : public QIODevice
{
public:
    explicit TerminalOutput(int fd);
    ~TerminalOutput() override;

    bool isSequential() const override { return true; }

protected:
    qint64 readData(char *, qint64) override { return -1; }
    qint64 writeData(const char *data, qint64 size) override;

private:
    int m_fd;
    std::string m_pending; // the start of a UTF-8 sequence whose end has not arrived
};

// Qt's own messages (a qWarning inside Qt) go to stderr through terminalText() as well, and
// QStandardPaths's notes on the runtime directory not at all: Qt's platform start-up (render's
// QGuiApplication) looks for a Wayland socket there and, with XDG_RUNTIME_DIR unset, said so in a
// second stderr line beside the command's one-line error. The CLI never uses that directory.
// Call before the application object exists.
void routeQtMessages();

} // namespace attnscope::cli
