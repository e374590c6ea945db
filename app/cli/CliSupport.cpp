#include "app/cli/CliSupport.h"

#include "core/io/UserText.h"

#include <QFileInfo>

namespace attnscope::cli {

int fail(QTextStream &err, const QString &message, int code)
{
    err << "attnscope-cli: " << message << "\n";
    err.flush();
    return code;
}

int fail(QTextStream &err, const std::string &message, int code)
{
    return fail(err, QString::fromStdString(message), code);
}

std::optional<int> parseOnePositional(QCommandLineParser &parser, const QStringList &args, const char *command,
                                      const char *argumentName, const char *usage, QTextStream &out, QTextStream &err)
{
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.addHelpOption();
    if (!parser.parse(args))
        return fail(err, parser.errorText(), kUsage);
    if (parser.isSet("help")) {
        out << usage;
        return kOk;
    }
    if (parser.positionalArguments().size() != 1)
        return fail(err,
                    QStringLiteral("%1: expected 1 argument (%2), found %3 (see --help)")
                        .arg(QLatin1String(command), QLatin1String(argumentName))
                        .arg(parser.positionalArguments().size()),
                    kUsage);
    return std::nullopt;
}

std::optional<int> checkBeforeWriting(QTextStream &err, const FilesRead &read, const char *command,
                                      const Outputs &outputs)
{
    const auto shown = [](const std::string &text) { return QString::fromStdString(printableText(text, 200)); };
    for (const QString &file : outputs.files) {
        const auto input = read.find(file.toStdString());
        if (!input)
            continue;
        const QString replaced = shown(input->path);
        if (outputs.folder)
            return fail(err,
                        QStringLiteral("%1: --out %2: writing %3 there would replace %4, which this command read; "
                                       "choose another folder")
                            .arg(QLatin1String(command), shown(outputs.out.toStdString()),
                                 shown(QFileInfo(file).fileName().toStdString()), replaced),
                        kUsage);
        return fail(err,
                    QStringLiteral("%1: --out %2 would replace %3, which this command read; choose another name")
                        .arg(QLatin1String(command), shown(file.toStdString()), replaced),
                    kUsage);
    }
    return std::nullopt;
}

void reportBackend(QTextStream &out, BackendSelection &selection, bool transfers)
{
    out << "backend: " << QString::fromStdString(selection.backend->name()) << "\n"
        << "device: " << QString::fromStdString(selection.backend->deviceName()) << "\n";
    if (!selection.notice.empty())
        out << "note: " << QString::fromStdString(selection.notice) << "\n";
    // A fallback that happened during the work (Vulkan device lost, out of memory).
    if (const std::string late = takeBackendNotice(*selection.backend); !late.empty())
        out << "note: " << QString::fromStdString(late) << "\n";
    if (const auto t = selection.backend->transfers(); t && transfers)
        out << "vulkan: submissions " << t->submissions << ", uploaded " << t->uploaded << " bytes, read back "
            << t->readBack << " bytes\n";
}

} // namespace attnscope::cli
