#include "app/cli/ModelCommands.h"

#include "core/Tokenizer.h"

#include <QCommandLineParser>

#include <nlohmann/json.hpp>

namespace attnscope {

const char *const kTokenizeUsage = R"(  tokenize MODEL_DIR --text TEXT
      Print the ids and tokens of TEXT as the model folder's tokenizer (GPT-2
      or BERT) gives them, as JSON: {"ids": [...], "tokens": [...]}.
)";

namespace {

constexpr int kOk = 0, kFailed = 1, kUsage = 2;

} // namespace

int runTokenizeCommand(const QStringList &args, QTextStream &out, QTextStream &err)
{
    const auto fail = [&](const std::string &message, int code) {
        err << "attnscope-cli: " << QString::fromStdString(message) << "\n";
        err.flush();
        return code;
    };
    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.addHelpOption();
    parser.addOption({"text", "The text to tokenize.", "TEXT"});
    if (!parser.parse(args))
        return fail(parser.errorText().toStdString(), kUsage);
    if (parser.isSet("help")) {
        out << kTokenizeUsage;
        return kOk;
    }
    if (parser.positionalArguments().size() != 1)
        return fail("tokenize: expected 1 argument (MODEL_DIR), found " +
                        std::to_string(parser.positionalArguments().size()) + " (see --help)",
                    kUsage);
    if (!parser.isSet("text"))
        return fail("tokenize: --text TEXT is required", kUsage);
    auto tokenizer = loadTokenizer(parser.positionalArguments().front().toStdString());
    if (!tokenizer)
        return fail(tokenizer.message(), kFailed);
    const Encoding encoding = tokenizer->encode(parser.value("text").toStdString());
    nlohmann::ordered_json root = nlohmann::ordered_json::object();
    root["ids"] = encoding.ids;
    root["tokens"] = encoding.tokens;
    // Tokens are vocabulary keys, valid UTF-8 already; replace guards the dump all the same.
    out << QString::fromStdString(root.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) << "\n";
    return kOk;
}

} // namespace attnscope
