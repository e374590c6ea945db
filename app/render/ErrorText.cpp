#include "app/render/ErrorText.h"

#include "core/ErrorCode.h"

#include <QCoreApplication>

#include <algorithm>
#include <iterator>

namespace attnscope {

namespace {

struct Entry {
    const char *code;
    const char *english;
};

// The same templates as core/ErrorCode.cpp, for lupdate and the translators; tst_translations
// fails when the two lists differ.
const Entry kEntries[] = {
    {"project.expected", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2, found %3")},
    {"project.missing", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: missing (expected %2)")},
    {"project.format", QT_TRANSLATE_NOOP("attnscope::CoreError", "format: expected \"attnscope\", found %1")},
    {"project.version", QT_TRANSLATE_NOOP("attnscope::CoreError", "version: expected 1, found %1")},
    {"project.version.newer",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "version: expected 1, found %1 (written by a newer AttnScope)")},
    {"project.float32", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a finite float32 number, found %2")},
    {"project.matrix.empty",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected at least one row, found an empty matrix")},
    {"project.row.empty",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected at least one number, found an empty row")},
    {"project.row.length", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 numbers like row 0, found %3")},
    {"project.labels",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 labels (one per row of x), found %3")},
    {"project.mask.binary", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected 0 or 1, found %2")},
    {"value.atLeastOne",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a whole number of at least 1, found %2")},
    {"value.tooLarge", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: %2 is larger than the supported %3")},
    {"value.finite", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected a finite number, found %2")},
    {"validation.shape", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 (%3), found %4")},
    {"validation.vector", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected %2 values (%3), found %4")},
    {"validation.input.empty",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: expected at least one token and one dimension, found %2")},
    {"validation.oBias",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "weights.oBias: given without weights.o (an output bias needs an output projection)")},
    {"validation.keyPadding",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "mask.keyPadding: expected %1 values (one per key token), found %2")},
    {"validation.allowed", QT_TRANSLATE_NOOP("attnscope::CoreError", "mask.allowed: expected only 0 and 1, found %1")},
    {"memory.trace",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "size: this problem needs %1 for its intermediate tensors; this machine allows %2")},
    {"memory.refused",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "size: this problem needs %1 for %2; this machine allows %3")},
    {"file.open", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: cannot open the file")},
    {"file.open.reason", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: cannot open the file (%2)")},
    {"file.open.colon", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: cannot open the file: %2")},
    {"file.directory", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: is a directory, not a file")},
    {"file.tooLarge",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: the file is %2; files up to %3 can be read on this machine")},
    {"file.notRegular", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: not a regular file")},
    {"file.notText", QT_TRANSLATE_NOOP("attnscope::CoreError", "%1: not a text file (a NUL byte at offset %2)")},
    {"npy.magic", QT_TRANSLATE_NOOP("attnscope::CoreError", "not a .npy file (missing the \\x93NUMPY magic)")},
    {"npy.header.truncated", QT_TRANSLATE_NOOP("attnscope::CoreError", "truncated .npy header")},
    {"npy.dtype", QT_TRANSLATE_NOOP("attnscope::CoreError", "unsupported .npy dtype %1 (expected '<f4' or '<f8')")},
    {"attention.dtype",
     QT_TRANSLATE_NOOP(
         "attnscope::CoreError",
         "dtype %1 is not an attention dtype (expected '<f2', '<f4' or '<f8': little-endian float16, 32 or 64)")},
    {"attention.noArray", QT_TRANSLATE_NOOP("attnscope::CoreError", "no array named \"attentions\" among %1 (%2)")},
    {"attention.rank",
     QT_TRANSLATE_NOOP("attnscope::CoreError",
                       "shape %1: expected [layers, heads, queries, keys], [heads, queries, keys] or [queries, keys]")},
    {"attention.emptyAxis", QT_TRANSLATE_NOOP("attnscope::CoreError", "shape %1: every size must be at least 1")},
    {"attention.nonFinite",
     QT_TRANSLATE_NOOP("attnscope::CoreError", "value %1 (attention weights must be finite numbers)")},
};

// core's fixed phrases that arrive as arguments: what was expected, what a JSON value was,
// what a memory refusal was for. Listed for lupdate; an argument not listed stays as it is.
[[maybe_unused]] const char *const kTerms[] = {
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a whole number of at least 1"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a number"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a finite number"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix (an array of rows of numbers)"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix (an array of rows of numbers) or {\"npy\": \"file.npy\"}"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a row (an array of numbers)"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "{\"npy\": \"relative/path.npy\"} with nothing else"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array of numbers"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array of strings"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a string"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an object"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an object with \"tokens\" and \"x\""),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an object with q, k, v and o"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "true or false"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array of true/false (true = real token)"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a JSON object with \"format\": \"attnscope\""),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "one label per row of the matrix x"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "a matrix with one row per token"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "an array"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "nothing"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "query tokens x key tokens"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "its inputs and intermediate tensors"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "the attention values as float32"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "the CSV text"),
    QT_TRANSLATE_NOOP("attnscope::CoreErrorTerm", "the pooled computation"),
};

QString translatedArgument(const std::string &arg)
{
    const QString text = QString::fromStdString(arg);
    // typeName()'s two phrases with a value in them.
    for (const char *lead : {"the string ", "the number "}) {
        if (text.startsWith(QLatin1String(lead))) {
            const QString value = text.mid(int(std::char_traits<char>::length(lead)));
            return lead[4] == 's' ? QCoreApplication::translate("attnscope::CoreErrorTerm", "the string %1").arg(value)
                                  : QCoreApplication::translate("attnscope::CoreErrorTerm", "the number %1").arg(value);
        }
    }
    return QCoreApplication::translate("attnscope::CoreErrorTerm", arg.c_str());
}

// %1..%9 replaced in one pass, so an argument holding "%2" stays as it is.
QString fill(const QString &pattern, const QStringList &args)
{
    QString out;
    out.reserve(pattern.size() + 32);
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern[i];
        if (c == QLatin1Char('%') && i + 1 < pattern.size() && pattern[i + 1] >= QLatin1Char('1') &&
            pattern[i + 1] <= QLatin1Char('9')) {
            const qsizetype n = pattern[i + 1].unicode() - '1';
            if (n < args.size()) {
                out += args[n];
                ++i;
                continue;
            }
        }
        out += c;
    }
    return out;
}

} // namespace

QString errorText(const Error &error)
{
    const QString message = QString::fromStdString(error.message);
    if (error.code.empty())
        return message;
    const auto entry =
        std::find_if(std::begin(kEntries), std::end(kEntries), [&](const Entry &e) { return error.code == e.code; });
    const char *coreTemplate = errorTemplate(error.code);
    if (entry == std::end(kEntries) || !coreTemplate)
        return message;
    const std::string english = fillErrorTemplate(coreTemplate, error.args);
    if (error.message.size() < english.size() ||
        error.message.compare(error.message.size() - english.size(), english.size(), english) != 0)
        return message; // changed after it was made: the English text is all there is
    const QString prefix = QString::fromStdString(error.message.substr(0, error.message.size() - english.size()));
    QStringList args;
    for (const std::string &a : error.args)
        args << translatedArgument(a);
    return prefix + fill(QCoreApplication::translate("attnscope::CoreError", entry->english), args);
}

QList<ErrorTextTemplate> errorTextTemplates()
{
    QList<ErrorTextTemplate> out;
    for (const Entry &e : kEntries)
        out.append({QString::fromLatin1(e.code), QString::fromUtf8(e.english)});
    return out;
}

} // namespace attnscope
