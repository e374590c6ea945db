#pragma once

#include "core/Result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// The regular expressions of tokenizer.json's Split pre-tokenizers and Replace normalizers
// (Qwen's, Llama 3's, GPT-2's patterns), matched as the Rust `tokenizers` library matches them
// with Oniguruma: a backtracking matcher over code points where alternation takes the first
// branch that lets the whole pattern match (leftmost-first, not longest) and quantifiers are
// greedy unless followed by `?`. No std::regex (its ECMAScript grammar has no \p{..} and its
// speed depends on the standard library).
//
// Supported: literals and escapes (\t \n \r \f \v \e \0 \xHH \x{H..} \uHHHH, escaped
// punctuation), `.` (anything but \n), classes [...] with ranges, negation and the escapes
// below inside them, \s \S (White_Space), \d \D (\p{Nd}), \w \W (letters, marks, \p{Nd}, \p{Pc}),
// \p{X} \P{X} \p{^X} for the general categories and their one-letter groups (L, Lu, Ll, Lt, Lm,
// Lo, M, N, Nd, P, S, Z, C, ... and the long names Letter, Number, ...), groups (...) (?:...)
// (?i:...) (?i) (?-i:...), alternation, quantifiers ? * + {m} {m,} {m,n} (lazy with a trailing
// `?`), lookahead (?=...) (?!...), anchors ^ $ \A \z. Case-insensitive matching folds by the
// one-character lower case (and U+017F to s). Anything else (backreferences, lookbehind,
// possessive quantifiers, atomic groups, POSIX brackets) is refused by name when the pattern
// is compiled.
class TokenRegex
{
public:
    // Compiles `pattern` (UTF-8); the error says what is wrong and where, without a file name.
    static Result<TokenRegex> compile(std::string_view pattern);

    struct Match {
        std::size_t begin = 0, end = 0; // byte offsets into the text
    };
    // Every non-overlapping match, left to right, as Oniguruma's find_iter gives them: after an
    // empty match the search resumes one character further on. Text that is not valid UTF-8 is
    // matched with U+FFFD where it is invalid.
    std::vector<Match> findAll(std::string_view text) const;

    struct Program;

private:
    std::shared_ptr<const Program> m_program;
};

} // namespace attnscope
