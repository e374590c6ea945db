// Fuzz target for the tokenizer file readers: GPT-2's vocab.json + merges.txt and BERT's
// vocab.txt, as a model folder holds them. The input is split at its first NUL byte into the
// vocabulary and the merges; both readers must give a tokenizer that encodes a fixed text with
// ids that spell their tokens, or a one-line error. Never a crash, an exception or a hang.

#include "core/tokenizers/Tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void checkMessage(const std::string &message)
{
    for (unsigned char c : message)
        if (c < 0x20 || c == 0x7f) {
            std::fprintf(stderr, "fuzz_tokenizerfiles: error message is not one clean line: %s\n", message.c_str());
            std::abort();
        }
}

void checkEncoding(const attnscope::Tokenizer &t)
{
    const attnscope::Encoding e = t.encode("The transformer's attention, 2024: ça va? 注意力 \xf0\x9f\x98\x80 \xff");
    if (e.ids.size() != e.tokens.size()) {
        std::fprintf(stderr, "fuzz_tokenizerfiles: ids and tokens differ in number\n");
        std::abort();
    }
    for (std::size_t i = 0; i < e.ids.size(); ++i)
        if (t.token(e.ids[i]) != e.tokens[i]) {
            std::fprintf(stderr, "fuzz_tokenizerfiles: an id does not spell its token\n");
            std::abort();
        }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view vocab = input.substr(0, nul);
    const std::string_view merges = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);

    auto gpt2 = Tokenizer::gpt2(vocab, merges, "vocab.json", "merges.txt");
    if (gpt2)
        checkEncoding(*gpt2);
    else
        checkMessage(gpt2.message());

    auto bert = Tokenizer::bert(vocab, WordPieceOptions{}, "vocab.txt");
    if (bert)
        checkEncoding(*bert);
    else
        checkMessage(bert.message());
    return 0;
}
