// Reading tokenizer.json into HfTokenizer::Data (core/tokenizers/HfTokenizerParts.h), after the
// first pass of HfTokenizerJson.h.

#include "core/io/UserText.h"
#include "core/tokenizers/HfTokenizer.h"
#include "core/tokenizers/HfTokenizerJson.h"
#include "core/tokenizers/HfTokenizerParts.h"

namespace attnscope {

using namespace hfjson;

namespace {

class Reader
{
public:
    Reader(const std::string &shownName, HfTokenizer::Data &data, Extracted &extracted)
        : m_name(shownName), m_d(data), m_x(extracted)
    {
    }

    Status read(const Json &root);

private:
    const std::string &m_name;
    HfTokenizer::Data &m_d;
    Extracted &m_x;

    Error invalid(const std::string &field, const std::string &what) const
    {
        return Error{m_name + ": " + field + ": " + what};
    }
    Error unsupported(const std::string &field, const std::string &type) const
    {
        return Error{m_name + ": " + field + " type " + quotedText(type) + " is not supported", ErrorKind::Unsupported};
    }
    static std::string shown(const Json &value)
    {
        return printableText(value.dump(-1, ' ', false, Json::error_handler_t::replace), 40);
    }

    Result<std::string> string(const Json &object, const char *key, const std::string &field,
                               std::optional<std::string> fallback = {}) const
    {
        const auto it = object.find(key);
        if (it == object.end() || (it->is_null() && fallback)) {
            if (fallback)
                return *fallback;
            return invalid(field, std::string("no \"") + key + "\"");
        }
        if (!it->is_string())
            return invalid(field + "." + key, "expected a string, found " + shown(*it));
        return it->get<std::string>();
    }
    Result<bool> boolean(const Json &object, const char *key, const std::string &field, bool fallback) const
    {
        const auto it = object.find(key);
        if (it == object.end() || it->is_null())
            return fallback;
        if (!it->is_boolean())
            return invalid(field + "." + key, "expected true or false, found " + shown(*it));
        return it->get<bool>();
    }
    Result<std::string> type(const Json &object, const std::string &field) const
    {
        if (!object.is_object())
            return invalid(field, "expected an object or null, found " + shown(object));
        return string(object, "type", field);
    }
    Result<std::int32_t> id(const Json &value, const std::string &field) const
    {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<std::int64_t>() > (1 << 30))
            return invalid(field, "expected a token id (a whole number from 0), found " + shown(value));
        return std::int32_t(value.get<std::int64_t>());
    }

