#pragma once

#include "core/Result.h"

#include <QList>
#include <QString>

namespace attnscope {

// An Error from core/ in the interface's language. core/ writes English and gives the errors a
// user meets most a code and arguments (core/ErrorCode.h); here each code has the same English
// template as translatable text (context "attnscope::CoreError"). Arguments that are core's fixed
// phrases ("a whole number of at least 1", "an array") are translated too (context
// "attnscope::CoreErrorTerm"); field names, numbers and file names stay as they are. A prefix the
// message gained after it was made (a file name) is kept. An Error without a known code, or whose
// message no longer ends with its template's text, is shown as its English message.
QString errorText(const Error &error);

// Every code with the English template this file translates, for the test that compares them
// with core's list.
struct ErrorTextTemplate {
    QString code;
    QString english;
};
QList<ErrorTextTemplate> errorTextTemplates();

} // namespace attnscope
