// Fuzz target for a Marian translation folder's readers: vocab.json, the .spm SentencePiece
// models (through Debian's libsentencepiece), config.json and the >>lang<< code rule. The first
// byte picks the reader (0: vocab.json, 1: a .spm beside a fixed vocabulary, 2: config.json, 3:
// text with language codes); the rest is its input. Each gives a tokenizer that encodes a fixed
// text with ids that spell their tokens, a config, or a one-line error. Never a crash, an
// exception or a hang.

#include "core/models/ModelConfig.h"
#include "core/tokenizers/MarianTokenizer.h"
#include "core/tokenizers/Tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void fail(const char *what)
{
    std::fprintf(stderr, "fuzz_marian: %s\n", what);
    std::abort();
}

void checkMessage(const std::string &message)
{
    for (unsigned char c : message)
        if (c < 0x20 || c == 0x7f)
            fail("an error message is not one clean line");
}

void checkEncoding(const attnscope::Tokenizer &t)
{
    const attnscope::Encoding e =
        t.encode(">>zho<< The transformer's attention</s>, 2024: ça va? 注意力 \xf0\x9f\x98\x80 \xff <pad>");
    if (e.ids.size() != e.tokens.size() || e.ids.size() != e.words.size())
        fail("ids, tokens and words differ in number");
    for (std::size_t i = 0; i < e.ids.size(); ++i)
        if (t.token(e.ids[i]) != e.tokens[i])
            fail("an id does not spell its token");
    (void)t.decode(e.ids);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    if (size == 0)
        return 0;
    const std::string_view input(reinterpret_cast<const char *>(data + 1), size - 1);
    switch (data[0] % 4) {
    case 0: {
        auto vocabulary = MarianVocabulary::fromJson(input, "vocab.json");
        if (!vocabulary) {
            checkMessage(vocabulary.message());
            return 0;
        }
        const MarianVocabulary &v = **vocabulary;
        for (std::int32_t id : {v.eos, v.unk, v.pad})
            if (id < 0 || std::size_t(id) >= v.tokens.size())
                fail("a special token's id is outside the vocabulary");
        return 0;
    }
    case 1: {
        static const auto vocabulary = MarianVocabulary::fromJson(
            R"({"</s>": 0, "<unk>": 1, ">>zho<<": 2, "▁The": 3, "▁a": 4, "<pad>": 5})", "vocab.json");
        if (!vocabulary)
            fail("the fixed vocabulary does not load");
        auto tokenizer = Tokenizer::marian(input, *vocabulary, "source.spm");
        if (!tokenizer) {
            checkMessage(tokenizer.message());
            return 0;
        }
        checkEncoding(*tokenizer);
        return 0;
    }
    case 2: {
        auto config = parseTranslationConfig(input, "config.json");
        if (!config) {
            checkMessage(config.message());
            return 0;
        }
        if (config->width % config->encoder.heads != 0 || config->width % config->decoder.heads != 0)
            fail("a config was accepted with heads that do not divide d_model");
        return 0;
    }
    default: {
        const std::string_view code = marianLanguageCode(input);
        if (!input.starts_with(code))
            fail("a language code is not where the text starts");
        if (withoutMarianLanguageCodes(input).size() + code.size() > input.size())
            fail("removing language codes made the text longer");
        return 0;
    }
    }
}
