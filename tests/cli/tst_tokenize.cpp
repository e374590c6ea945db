// attnscope-cli tokenize MODEL_DIR --text TEXT: design.md's {"ids": [...], "tokens": [...]} for
// GPT-2 and BERT model folders, checked against the fixtures' independent references
// (gpt-3-encoder; the Python WordPiece reference), and its usage errors.

#include "../common/CliRunner.h"
#include "../common/TestUtil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
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
