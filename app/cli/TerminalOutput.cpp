#include "app/cli/TerminalOutput.h"

#include "core/io/UserText.h"

#include <QString>
#include <QtGlobal>

#include <cerrno>

#include <unistd.h>

namespace attnscope::cli {

namespace {

void writeAll(int fd, const std::string &bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; // a closed pipe or a full disk: nothing more can be said there
        done += std::size_t(n);
    }
}

} // namespace

TerminalOutput::TerminalOutput(int fd) : m_fd(fd)
{
    QIODevice::open(QIODevice::WriteOnly | QIODevice::Unbuffered);
}

TerminalOutput::~TerminalOutput()
{
    if (!m_pending.empty())
        writeAll(m_fd, terminalText(m_pending)); // a sequence that never ended: its bytes as \xNN
}

qint64 TerminalOutput::writeData(const char *data, qint64 size)
{
    m_pending.append(data, std::size_t(size));
    const std::size_t keep = incompleteUtf8Tail(m_pending);
    writeAll(m_fd, terminalText(std::string_view(m_pending).substr(0, m_pending.size() - keep)));
    m_pending.erase(0, m_pending.size() - keep);
    return size;
}

void routeQtMessages()
{
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &context, const QString &message) {
        if (type == QtWarningMsg && message.startsWith(QLatin1String("QStandardPaths: ")))
            return;
        writeAll(STDERR_FILENO, terminalText(qFormatLogMessage(type, context, message).toStdString()) + "\n");
    });
}

} // namespace attnscope::cli