    Result<Pattern> pattern(const Json &object, const std::string &field) const
    {
        const auto it = object.find("pattern");
        if (it == object.end() || !it->is_object() || it->size() != 1)
            return invalid(field + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
        Pattern p;
        if (const auto s = it->find("String"); s != it->end() && s->is_string()) {
            p.literal = s->get<std::string>();
            return p;
        }
        if (const auto r = it->find("Regex"); r != it->end() && r->is_string()) {
            auto regex = TokenRegex::compile(r->get<std::string>());
            if (!regex)
                return invalid(field + ".pattern",
                               "the regex " + quotedText(r->get<std::string>(), 80) + ": " + regex.message());
            p.regex = std::move(*regex);
            return p;
        }
        return invalid(field + ".pattern", "expected {\"String\": ...} or {\"Regex\": ...}, found " + shown(*it));
    }

    Result<Normalizer> normalizer(const Json &j, const std::string &field) const
    {
        auto t = type(j, field);
        if (!t)
            return t.error();
        Normalizer n;
        if (*t == "Sequence") {
            const auto it = j.find("normalizers");
            if (it == j.end() || !it->is_array())
                return invalid(field, "expected \"normalizers\": [...]");
            for (std::size_t k = 0; k < it->size(); ++k) {
                auto child = normalizer((*it)[k], field + ".normalizers[" + std::to_string(k) + "]");
                if (!child)
                    return child.error();
                n.children.push_back(std::move(*child));
            }
        } else if (*t == "NFC") {
            n.kind = NormalizerKind::Nfc;
        } else if (*t == "NFD") {
            n.kind = NormalizerKind::Nfd;
        } else if (*t == "NFKC") {
            n.kind = NormalizerKind::Nfkc;
        } else if (*t == "NFKD") {
            n.kind = NormalizerKind::Nfkd;
        } else if (*t == "Lowercase") {
            n.kind = NormalizerKind::Lowercase;
        } else if (*t == "Replace") {
            n.kind = NormalizerKind::Replace;
            auto p = pattern(j, field);
            if (!p)
                return p.error();
            n.pattern = std::move(*p);
            auto content = string(j, "content", field);
            if (!content)
                return content.error();
            n.content = *content;
            if (n.content == kMetaspace)
                m_d.metaspace = true;
        } else if (*t == "Prepend") {
            n.kind = NormalizerKind::Prepend;
            auto content = string(j, "prepend", field);
            if (!content)
                return content.error();
            n.content = *content;
        } else if (*t == "Strip") {
            n.kind = NormalizerKind::Strip;
            auto l = boolean(j, "strip_left", field, true), r = boolean(j, "strip_right", field, true);
            if (!l)
                return l.error();
            if (!r)
                return r.error();
            n.left = *l, n.right = *r;
        } else if (*t == "BertNormalizer") {
            n.kind = NormalizerKind::Bert;
            auto clean = boolean(j, "clean_text", field, true),
                 chinese = boolean(j, "handle_chinese_chars", field, true),
                 lower = boolean(j, "lowercase", field, true);
            if (!clean)
                return clean.error();
            if (!chinese)
                return chinese.error();
            if (!lower)
                return lower.error();
            n.cleanText = *clean, n.chineseChars = *chinese, n.lowercase = *lower;
            if (const auto it = j.find("strip_accents"); it != j.end() && !it->is_null()) {
                if (!it->is_boolean())
                    return invalid(field + ".strip_accents", "expected true, false or null, found " + shown(*it));
                n.stripAccents = it->get<bool>();
            }
        } else {
            return unsupported(field, *t);
        }
        return n;
    }

    Result<PreTokenizer> preTokenizer(const Json &j, const std::string &field) const
    {
        auto t = type(j, field);
        if (!t)
            return t.error();
        PreTokenizer p;
        if (*t == "Sequence") {
            const auto it = j.find("pretokenizers");
            if (it == j.end() || !it->is_array())
                return invalid(field, "expected \"pretokenizers\": [...]");
            for (std::size_t k = 0; k < it->size(); ++k) {
                auto child = preTokenizer((*it)[k], field + ".pretokenizers[" + std::to_string(k) + "]");
                if (!child)
                    return child.error();
                p.children.push_back(std::move(*child));
            }
        } else if (*t == "ByteLevel") {
            p.kind = PreTokenizerKind::ByteLevel;
            auto prefix = boolean(j, "add_prefix_space", field, true), regex = boolean(j, "use_regex", field, true);
            if (!prefix)
                return prefix.error();
            if (!regex)
                return regex.error();
            p.addPrefixSpace = *prefix, p.useRegex = *regex;
            m_d.byteLevel = true;
        } else if (*t == "Split") {
            p.kind = PreTokenizerKind::Split;
            auto pat = pattern(j, field);
            if (!pat)
                return pat.error();
            p.pattern = std::move(*pat);
            auto behavior = string(j, "behavior", field);
            if (!behavior)
                return behavior.error();
            static const std::pair<const char *, SplitBehavior> behaviors[] = {
                {"Removed", SplitBehavior::Removed},
                {"Isolated", SplitBehavior::Isolated},
                {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
                {"MergedWithNext", SplitBehavior::MergedWithNext},
                {"Contiguous", SplitBehavior::Contiguous}};
            const auto b = std::find_if(std::begin(behaviors), std::end(behaviors),
                                        [&](const auto &e) { return *behavior == e.first; });
            if (b == std::end(behaviors))
                return invalid(field + ".behavior", quotedText(*behavior) +
                                                        " is not a split behavior (Removed, Isolated, "
                                                        "MergedWithPrevious, MergedWithNext or Contiguous)");
            p.behavior = b->second;
            auto invert = boolean(j, "invert", field, false);
            if (!invert)
                return invert.error();
            p.invert = *invert;
        } else if (*t == "Metaspace") {
            p.kind = PreTokenizerKind::Metaspace;
            auto replacement = string(j, "replacement", field, std::string(kMetaspace));
            if (!replacement)
                return replacement.error();
            if (replacement->empty() || decodeUtf8(*replacement, 0).length != replacement->size())
                return invalid(field + ".replacement", "expected one character, found " + quotedText(*replacement));
            p.replacement = *replacement;
            if (j.contains("prepend_scheme")) {
                auto scheme = string(j, "prepend_scheme", field);
                if (!scheme)
                    return scheme.error();
                if (*scheme == "always")
                    p.prepend = PrependScheme::Always;
                else if (*scheme == "first")
                    p.prepend = PrependScheme::First;
                else if (*scheme == "never")
                    p.prepend = PrependScheme::Never;
                else
                    return invalid(field + ".prepend_scheme", quotedText(*scheme) + " is not always, first or never");
            } else {
                auto prefix = boolean(j, "add_prefix_space", field, true);
                if (!prefix)
                    return prefix.error();
                p.prepend = *prefix ? PrependScheme::Always : PrependScheme::Never;
            }
            auto split = boolean(j, "split", field, true);
            if (!split)
                return split.error();
            p.split = *split;
            m_d.metaspace = true;
        } else if (*t == "BertPreTokenizer") {
            p.kind = PreTokenizerKind::Bert;
        } else if (*t == "Whitespace") {
            p.kind = PreTokenizerKind::Whitespace;
        } else if (*t == "WhitespaceSplit") {
            p.kind = PreTokenizerKind::WhitespaceSplit;
        } else if (*t == "Digits") {
            p.kind = PreTokenizerKind::Digits;
            auto individual = boolean(j, "individual_digits", field, false);
            if (!individual)
                return individual.error();
            p.individualDigits = *individual;
        } else {
            return unsupported(field, *t);
        }
        return p;
    }

    Result<std::vector<std::int32_t>> namedToken(const Json &pair, const std::string &field) const
    {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string())
            return invalid(field, "expected [\"token\", id], found " + shown(pair));
        auto i = id(pair[1], field + "[1]");
        if (!i)
            return i.error();
        return std::vector<std::int32_t>{*i};
    }

    Result<PostProcessor> postProcessor(const Json &j, const std::string &field) const
    {
        auto t = type(j, field);
        if (!t)
            return t.error();
        PostProcessor p;
        if (*t == "Sequence") {
            p.kind = PostKind::Sequence;
            const auto it = j.find("processors");
            if (it == j.end() || !it->is_array())
                return invalid(field, "expected \"processors\": [...]");
            int templates = 0;
            for (std::size_t k = 0; k < it->size(); ++k) {
                auto child = postProcessor((*it)[k], field + ".processors[" + std::to_string(k) + "]");
                if (!child)
                    return child.error();
                if (child->kind == PostKind::Sequence)
                    return invalid(field, "a Sequence inside a Sequence is not supported");
                templates += child->kind == PostKind::Template || child->kind == PostKind::Bert;
                p.children.push_back(std::move(*child));
            }
            if (templates > 1)
                return invalid(field, "more than one processor adds special tokens");
        } else if (*t == "ByteLevel") {
            p.kind = PostKind::ByteLevel;
        } else if (*t == "TemplateProcessing") {
            p.kind = PostKind::Template;
            const auto single = j.find("single");
            const auto specials = j.find("special_tokens");
            if (single == j.end() || !single->is_array())
                return invalid(field + ".single", "expected a list of template items");
            if (specials == j.end() || !specials->is_object())
                return invalid(field + ".special_tokens", "expected an object");
            bool sawA = false;
            for (std::size_t k = 0; k < single->size(); ++k) {
                const Json &item = (*single)[k];
                const std::string itemField = field + ".single[" + std::to_string(k) + "]";
                if (item.is_object() && item.contains("Sequence") && item["Sequence"].is_object()) {
                    const Json &seq = item["Sequence"];
                    if (!seq.contains("id") || seq["id"] != "A")
                        return invalid(itemField, "expected the sequence \"A\" (a single text has no \"B\")");
                    p.single.emplace_back(std::nullopt);
                    sawA = true;
                } else if (item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].is_object() &&
                           item["SpecialToken"].contains("id") && item["SpecialToken"]["id"].is_string()) {
                    const std::string name = item["SpecialToken"]["id"].get<std::string>();
                    const auto special = specials->find(name);
                    if (special == specials->end() || !special->is_object() || !special->contains("ids") ||
                        !(*special)["ids"].is_array())
                        return invalid(itemField,
                                       "the special token " + quotedText(name) + " is not in special_tokens");
                    std::vector<std::int32_t> ids;
                    for (const Json &v : (*special)["ids"]) {
                        auto i = id(v, field + ".special_tokens." + name + ".ids");
                        if (!i)
                            return i.error();
                        ids.push_back(*i);
                    }
                    p.single.emplace_back(std::move(ids));
                } else {
                    return invalid(itemField,
                                   "expected {\"SpecialToken\": {...}} or {\"Sequence\": {...}}, found " + shown(item));
                }
            }
            if (!sawA)
                return invalid(field + ".single", "the template has no sequence \"A\"");
        } else if (*t == "BertProcessing" || *t == "RobertaProcessing") {
            p.kind = PostKind::Bert;
            if (!j.contains("cls") || !j.contains("sep"))
                return invalid(field, "expected \"cls\" and \"sep\"");
            auto cls = namedToken(j["cls"], field + ".cls");
            if (!cls)
                return cls.error();
            auto sep = namedToken(j["sep"], field + ".sep");
            if (!sep)
                return sep.error();
            p.single.emplace_back(std::move(*cls));
            p.single.emplace_back(std::nullopt);
            p.single.emplace_back(std::move(*sep));
        } else {
            return unsupported(field, *t);
        }
        return p;
    }

