// attnscope-cli tokenize MODEL_DIR --text TEXT: design.md's {"ids": [...], "tokens": [...]} for
// GPT-2 and BERT model folders, checked against the fixtures' independent references
// (gpt-3-encoder; the Python WordPiece reference), and its usage errors.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace attnscope;

namespace {

QString fixture(const QString &name)
{
    return test::sourcePath("tests/fixtures/" + name);
}

// The reference's ids and tokens for a text, from a fixture's expected.json.
QJsonObject expectedCase(const QString &expectedJson, const QString &text, const QString &config = {})
{
    const QJsonArray cases = QJsonDocument::fromJson(test::readAll(expectedJson)).object().value("cases").toArray();
    for (const QJsonValue &c : cases) {
        const QJsonObject o = c.toObject();
        if (o.value("text").toString() == text && (config.isEmpty() || o.value("config").toString() == config))
            return QJsonObject{{"ids", o.value("ids")}, {"tokens", o.value("tokens")}};
    }
    return {};
}

// A model folder holding Qwen3's real tokenizer.json (stored xz-compressed) and
// tokenizer_config.json, with config.json's model_type.
bool makeQwenFolder(const QString &dir, const QByteArray &modelType)
{
    const QString source = fixture("tokenizers/qwen3");
    QProcess xz;
    xz.setStandardOutputFile(dir + "/tokenizer.json");
    xz.start("xz", {"-dc", source + "/tokenizer.json.xz"});
    if (!xz.waitForFinished(120000) || xz.exitCode() != 0)
        return false;
    QFile config(dir + "/config.json");
    if (!config.open(QIODevice::WriteOnly))
        return false;
    config.write("{\"model_type\": \"" + modelType + "\"}");
    return QFile::copy(source + "/tokenizer_config.json", dir + "/tokenizer_config.json");
}

QJsonArray asArray(const QJsonValue &v)
{
    return v.toArray();
}

} // namespace

