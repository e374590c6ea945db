#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnscope {

// The Unicode facts the tokenizers need, without Qt or ICU: core/ links neither, and the
// GPT-2 pre-tokenizer and BERT's basic tokenizer ask only a handful of questions (is this a
// letter, a number, punctuation, a nonspacing mark, a control; its lower case; its
// decomposition without accents). The answers come from core/tokenizers/UnicodeTables.inc, generated once
// from Python's unicodedata by scripts/make_unicode_tables.py and committed, so every build
// (and CI) classifies text the same way whatever ICU or Qt version the machine has.

// A code point's general category, coarsened to what the tokenizers branch on.
enum class UnicodeClass : std::uint8_t {
    Other,          // symbols (S*), separators (Z*), spacing and enclosing marks (Mc, Me)
    Letter,         // L*: \p{L} in GPT-2's pattern
    Number,         // N*: \p{N}
    Punctuation,    // P*
    NonspacingMark, // Mn: what accent stripping removes after NFD
    Control,        // C*: Cc, Cf, Cs, Co and unassigned (Cn)
};

UnicodeClass unicodeClass(char32_t c);

// The White_Space property (\s of GPT-2's pattern in Oniguruma, Python's `regex` and Rust):
// U+0009..000D, U+0020, U+0085, U+00A0, U+1680, U+2000..200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool isWhiteSpace(char32_t c);

// transformers' _is_chinese_char: the CJK Unified Ideographs blocks and their extensions and
// compatibility blocks. Hiragana, Katakana and Hangul are not in them: they form words.
bool isChineseCharacter(char32_t c);

// One decoded code point of UTF-8 text and the bytes it came from. Bytes that are not valid
// UTF-8 (a stray continuation byte, an overlong form, a surrogate, a cut-off sequence) come
// one at a time as U+FFFD with valid = false, so no input is refused and none is lost.
struct Utf8Char {
    char32_t value = 0;
    std::uint32_t length = 0; // bytes consumed, 1 to 4
    bool valid = false;
};
Utf8Char decodeUtf8(std::string_view text, std::size_t offset);

void appendUtf8(std::u32string_view chars, std::string &out);
void appendUtf8(char32_t c, std::string &out);

// Appends the lower case of c as Python's str.lower() and Rust's char::to_lowercase() give it
// for a single character (U+0130 becomes "i" + U+0307; no context such as Greek final sigma).
void appendLowerCase(char32_t c, std::u32string &out);

// Appends c's canonical decomposition (NFD) without its nonspacing marks: "é" gives "e",
// "ǖ" gives "u", a Hangul syllable its jamo, a nonspacing mark nothing. This is BERT's
// accent stripping one character at a time; it skips NFD's reordering of combining marks,
// which only matters for marks that are kept (Mc, Me), never in practice.
void appendWithoutAccents(char32_t c, std::u32string &out);

// A code point's general category, in the order of scripts/make_unicode_tables.py's CATEGORIES
// (\p{Lu}, \p{Nd}... of tokenizer.json's Split patterns ask for these).
enum class UnicodeCategory : std::uint8_t {
    Lu,
    Ll,
    Lt,
    Lm,
    Lo,
    Mn,
    Mc,
    Me,
    Nd,
    Nl,
    No,
    Pc,
    Pd,
    Ps,
    Pe,
    Pi,
    Pf,
    Po,
    Sm,
    Sc,
    Sk,
    So,
    Zs,
    Zl,
    Zp,
    Cc,
    Cf,
    Cs,
    Co,
    Cn
};
UnicodeCategory unicodeCategory(char32_t c);

// The canonical combining class (0 for starters).
int combiningClass(char32_t c);

// Unicode normalization forms (UAX #15) of a whole string, from the committed tables: full
// (recursive) canonical or compatibility decomposition, canonical ordering of combining marks,
// and, for NFC and NFKC, canonical composition (Hangul by formula). Quick path: text with no
// code point at or above U+00C0 is returned unchanged by every form except NFKC/NFKD of the
// few compatibility characters below it (U+00A0, U+00A8, U+00AA, U+00AF, U+00B2..U+00B5,
// U+00B8..U+00BE), which are decomposed as they should be.
enum class NormalizationForm { Nfc, Nfd, Nfkc, Nfkd };
std::u32string normalizeUnicode(std::u32string_view text, NormalizationForm form);

// Bytes as a reader can see them: valid UTF-8 as it is, each byte of an incomplete or invalid
// sequence as "\xHH" (upper-case hex), so the result is always valid text.
std::string legibleUtf8(std::string_view bytes);

} // namespace attnscope