    // The decoder changes no ids; it only says how tokens read.
    void decoder(const Json &j, int depth) const
    {
        if (!j.is_object() || depth > 8)
            return;
        const auto t = j.find("type");
        if (t == j.end() || !t->is_string())
            return;
        if (*t == "ByteLevel")
            m_d.byteLevel = true;
        else if (*t == "Metaspace")
            m_d.metaspace = true;
        else if (*t == "Replace" && j.contains("content") && j["content"] == " " && j.contains("pattern") &&
                 j["pattern"].is_object() && j["pattern"].contains("String") && j["pattern"]["String"] == kMetaspace)
            m_d.metaspace = true;
        else if (*t == "Sequence" && j.contains("decoders") && j["decoders"].is_array())
            for (const Json &child : j["decoders"])
                decoder(child, depth + 1);
    }

    Status model(const Json &j);
    Status addedTokens(const Json &j);
};

Status Reader::model(const Json &j)
{
    auto t = type(j, "model");
    if (!t)
        return t.error();
    if (*t != "BPE" && *t != "WordPiece")
        return unsupported("model", *t);
    m_d.wordPiece = *t == "WordPiece";
    if (!m_x.haveVocab)
        return invalid("model.vocab", "expected an object of tokens and ids");
    m_d.vocab.reserve(m_x.vocab.size());
    for (auto &[token, value] : m_x.vocab) {
        if (value < 0 || value > (1 << 30))
            return invalid("model.vocab." + printableText(token, 40),
                           "expected a token id (a whole number from 0), found " + std::to_string(value));
        m_d.vocab.emplace(std::move(token), std::int32_t(value));
    }
    m_x.vocab.clear();
    const auto unk = j.find("unk_token");
    if (unk != j.end() && !unk->is_null()) {
        if (!unk->is_string())
            return invalid("model.unk_token", "expected a string or null, found " + shown(*unk));
        const auto found = m_d.vocab.find(unk->get<std::string>());
        if (found == m_d.vocab.end())
            return invalid("model.unk_token", quotedText(unk->get<std::string>()) + " is not in the vocabulary");
        m_d.unk = found->second;
    }
    if (m_d.wordPiece) {
        if (!m_d.unk)
            return invalid("model.unk_token", "a WordPiece model needs one");
        auto prefix = string(j, "continuing_subword_prefix", "model", std::string("##"));
        if (!prefix)
            return prefix.error();
        m_d.prefix = *prefix;
        if (const auto it = j.find("max_input_chars_per_word"); it != j.end()) {
            if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
                return invalid("model.max_input_chars_per_word", "expected a whole number, found " + shown(*it));
            m_d.maxCharsPerWord = it->get<std::int64_t>();
        }
        return Ok{};
    }
    if (const auto it = j.find("dropout");
        it != j.end() && !it->is_null() && !(it->is_number() && it->get<double>() == 0.0))
        return invalid("model.dropout", "only null is supported (dropout makes encoding random), found " + shown(*it));
    auto fallback = boolean(j, "byte_fallback", "model", false), fuse = boolean(j, "fuse_unk", "model", false),
         ignore = boolean(j, "ignore_merges", "model", false);
    if (!fallback)
        return fallback.error();
    if (!fuse)
        return fuse.error();
    if (!ignore)
        return ignore.error();
    m_d.byteFallback = *fallback, m_d.fuseUnk = *fuse, m_d.ignoreMerges = *ignore;
    auto prefix = string(j, "continuing_subword_prefix", "model", std::string());
    auto suffix = string(j, "end_of_word_suffix", "model", std::string());
    if (!prefix)
        return prefix.error();
    if (!suffix)
        return suffix.error();
    m_d.prefix = *prefix, m_d.suffix = *suffix;
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
        const std::string name = std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
        const auto it = m_d.vocab.find(name);
        m_d.byteIds[b] = it == m_d.vocab.end() ? -1 : it->second;
    }
    if (!m_x.haveMerges)
        return invalid("model.merges", "expected a list of merges");
    m_d.merges.reserve(m_x.merges.size());
    std::int32_t rank = 0;
    std::string merged;
    for (const auto &[a, b] : m_x.merges) {
        const auto field = [&] { return "model.merges[" + std::to_string(rank) + "]"; };
        const auto ia = m_d.vocab.find(a), ib = m_d.vocab.find(b);
        if (ia == m_d.vocab.end() || ib == m_d.vocab.end())
            return invalid(field(),
                           "the token " + quotedText(ia == m_d.vocab.end() ? a : b) + " is not in the vocabulary");
        merged = a;
        merged +=
            !m_d.prefix.empty() && b.compare(0, m_d.prefix.size(), m_d.prefix) == 0 ? b.substr(m_d.prefix.size()) : b;
        const auto im = m_d.vocab.find(merged);
        if (im == m_d.vocab.end())
            return invalid(field(), "the merged token " + quotedText(merged) + " is not in the vocabulary");
        const std::uint64_t key = (std::uint64_t(std::uint32_t(ia->second)) << 32) | std::uint32_t(ib->second);
        m_d.merges.emplace(key, std::pair(rank, im->second)); // the first (best) rank of a pair wins
        ++rank;
    }
    return Ok{};
}

