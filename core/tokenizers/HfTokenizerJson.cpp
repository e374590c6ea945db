#include "core/tokenizers/HfTokenizerJson.h"

#include "core/io/UserText.h"

namespace attnscope::hfjson {

namespace {

// Nesting allowed in the file: a Sequence of Sequences is 6 deep; 64 keeps nlohmann's
// recursive copies and destructors far from the stack's end on a hostile file.
constexpr int kMaxJsonDepth = 64;

bool depthWithin(std::string_view json, int limit)
{
    int depth = 0;
    bool inString = false;
    for (std::size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit)
                return false;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return true;
}

// Builds the document as nlohmann's DOM parser would, except model.vocab (an object) and
// model.merges (an array), which go into Extracted. The first problem stops the parse with a
// message naming the field.
class TokenizerSax : public nlohmann::json_sax<Json>
{
public:
    Json root;
    Extracted extracted;
    std::string error;

    bool null() override { return value(Json()); }
    bool boolean(bool v) override { return value(Json(v)); }
    bool number_integer(number_integer_t v) override
    {
        if (m_mode == Mode::Vocab) {
            extracted.vocab.emplace_back(std::move(m_key), v);
            return true;
        }
        return value(Json(v));
    }
    bool number_unsigned(number_unsigned_t v) override
    {
        if (m_mode == Mode::Vocab) {
            extracted.vocab.emplace_back(std::move(m_key),
                                         v > number_unsigned_t(INT64_MAX) ? INT64_MAX : std::int64_t(v));
            return true;
        }
        return value(Json(v));
    }
    bool number_float(number_float_t v, const string_t &) override { return value(Json(v)); }
    bool string(string_t &v) override
    {
        if (m_mode == Mode::Merges) {
            const std::size_t space = v.find(' ');
            if (space == std::string::npos || v.find(' ', space + 1) != std::string::npos)
                return fail(mergeField() + ": expected two tokens separated by one space, found " + quotedText(v));
            extracted.merges.emplace_back(v.substr(0, space), v.substr(space + 1));
            return true;
        }
        if (m_mode == Mode::MergePair) {
            m_pair.push_back(std::move(v));
            return m_pair.size() <= 2 || fail(mergeField() + ": expected \"a b\" or [\"a\", \"b\"]");
        }
        return value(Json(std::move(v)));
    }
    bool binary(binary_t &) override { return fail("binary values are not JSON"); }
    bool start_object(std::size_t) override
    {
        if (m_mode == Mode::Dom && isModelField("vocab")) {
            m_mode = Mode::Vocab;
            extracted.haveVocab = true;
            return true;
        }
        if (m_mode != Mode::Dom)
            return badInside();
        return open(Json::object());
    }
    bool key(string_t &k) override
    {
        m_key = std::move(k);
        return true;
    }
    bool end_object() override
    {
        if (m_mode == Mode::Vocab) {
            m_mode = Mode::Dom;
            return true;
        }
        m_stack.pop_back();
        m_keys.pop_back();
        return true;
    }
    bool start_array(std::size_t) override
    {
        if (m_mode == Mode::Dom && isModelField("merges")) {
            m_mode = Mode::Merges;
            extracted.haveMerges = true;
            return true;
        }
        if (m_mode == Mode::Merges) {
            m_mode = Mode::MergePair;
            m_pair.clear();
            return true;
        }
        if (m_mode != Mode::Dom)
            return badInside();
        return open(Json::array());
    }
    bool end_array() override
    {
        if (m_mode == Mode::MergePair) {
            if (m_pair.size() != 2)
                return fail(mergeField() + ": expected \"a b\" or [\"a\", \"b\"]");
            extracted.merges.emplace_back(std::move(m_pair[0]), std::move(m_pair[1]));
            m_mode = Mode::Merges;
            return true;
        }
        if (m_mode == Mode::Merges) {
            m_mode = Mode::Dom;
            return true;
        }
        m_stack.pop_back();
        m_keys.pop_back();
        return true;
    }
    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override
    {
        return fail("not valid JSON");
    }

private:
    enum class Mode { Dom, Vocab, Merges, MergePair };
    Mode m_mode = Mode::Dom;
    std::vector<Json *> m_stack;
    std::vector<std::string> m_keys; // the key each open container has in its parent
    std::string m_key;
    std::vector<std::string> m_pair;

    bool fail(const std::string &message)
    {
        if (error.empty())
            error = message;
        return false;
    }
    std::string mergeField() const { return "model.merges[" + std::to_string(extracted.merges.size()) + "]"; }
    bool badInside()
    {
        if (m_mode == Mode::Vocab)
            return fail("model.vocab." + printableText(m_key, 40) + ": expected a token id (a whole number from 0)");
        return fail(mergeField() + ": expected \"a b\" or [\"a\", \"b\"]");
    }
    // The next value is root.model.<name>.
    bool isModelField(const char *name) const
    {
        return m_stack.size() == 2 && m_keys[1] == "model" && m_stack[0]->is_object() && m_stack[1]->is_object() &&
               m_key == name;
    }
    Json *place(Json &&v)
    {
        if (m_stack.empty()) {
            root = std::move(v);
            return &root;
        }
        Json *parent = m_stack.back();
        if (parent->is_object()) {
            Json &slot = (*parent)[m_key];
            slot = std::move(v);
            return &slot;
        }
        parent->push_back(std::move(v));
        return &parent->back();
    }
    bool value(Json &&v)
    {
        if (m_mode == Mode::Vocab)
            return fail("model.vocab." + printableText(m_key, 40) +
                        ": expected a token id (a whole number from 0), found " +
                        printableText(v.dump(-1, ' ', false, Json::error_handler_t::replace), 40));
        if (m_mode != Mode::Dom)
            return fail(mergeField() + ": expected \"a b\" or [\"a\", \"b\"]");
        place(std::move(v));
        return true;
    }
    bool open(Json &&container)
    {
        const std::string key = m_stack.empty() || !m_stack.back()->is_object() ? std::string() : m_key;
        m_stack.push_back(place(std::move(container)));
        m_keys.push_back(key);
        return true;
    }
};

} // namespace

Result<ParsedTokenizerJson> parseTokenizerJson(std::string_view json, const std::string &shownName)
{
    if (!depthWithin(json, kMaxJsonDepth))
        return Error{shownName + ": nested more than " + std::to_string(kMaxJsonDepth) + " levels deep"};
    TokenizerSax sax;
    if (!Json::sax_parse(json.begin(), json.end(), &sax) || !sax.error.empty())
        return Error{shownName + ": " + (sax.error.empty() ? std::string("not valid JSON") : sax.error)};
    return ParsedTokenizerJson{std::move(sax.root), std::move(sax.extracted)};
}

} // namespace attnscope::hfjson