class TestTokenize : public QObject
{
    Q_OBJECT

private slots:
    void printsTheReferenceIdsAndTokens_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expectedJson");
        QTest::addColumn<QString>("config");
        const QString gpt2 = fixture("gpt2-tokenizer"), gpt2Expected = fixture("gpt2-tokenizer/expected.json");
        const QString bertExpected = fixture("bert-tokenizer/expected.json");
        QTest::newRow("gpt2 words") << gpt2 << "Hello, world! How are you?" << gpt2Expected << "";
        QTest::newRow("gpt2 contractions")
            << gpt2 << "I'm sure you'll see they've done what we'd planned, isn't it? He's here, they're not."
            << gpt2Expected << "";
        QTest::newRow("gpt2 newlines") << gpt2 << "line one\nline two\n\nline four\n" << gpt2Expected << "";
        QTest::newRow("gpt2 emoji") << gpt2 << QString::fromUtf8("I love 🍕 and 🚀! 👍🏽 👨‍👩‍👧")
                                    << gpt2Expected << "";
        QTest::newRow("gpt2 Chinese") << gpt2 << QString::fromUtf8("我爱北京天安门。今天天气很好！") << gpt2Expected
                                      << "";
        QTest::newRow("gpt2 empty") << gpt2 << "" << gpt2Expected << "";
        QTest::newRow("bert uncased") << fixture("bert-tokenizer/uncased") << "Paris is the [MASK] of France."
                                      << bertExpected << "uncased";
        QTest::newRow("bert cased accents")
            << fixture("bert-tokenizer/cased") << QString::fromUtf8("Café déjà vu, naïve résumé, Zürich")
            << bertExpected << "cased";
        QTest::newRow("bert uncased accents")
            << fixture("bert-tokenizer/uncased") << QString::fromUtf8("Café déjà vu, naïve résumé, Zürich")
            << bertExpected << "uncased";
    }

    void printsTheReferenceIdsAndTokens()
    {
        QFETCH(QString, model);
        QFETCH(QString, text);
        QFETCH(QString, expectedJson);
        QFETCH(QString, config);
        const QJsonObject expected = expectedCase(expectedJson, text, config);
        QVERIFY2(!expected.isEmpty(), "the text is not among the fixture's cases");
        const auto r = test::runCli({"tokenize", model, "--text", text});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.err, QString());
        QVERIFY(r.out.endsWith('\n'));
        QCOMPARE(r.out.count('\n'), 1); // one line of JSON
        QJsonParseError error;
        const QJsonDocument got = QJsonDocument::fromJson(r.out.toUtf8(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(r.out));
        QCOMPARE(got.object().keys(), (QStringList{"ids", "tokens"}));
        QCOMPARE(got.object(), expected);
    }

    void errors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString gpt2 = fixture("gpt2-tokenizer");
        QTest::newRow("no model") << QStringList{"tokenize", "--text", "hi"} << 2
                                  << "tokenize: expected 1 argument (MODEL_DIR), found 0";
        QTest::newRow("two models") << QStringList{"tokenize", gpt2, gpt2, "--text", "hi"} << 2
                                    << "tokenize: expected 1 argument (MODEL_DIR), found 2";
        QTest::newRow("no text") << QStringList{"tokenize", gpt2} << 2 << "tokenize: --text TEXT is required";
        QTest::newRow("unknown option") << QStringList{"tokenize", gpt2, "--text", "a", "--bogus"} << 2
                                        << "Unknown option 'bogus'.";
        QTest::newRow("not a folder") << QStringList{"tokenize", "/nonexistent/m", "--text", "a"} << 1
                                      << "/nonexistent/m: not a folder";
        QTest::newRow("a folder without config.json") << QStringList{"tokenize", fixture("attention"), "--text", "a"}
                                                      << 1 << fixture("attention") + "/config.json: no such file";
    }

    void errors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        const auto r = test::runCli(args);
        QCOMPARE(r.code, code);
        QCOMPARE(r.out, QString());
        QVERIFY2(r.err.startsWith("attnscope-cli: "), qPrintable(r.err));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
    }

    void chatWrapsOneUserTurn()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(makeQwenFolder(dir.path(), "qwen3"));
        // make_expected.mjs encoded the two ChatML renderings (thinking on, then off) with
        // @huggingface/tokenizers; they are the fifth and fourth cases from the end.
        const QJsonArray cases = QJsonDocument::fromJson(test::readAll(fixture("tokenizers/qwen3/expected.json")))
                                     .object()
                                     .value("cases")
                                     .toArray();
        const QString user = QString::fromUtf8("Translate 你好 into English, please.");
        for (const bool think : {true, false}) {
            QStringList args{"tokenize", dir.path(), "--text", user, "--chat"};
            if (!think)
                args << "--no-think";
            const auto r = test::runCli(args);
            QCOMPARE(r.code, 0);
            QCOMPARE(r.err, QString());
            const QJsonObject got = QJsonDocument::fromJson(r.out.toUtf8()).object();
            const QJsonObject want = cases[cases.size() - (think ? 4 : 3)].toObject();
            QCOMPARE(asArray(got.value("ids")), asArray(want.value("idsWithoutSpecial")));
            QCOMPARE(got.keys(), (QStringList{"ids", "tokens", "words"}));
            QCOMPARE(got.value("tokens").toArray().first().toString(), QString("<|im_start|>"));
            QCOMPARE(got.value("words").toArray().first().toInt(), -1);
        }
        // Plain text through tokenizer.json gives what the JavaScript tokenizer gives.
        const auto plain = test::runCli({"tokenize", dir.path(), "--text", "Hello world"});
        QCOMPARE(plain.code, 0);
        QCOMPARE(asArray(QJsonDocument::fromJson(plain.out.toUtf8()).object().value("ids")),
                 asArray(cases[0].toObject().value("ids")));
    }

    void chatErrors()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(makeQwenFolder(dir.path(), "qwen2"));
        const auto think = test::runCli({"tokenize", dir.path(), "--text", "hi", "--chat", "--no-think"});
        QCOMPARE(think.code, 1);
        QVERIFY2(think.err.contains("--chat: --no-think: only Qwen3's chat template has a thinking switch"),
                 qPrintable(think.err));
        const auto gpt2 = test::runCli({"tokenize", fixture("gpt2-tokenizer"), "--text", "hi", "--chat"});
        QCOMPARE(gpt2.code, 1);
        QVERIFY2(gpt2.err.contains("--chat: model_type \"gpt2\" has no chat preset (Qwen, Llama 3 and Gemma have)"),
                 qPrintable(gpt2.err));
        QCOMPARE(gpt2.err.count('\n'), 1);
        const auto alone = test::runCli({"tokenize", dir.path(), "--text", "hi", "--no-think"});
        QCOMPARE(alone.code, 2);
        QVERIFY(alone.err.contains("tokenize: --no-think needs --chat"));
    }

    void helpListsTheCommand()
    {
        const auto r = test::runCli({"--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("tokenize MODEL_DIR --text TEXT"));
        const auto own = test::runCli({"tokenize", "--help"});
        QCOMPARE(own.code, 0);
        QVERIFY(own.out.contains("tokenize MODEL_DIR --text TEXT"));
    }
};

QTEST_GUILESS_MAIN(TestTokenize)
#include "tst_tokenize.moc"
