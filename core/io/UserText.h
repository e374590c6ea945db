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

// Text as it may reach a terminal (attnscope-cli's stdout and stderr pass through this): the
// characters printableText() escapes are escaped, except that a line break stays one, and as
// \uNNNN ("\u001b"), so JSON text stays valid JSON of the same strings; an invalid UTF-8 byte
// becomes \xNN. A backslash stays as it is (JSON's own escapes survive) and nothing is cut.
std::string terminalText(std::string_view text);

// How many bytes at the end of `text` are the start of a UTF-8 sequence that is not complete
// yet (0 to 3): a stream filtered in chunks holds them back until the rest arrives.
std::size_t incompleteUtf8Tail(std::string_view text);

} // namespace attnscope