Status Reader::addedTokens(const Json &j)
{
    if (j.is_null())
        return Ok{};
    if (!j.is_array())
        return invalid("added_tokens", "expected a list, found " + shown(j));
    for (std::size_t k = 0; k < j.size(); ++k) {
        const Json &t = j[k];
        const std::string field = "added_tokens[" + std::to_string(k) + "]";
        if (!t.is_object() || !t.contains("id"))
            return invalid(field, "expected an object with \"id\" and \"content\"");
        AddedToken a;
        auto i = id(t["id"], field + ".id");
        if (!i)
            return i.error();
        auto content = string(t, "content", field);
        if (!content)
            return content.error();
        if (content->empty())
            return invalid(field + ".content", "an added token cannot be empty");
        a.id = *i, a.content = *content;
        for (auto [key, flag] :
             {std::pair("special", &a.special), std::pair("lstrip", &a.lstrip), std::pair("rstrip", &a.rstrip),
              std::pair("normalized", &a.normalized), std::pair("single_word", &a.singleWord)}) {
            auto v = boolean(t, key, field, false);
            if (!v)
                return v.error();
            *flag = *v;
        }
        m_d.added.push_back(std::move(a));
    }
    return Ok{};
}

Status Reader::read(const Json &root)
{
    if (!root.is_object())
        return Error{m_name + ": expected a JSON object ({...})"};
    for (const char *key : {"truncation", "padding"})
        if (const auto it = root.find(key); it != root.end() && !it->is_null())
            return Error{m_name + ": " + key + " is not supported (expected null)", ErrorKind::Unsupported};
    const auto modelIt = root.find("model");
    if (modelIt == root.end())
        return Error{m_name + ": no \"model\""};
    if (Status s = model(*modelIt); !s)
        return s;
    if (const auto it = root.find("added_tokens"); it != root.end())
        if (Status s = addedTokens(*it); !s)
            return s;
    if (const auto it = root.find("normalizer"); it != root.end() && !it->is_null()) {
        auto n = normalizer(*it, "normalizer");
        if (!n)
            return n.error();
        m_d.normalizer = std::move(*n);
    }
    if (const auto it = root.find("pre_tokenizer"); it != root.end() && !it->is_null()) {
        auto p = preTokenizer(*it, "pre_tokenizer");
        if (!p)
            return p.error();
        m_d.preTokenizer = std::move(*p);
    }
    if (const auto it = root.find("post_processor"); it != root.end() && !it->is_null()) {
        auto p = postProcessor(*it, "post_processor");
        if (!p)
            return p.error();
        m_d.post = std::move(*p);
    }
    if (const auto it = root.find("decoder"); it != root.end())
        decoder(*it, 0);

    // Ids must be dense enough that a table by id is the vocabulary's size, not a hostile id's.
    std::int64_t maxId = -1;
    for (const auto &[token, i] : m_d.vocab)
        maxId = std::max<std::int64_t>(maxId, i);
    for (const AddedToken &a : m_d.added)
        maxId = std::max<std::int64_t>(maxId, a.id);
    const std::int64_t count = std::int64_t(m_d.vocab.size() + m_d.added.size());
    if (maxId >= 2 * count + 1024)
        return Error{m_name + ": the token id " + std::to_string(maxId) + " is far beyond the " +
                     std::to_string(count) + " tokens (ids must number the vocabulary)"};
    m_d.tokens.assign(std::size_t(maxId + 1), std::string());
    m_d.isAdded.assign(m_d.tokens.size(), false);
    m_d.addedIndex.assign(m_d.tokens.size(), -1);
    for (const auto &[token, i] : m_d.vocab)
        if (m_d.tokens[std::size_t(i)].empty())
            m_d.tokens[std::size_t(i)] = token;
    for (std::size_t k = 0; k < m_d.added.size(); ++k) {
        const AddedToken &a = m_d.added[k];
        m_d.tokens[std::size_t(a.id)] = a.content;
        m_d.isAdded[std::size_t(a.id)] = true;
        m_d.addedIndex[std::size_t(a.id)] = std::int32_t(k);
        if (a.normalized && m_d.normalizer) {
            const std::string normalized = m_d.normalize(a.content);
            if (!normalized.empty())
                m_d.addedNormalized.add(normalized, a.id);
        } else {
            m_d.addedRaw.add(a.content, a.id);
        }
    }
    // The post-processor's tokens must be tokens: every id the encoder emits has a spelling.
    std::vector<const PostProcessor *> processors{&m_d.post};
    for (const PostProcessor &child : m_d.post.children)
        processors.push_back(&child);
    for (const PostProcessor *p : processors)
        for (const auto &item : p->single)
            for (std::int32_t id : item.value_or(std::vector<std::int32_t>{}))
                if (std::size_t(id) >= m_d.tokens.size() || m_d.tokens[std::size_t(id)].empty())
                    return Error{m_name + ": post_processor: the special token id " + std::to_string(id) +
                                 " is not in the vocabulary"};
    return Ok{};
}

} // namespace

Result<HfTokenizer> HfTokenizer::fromJson(std::string_view json, const std::string &shownName)
{
    auto parsed = parseTokenizerJson(json, shownName);
    if (!parsed)
        return parsed.error();
    auto data = std::make_shared<Data>();
    data->shownName = shownName;
    Reader reader(shownName, *data, parsed->extracted);
    if (Status s = reader.read(parsed->root); !s)
        return s.error();
    HfTokenizer t;
    t.m_data = std::move(data);
    return t;
}

} // namespace attnscope
