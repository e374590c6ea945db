// Benchmark (prints figures, not a test): encode() on long texts with the real GPT-2
// vocabulary and the BERT fixture vocabulary. English-like prose repeats words (the per-call
// cache helps); random letter words do not; one word of a million random letters is the
// worst case for BPE merging.
//   bench_tokenizer SOURCE_DIR

#include "core/tokenizers/Tokenizer.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

using namespace attnscope;

namespace {

void time(const char *name, const Tokenizer &t, const std::string &text)
{
    double best = 1e300;
    std::size_t tokens = 0;
    for (int repeat = 0; repeat < 3; ++repeat) {
        const auto start = std::chrono::steady_clock::now();
        tokens = t.encode(text).ids.size();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::printf("%-34s %8.2f MB  %9zu tokens  %8.1f ms  %6.1f MB/s  %6.2f M tokens/s\n", name, text.size() / 1e6,
                tokens, best * 1e3, text.size() / 1e6 / best, tokens / 1e6 / best);
}

} // namespace

int main(int argc, char *argv[])
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: bench_tokenizer SOURCE_DIR\n");
        return 2;
    }
    const std::string root = argv[1];
    auto gpt2 = loadTokenizer(root + "/tests/fixtures/gpt2-tokenizer");
    auto bert = loadTokenizer(root + "/tests/fixtures/bert-tokenizer/uncased");
    if (!gpt2 || !bert) {
        std::fprintf(stderr, "%s\n", (!gpt2 ? gpt2 : bert).message().c_str());
        return 1;
    }
    const std::string sentence = "Attention is all you need. Transformers replaced recurrence with self-attention, "
                                 "letting every token look at every other token in a single step; it's 2017 and "
                                 "they've shown 28.4 BLEU on WMT'14 English-to-German.\n";
    std::string prose;
    while (prose.size() < 1000000)
        prose += sentence;
    std::mt19937 random(1);
    std::string words, letters;
    while (words.size() < 1000000) {
        const int length = 2 + int(random() % 9);
        words += ' ';
        for (int i = 0; i < length; ++i)
            words += char('a' + random() % 26);
    }
    while (letters.size() < 1000000)
        letters += char('a' + random() % 26);
    time("gpt2: English prose", *gpt2, prose);
    time("gpt2: random words", *gpt2, words);
    time("gpt2: one 1 MB word", *gpt2, letters);
    time("bert: English prose", *bert, prose);
    time("bert: random words", *bert, words);
    return 0;
}
