#include "core/tokenizers/MarianTokenizer.h"

#include "core/io/JsonDocument.h"
#include "core/io/UserText.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <exception>

namespace attnscope {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81"; // U+2581, SentencePiece's word start

// The end of a match of ">>.+<<" starting at `at` (where text has ">>"), or npos: the last "<<"
// on the same line with at least one character between.
std::size_t codeEnd(std::string_view text, std::size_t at)
{
    std::size_t lineEnd = text.find('\n', at + 2);
    if (lineEnd == std::string_view::npos)
        lineEnd = text.size();
    const std::string_view line = text.substr(0, lineEnd);
    const std::size_t close = line.rfind("<<");
    if (close == std::string_view::npos || close < at + 3)
        return std::string_view::npos;
    return close + 2;
}

} // namespace

std::string_view marianLanguageCode(std::string_view text)
{
    if (!text.starts_with(">>"))
        return {};
    const std::size_t end = codeEnd(text, 0);
    return end == std::string_view::npos ? std::string_view() : text.substr(0, end);
}

std::string withoutMarianLanguageCodes(std::string_view text)
{
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t open = text.find(">>", at);
        if (open == std::string_view::npos)
            break;
        const std::size_t end = codeEnd(text, open);
        if (end == std::string_view::npos) {
            out.append(text.substr(at, open + 1 - at));
            at = open + 1;
            continue;
        }
        out.append(text.substr(at, open - at));
        at = end;
    }
    out.append(text.substr(std::min(at, text.size())));
    return out;
}

Result<std::shared_ptr<const MarianVocabulary>> MarianVocabulary::fromJson(std::string_view json,
                                                                           const std::string &shownName)
{
    auto document = parseJsonDocument(json, JsonLimits{4, 1 << 24});
    if (!document)
        return Error{shownName + ": " + document.message(), document.kind()};
    if (!document->is_object())
        return Error{shownName + ": expected an object of tokens and their ids ({\"token\": id, ...})"};
    auto v = std::make_shared<MarianVocabulary>();
    const std::size_t n = document->size();
    v->tokens.resize(n);
    std::vector<bool> given(n, false);
    for (auto &[token, id] : document->items()) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= std::int64_t(n))
            return Error{shownName + ": " + quotedText(token) + ": expected an id from 0 to " + std::to_string(n - 1) +
                         " (one per token), found " + printableText(id.dump(), 40)};
        const auto value = std::size_t(id.get<std::int64_t>());
        if (given[value])
            return Error{shownName + ": the id " + std::to_string(value) + " is given to both " +
                         quotedText(v->tokens[value]) + " and " + quotedText(token)};
        given[value] = true;
        v->tokens[value] = token;
        v->ids.emplace(token, std::int32_t(value)); // keys are unique: the parser refuses duplicates
    }
    for (const auto &[spelling, slot, what] :
         {std::tuple{"</s>", &v->eos, "the end of a sentence"}, std::tuple{"<unk>", &v->unk, "pieces it does not list"},
          std::tuple{"<pad>", &v->pad, "padding"}}) {
        const auto it = v->ids.find(spelling);
        if (it == v->ids.end())
            return Error{shownName + ": no " + quotedText(spelling) + " token (Marian's token for " + what + ")"};
        *slot = it->second;
    }
    return std::shared_ptr<const MarianVocabulary>(std::move(v));
}

Result<MarianSentencePiece> MarianSentencePiece::create(std::string_view spmModel,
                                                        std::shared_ptr<const MarianVocabulary> vocabulary,
                                                        const std::string &shownSpmName)
{
    auto processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
    std::string why;
    try {
        const auto status = processor->LoadFromSerializedProto(spmModel);
        if (!status.ok()) {
            why = status.message();
            if (why.empty())
                why = "not a SentencePiece model";
        }
    } catch (const std::exception &e) {
        // libsentencepiece 0.1.97 throws from its trie builder on a piece of no bytes (darts:
        // "zero-length key") instead of returning a status.
        why = std::string("not a usable SentencePiece model: ") + e.what();
    }
    if (!why.empty())
        return Error{shownSpmName + ": " + printableText(why, 200)};
    MarianSentencePiece t;
    t.m_processor = std::move(processor);
    t.m_vocabulary = std::move(vocabulary);
    return t;
}

void MarianSentencePiece::encodePiece(std::string_view text, int &word, Encoding &out) const
{
    const MarianVocabulary &v = *m_vocabulary;
    const auto idOf = [&](const std::string &piece) {
        const auto it = v.ids.find(piece);
        return it == v.ids.end() ? v.unk : it->second;
    };
    if (const std::string_view code = marianLanguageCode(text); !code.empty()) {
        out.ids.push_back(idOf(std::string(code)));
        out.tokens.push_back(v.tokens[std::size_t(out.ids.back())]);
        out.words.push_back(-1);
    }
    std::vector<std::string> pieces;
    if (!m_processor->Encode(withoutMarianLanguageCodes(text), &pieces).ok())
        pieces.clear(); // Encode fails only on a processor that did not load
    for (const std::string &piece : pieces) {
        if (piece.starts_with(kSpace) || word < 0 || out.words.empty() || out.words.back() < 0)
            ++word;
        out.ids.push_back(idOf(piece));
        out.tokens.push_back(v.tokens[std::size_t(out.ids.back())]);
        out.words.push_back(word);
    }
}

void MarianSentencePiece::encode(std::string_view text, bool addSpecialTokens, Encoding &out) const
{
    const MarianVocabulary &v = *m_vocabulary;
    const std::string_view specials[] = {"</s>", "<unk>", "<pad>"};
    int word = -1;
    std::size_t at = 0;
    while (at <= text.size()) {
        // The first special token from `at` (none of them is a prefix of another).
        std::size_t next = std::string_view::npos;
        std::string_view which;
        for (std::string_view s : specials)
            if (const std::size_t p = text.find(s, at); p < next)
                next = p, which = s;
        const std::string_view stretch = text.substr(at, (next == std::string_view::npos ? text.size() : next) - at);
        if (!stretch.empty())
            encodePiece(stretch, word, out);
        if (next == std::string_view::npos)
            break;
        out.ids.push_back(v.ids.at(std::string(which)));
        out.tokens.emplace_back(which);
        out.words.push_back(-1);
        at = next + which.size();
    }
    if (addSpecialTokens) {
        out.ids.push_back(v.eos);
        out.tokens.push_back(v.tokens[std::size_t(v.eos)]);
        out.words.push_back(-1);
    }
}

const std::string *MarianSentencePiece::token(std::int32_t id) const
{
    if (id < 0 || id >= std::int32_t(m_vocabulary->tokens.size()))
        return nullptr;
    return &m_vocabulary->tokens[std::size_t(id)];
}

std::optional<std::int32_t> MarianSentencePiece::tokenId(std::string_view spelling) const
{
    const auto it = m_vocabulary->ids.find(std::string(spelling));
    if (it == m_vocabulary->ids.end())
        return std::nullopt;
    return it->second;
}

std::string MarianSentencePiece::tokenBytes(std::int32_t id) const
{
    const std::string *spelling = token(id);
    if (!spelling)
        return std::string();
    std::string out;
    for (std::size_t at = 0; at < spelling->size();) {
        if (std::string_view(*spelling).substr(at).starts_with(kSpace)) {
            out += ' ';
            at += kSpace.size();
        } else {
            out += (*spelling)[at++];
        }
    }
    return out;
}

} // namespace attnscope
