#include "app/cli/CliSupport.h"

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

} // namespace attnscope::cli
