#pragma once

#include "core/Result.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// Identities for the errors a user meets most (project files, attention files, memory
// refusals), so the app layer can show them translated. core/ has no Qt and keeps writing
// English messages; an Error made here also carries its code and arguments. The app holds the
// same English templates as translatable text (app/render/ErrorText.cpp) and tst_translations
// checks that both lists agree, so a template changed here without the app fails the suite.

struct ErrorTemplate {
    const char *code;    // stable: never reuse a code for another meaning
    const char *english; // %1..%9 are the arguments, in order
};

// Every code core/ uses, with its English template.
std::span<const ErrorTemplate> errorTemplates();
// The template for `code`, or nullptr.
const char *errorTemplate(std::string_view code);

// `english` with each %N (1..9) replaced by args[N-1]; a %N without an argument stays as it is.
std::string fillErrorTemplate(std::string_view english, const std::vector<std::string> &args);

// An Error whose message is the template of `code` filled with `args`.
Error codedError(const char *code, std::vector<std::string> args, ErrorKind kind = ErrorKind::InvalidInput);

// An Error whose template's %1 is `inner`'s message (a backend notice around a Vulkan error):
// `inner`'s code and arguments ride along after it (args: inner.message, inner.code,
// inner.args...), so that the app translates the sentence and the inner error both.
Error wrappingError(const char *code, const Error &inner, ErrorKind kind = ErrorKind::InvalidInput);

// `e` with `prefix` before its message (a file name, a member name), its code and arguments
// kept: the app translates the coded part and keeps the prefix as it is.
Error prefixedError(const std::string &prefix, Error e);

} // namespace attnscope
