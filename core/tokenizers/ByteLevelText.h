#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attnscope {

// GPT-2's printable stand-in for each byte: the printable Latin-1 bytes stand for themselves,
// the others (controls, space, soft hyphen...) for U+0100 onwards in byte order ("Ġ" is the
// space, "Ċ" the newline).
char32_t byteToUnicode(unsigned b);
// The byte a stand-in stands for, or -1 for a code point that stands for none.
int unicodeToByte(char32_t c);

// Byte-level BPE tokens ("Ġworld", "æĪ", "ĳ") as a reader sees them. A token is a run of bytes,
// and a character of the text (a CJK character is three bytes) may be cut between tokens:
//   labels: each token's text, its spaces shown as "␣" (a newline "↵", a tab "⇥", other controls
//           as their control pictures), and "…" where a character is cut: the token holding the
//           first bytes of 我 reads "我…", the one holding the rest "…我";
//   wordOf: the word of each token (non-decreasing from 0): a token continues the word before
//           it when it holds the rest of a character cut there, or when it starts with no space
//           and neither it nor the token before is a special token or punctuation, except
//           between Chinese characters (each is a word of its own, as BERT splits them);
//   words:  each word's text, its pieces joined (cut characters whole) and its leading space
//           dropped.
// Special tokens ("<|endoftext|>") stay as they are, words of their own.
struct ByteLevelPieces {
    std::vector<std::string> labels;
    std::vector<int> wordOf;
    std::vector<std::string> words;
};

// Nothing when the tokens are not byte-level spellings: a token that is not made of stand-ins,
// no token with a stand-in for a space, a control or a byte above 0x7F (plain ASCII reads the
// same either way), or bytes that do not join into valid UTF-8 between special tokens.
std::optional<ByteLevelPieces> byteLevelPieces(const std::vector<std::string> &tokens);

// The same for SentencePiece spellings (Llama 2, Mistral, Gemma): "▁" is a space, and a
// byte-fallback piece "<0xE4>" is its byte, so the three pieces of 你 read "你…", "…你…", "…你".
// Nothing when no token has a "▁" or is a byte piece, or when the bytes do not join into valid
// UTF-8 between special tokens.
std::optional<ByteLevelPieces> sentencePiecePieces(const std::vector<std::string> &tokens);

// byteLevelPieces, else sentencePiecePieces.
std::optional<ByteLevelPieces> readablePieces(const std::vector<std::string> &tokens);

} // namespace attnscope
