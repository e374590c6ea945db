#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnscope {

// Text that came from outside (a file's strings and keys, a path, a .npy header) made safe to
// put in a one-line message: control characters, DEL, invalid UTF-8 and the code points that
// steer a terminal or break a line (C1 controls, U+2028/2029, bidirectional overrides) are
// written as \xNN or \uNNNN escapes, a backslash as "\\", and the result is cut at about
// maxBytes with "..." so a 100 MB string never reaches the terminal whole.
std::string printableText(std::string_view text, std::size_t maxBytes = 60);

// printableText() in double quotes, with '"' escaped: `the string "a\x1b[2Jb"`.
std::string quotedText(std::string_view text, std::size_t maxBytes = 60);

} // namespace attnscope
