#pragma once

// Runs the real attnscope-cli (ATTNSCOPE_CLI, defined for every suite by attnscope_add_test)
// and collects what a user would see.

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace attnscope::test {

struct CliRun {
    int code = -1; // the exit code; -1 timed out, -2 crashed
    QString out, err;
};

// Runs `program args` (attnscope-cli itself, or a wrapper such as prlimit around it).
inline CliRun runProgram(const QString &program, const QStringList &args, int timeoutMs = 240000,
                         const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(program, args);
    CliRun r;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    r.out = QString::fromUtf8(process.readAllStandardOutput());
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
}

// Whether `process` still runs. QProcess learns that its child ended only in its event loop or
// in a wait, so a loop that does neither would see state() say Running for ever: this polls.
inline bool isRunning(QProcess &process)
{
    return process.state() == QProcess::Running && !process.waitForFinished(0);
}

inline CliRun runCli(const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    return runProgram(QStringLiteral(ATTNSCOPE_CLI), args, 240000, env);
}

#ifdef ATTNSCOPE_CLI_FAULTS
// Runs attnscope-cli's test driver (tests/gpu/attnscope_cli_faults.cpp) with `fault` injected
// into every Vulkan backend it makes ("device-lost", "oom", ...): the product's binary takes no
// fault from its environment.
inline CliRun runCliWithVulkanFault(const QString &fault, const QStringList &args,
                                    QProcessEnvironment env = QProcessEnvironment::systemEnvironment())
{
    env.insert(QStringLiteral("ATTNSCOPE_TEST_VULKAN_FAULT"), fault);
    return runProgram(QStringLiteral(ATTNSCOPE_CLI_FAULTS), args, 240000, env);
}

// The same driver opening `loader` as the Vulkan loader instead of libvulkan.so.1 (a missing
// file, a library that is no loader).
inline CliRun runCliWithVulkanLoader(const QString &loader, const QStringList &args,
                                     QProcessEnvironment env = QProcessEnvironment::systemEnvironment())
{
    env.insert(QStringLiteral("ATTNSCOPE_TEST_VULKAN_LOADER"), loader);
    return runProgram(QStringLiteral(ATTNSCOPE_CLI_FAULTS), args, 240000, env);
}
#endif

} // namespace attnscope::test
