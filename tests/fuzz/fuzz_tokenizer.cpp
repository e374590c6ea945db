// Fuzz target for the tokenizers' encode(): any bytes (invalid UTF-8, NULs, controls, lone
// surrogates) must tokenize without a crash, every id must spell its token, GPT-2's byte-level
// tokens must give back exactly the input bytes, and BERT's output must be [CLS] ... [SEP].
// The views' reading of token spellings (byte-level and SentencePiece) must keep one label and
// one word per token.
// The vocabularies are small and fixed, built here, so each run is fast.

#include "core/tokenizers/ByteLevelBpe.h"
#include "core/tokenizers/ByteLevelText.h"
#include "core/tokenizers/Tokenizer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace attnscope;

[[noreturn]] void fail(const char *what)
{
    std::fprintf(stderr, "fuzz_tokenizer: %s\n", what);
    std::abort();
}

void appendUtf8(char32_t c, std::string &out)
{
    if (c < 0x80) {
        out += char(c);
    } else { // the byte map stays below U+0800
        out += char(0xc0 | (c >> 6));
        out += char(0x80 | (c & 0x3f));
    }
}

// GPT-2's byte-to-unicode map, written out again from its definition.
std::map<std::string, unsigned char> byteOfSymbol()
{
    std::map<std::string, unsigned char> out;
    char32_t next = 256;
    for (unsigned b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
        std::string s;
        appendUtf8(printable ? char32_t(b) : next++, s);
        out[s] = static_cast<unsigned char>(b);
    }
    return out;
}

const std::map<std::string, unsigned char> &bytes()
{
    static const auto map = byteOfSymbol();
    return map;
}

Tokenizer makeGpt2()
{
    std::string vocab = "{";
    int id = 0;
    for (const auto &[symbol, byte] : bytes()) {
        vocab += '"';
        if (symbol == "\"" || symbol == "\\")
            vocab += '\\';
        vocab.append(symbol).append("\": ").append(std::to_string(id++)).append(", ");
    }
    const char *merged[] = {"Ġt", "he", "Ġthe", "in", "an", "er", "Ġa", "aa", "aaaa", "<|endoftext|>"};
    for (const char *m : merged)
        vocab.append("\"").append(m).append("\": ").append(std::to_string(id++)).append(m[0] == '<' ? "}" : ", ");
    auto t =
        Tokenizer::gpt2(vocab, "#version: 0.2\nĠ t\nh e\nĠt he\ni n\na n\ne r\nĠ a\na a\naa aa\n", "vocab", "merges");
    if (!t)
        fail(t.message().c_str());
    return std::move(*t);
}

Tokenizer makeBert(bool lowerCase)
{
    const char *vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n!\n,\n.\nthe\na\n##a\nb\n##b\nhello\n##s\nworld\n中\n文\n"
                        "cafe\ncafé\n";
    WordPieceOptions options;
    options.lowerCase = lowerCase;
    auto t = Tokenizer::bert(vocab, options, "vocab.txt");
    if (!t)
        fail(t.message().c_str());
    return std::move(*t);
}

void checkSpelling(const Tokenizer &t, const Encoding &e)
{
    if (e.ids.size() != e.tokens.size())
        fail("ids and tokens differ in number");
    for (std::size_t i = 0; i < e.ids.size(); ++i)
        if (t.token(e.ids[i]) != e.tokens[i])
            fail("an id does not spell its token");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const Tokenizer gpt2 = makeGpt2(), uncased = makeBert(true), cased = makeBert(false);
    const std::string text(reinterpret_cast<const char *>(data), size);

    std::string joined;
    for (std::string_view piece : gpt2PreTokenize(text)) {
        if (piece.empty())
            fail("an empty pre-token");
        joined += piece;
    }
    if (joined != text)
        fail("the pre-tokens do not cover the text exactly");

    const Encoding e = gpt2.encode(text);
    checkSpelling(gpt2, e);
    std::string back;
    for (const std::string &token : e.tokens) {
        if (token == "<|endoftext|>") {
            back += token;
            continue;
        }
        for (std::size_t at = 0; at < token.size();) {
            const std::size_t length = static_cast<unsigned char>(token[at]) < 0x80 ? 1 : 2;
            const auto it = bytes().find(token.substr(at, length));
            if (it == bytes().end())
                fail("a GPT-2 token holds a character outside the byte map");
            back += char(it->second);
            at += length;
        }
    }
    if (back != text)
        fail("GPT-2's tokens do not give back the input bytes");

    for (const Tokenizer *bert : {&uncased, &cased}) {
        const Encoding b = bert->encode(text);
        checkSpelling(*bert, b);
        if (b.tokens.size() < 2 || b.tokens.front() != "[CLS]" || b.tokens.back() != "[SEP]")
            fail("BERT's output is not [CLS] ... [SEP]");
    }

    // The views' reading of token spellings (labels from any file): the input's lines as
    // tokens, and GPT-2's own tokens; a reading has a label and a word per token, words in order.
    std::vector<std::string> lines;
    for (std::size_t from = 0; from <= text.size();) {
        const std::size_t end = std::min(text.find('\n', from), text.size());
        lines.push_back(text.substr(from, end - from));
        from = end + 1;
    }
    const std::vector<std::string> *readings[] = {&lines, &e.tokens};
    for (const std::vector<std::string> *tokens : readings)
        if (const auto pieces = readablePieces(*tokens)) {
            if (pieces->labels.size() != tokens->size() || pieces->wordOf.size() != tokens->size())
                fail("a reading of the tokens lost or added a token");
            for (std::size_t i = 0; i < pieces->wordOf.size(); ++i)
                if (pieces->wordOf[i] < 0 || std::size_t(pieces->wordOf[i]) >= pieces->words.size() ||
                    (i > 0 && pieces->wordOf[i] < pieces->wordOf[i - 1]))
                    fail("a reading's words are out of order");
        }
    return 0;
}
