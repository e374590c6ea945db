// Fuzz target for tokenizer.json (core/tokenizers/HfTokenizer.h) and its regex engine: any
// bytes must either be refused with a one-line message or load, and a loaded tokenizer must
// encode a few fixed texts (and the input's own first line) without a crash, every id within
// the vocabulary and spelling its token, one word index per token. The input's first line is
// also compiled as a Split regex and run over short texts.

#include "core/tokenizers/TokenRegex.h"
#include "core/tokenizers/Tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace attnscope;

[[noreturn]] void fail(const char *what)
{
    std::fprintf(stderr, "fuzz_tokenizerjson: %s\n", what);
    std::abort();
}

void checkEncoding(const Tokenizer &t, std::string_view text)
{
    for (const bool special : {true, false}) {
        const Encoding e = t.encode(text, special);
        if (e.tokens.size() != e.ids.size() || e.words.size() != e.ids.size())
            fail("ids, tokens and words differ in length");
        for (std::size_t k = 0; k < e.ids.size(); ++k) {
            if (e.ids[k] < 0 || e.ids[k] >= t.vocabularySize())
                fail("an id outside the vocabulary");
            const auto spelling = t.token(e.ids[k]);
            if (!spelling || *spelling != e.tokens[k])
                fail("a token that is not its id's spelling");
            (void)t.displayText(e.ids[k]);
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::string_view firstLine = input.substr(0, std::min<std::size_t>(input.find('\n'), 200));

    if (auto regex = TokenRegex::compile(firstLine)) {
        for (std::string_view text : {std::string_view("Hello, world! 123 "), std::string_view("a\r\n\tb  c"),
                                      std::string_view("\xe4\xbd\xa0\xe5\xa5\xbd \xff x")}) {
            std::size_t previous = 0;
            for (const TokenRegex::Match &m : regex->findAll(text)) {
                if (m.begin < previous || m.end < m.begin || m.end > text.size())
                    fail("matches out of order or outside the text");
                previous = m.end;
            }
        }
    } else if (regex.message().empty() || regex.message().find('\n') != std::string::npos) {
        fail("a regex refusal that is not one line");
    }

    auto tokenizer = Tokenizer::fromJson(input, "t.json");
    if (!tokenizer) {
        if (tokenizer.message().empty() || tokenizer.message().find('\n') != std::string::npos)
            fail("a refusal that is not one line");
        return 0;
    }
    checkEncoding(*tokenizer,
                  "Hello world 12345, you're here!\n\n  \xe4\xbd\xa0\xe5\xa5\xbd <|end|><s>[CLS] caf\xc3\xa9");
    checkEncoding(*tokenizer, "");
    checkEncoding(*tokenizer, "\xff\xfe invalid \xed\xa0\x80 bytes \x00 nul");
    checkEncoding(*tokenizer, firstLine.substr(0, 64));
    return 0;
}
