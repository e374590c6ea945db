#include "core/JsonDocument.h"

#include "core/UserText.h"

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace attnscope {

namespace {

using json = nlohmann::ordered_json;

// Builds the document the way nlohmann's own DOM parser does, plus the checks that parser
// lacks: depth, duplicate keys, a value count, and errors that carry the path. Objects are
// appended to directly (duplicates are found with a hash set), so a million keys stay linear.
class BoundedBuilder
{
public:
    BoundedBuilder(json &root, const JsonLimits &limits) : m_root(root), m_limits(limits) {}

    std::optional<Error> error;

    bool null() { return add(json(nullptr)); }
    bool boolean(bool v) { return add(json(v)); }
    bool number_integer(json::number_integer_t v) { return add(json(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
    bool number_float(json::number_float_t v, const json::string_t &) { return add(json(v)); }
    bool string(json::string_t &v) { return add(json(std::move(v))); }
    bool binary(json::binary_t &) { return fail(Error{path() + ": binary values are not JSON"}); }

    bool start_object(std::size_t) { return open(json::object()); }
    bool start_array(std::size_t) { return open(json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(json::string_t &k)
    {
        Frame &top = m_stack.back();
        if (!top.keys.insert(k).second) {
            top.pendingKey = std::move(k);
            return fail(Error{path() + ": given twice (a key may appear only once in an object)"});
        }
        top.pendingKey = std::move(k);
        return true;
    }

    bool parse_error(std::size_t, const std::string &lastToken, const nlohmann::detail::exception &e)
    {
        if (e.id == 406) // number overflow: the lexer read a number beyond double range
            return fail(Error{path() + ": the number " + printableText(lastToken, 40) +
                              " is out of range (numbers must be finite; float32 holds at most 3.4e38)"});
        // what() reads "[json.exception.parse_error.101] parse error at line 3, column 12: ...;
        // last read: '<the token>'"; the token is user text of any length.
        std::string what = e.what();
        const auto at = what.find("parse error");
        if (at != std::string::npos)
            what = what.substr(at);
        return fail(Error{"not valid JSON: " + printableText(what, 200)});
    }

private:
    struct Frame {
        json *value;
        std::unordered_set<std::string> keys; // objects only
        std::string pendingKey;
    };

    bool fail(Error e)
    {
        if (!error)
            error = std::move(e);
        return false;
    }

    bool count()
    {
        if (++m_values > m_limits.maxValues)
            return fail(Error{"file: more than " + std::to_string(m_limits.maxValues) +
                                  " values, more than this machine can hold parsed",
                              ErrorKind::TooLarge});
        return true;
    }

    // Where the next value goes.
    json *slot(json value)
    {
        if (m_stack.empty()) {
            m_root = std::move(value);
            return &m_root;
        }
        Frame &top = m_stack.back();
        if (top.value->is_array()) {
            auto &array = top.value->get_ref<json::array_t &>();
            array.push_back(std::move(value));
            return &array.back();
        }
        auto &object = top.value->get_ref<json::object_t &>();
        auto &entries = static_cast<json::object_t::Container &>(object);
        entries.emplace_back(top.pendingKey, std::move(value)); // the key stays for path()
        return &entries.back().second;
    }

    bool add(json value)
    {
        if (!count())
            return false;
        slot(std::move(value));
        return true;
    }

    bool open(json container)
    {
        if (int(m_stack.size()) >= m_limits.maxDepth)
            return fail(Error{path() + ": nested " + std::to_string(m_stack.size() + 1) +
                              " levels deep, more than the " + std::to_string(m_limits.maxDepth) + " allowed"});
        if (!count())
            return false;
        m_stack.push_back(Frame{slot(std::move(container)), {}, {}});
        return true;
    }

    bool close()
    {
        m_stack.pop_back();
        return true;
    }

    // The path of the value being read, as the project messages write fields: "query.x[0][1]".
    // Bounded: a deep path keeps its start and its end.
    std::string path() const
    {
        std::string out;
        for (size_t i = 0; i < m_stack.size(); ++i) {
            const Frame &f = m_stack[i];
            if (f.value->is_array()) {
                // An open child is already appended; the value being read is not yet.
                const size_t index = f.value->size() - (i + 1 < m_stack.size() ? 1 : 0);
                out.append(1, '[').append(std::to_string(index)).append(1, ']');
            } else {
                if (!out.empty())
                    out += '.';
                out += printableText(f.pendingKey, 40);
            }
        }
        if (out.empty())
            return "file";
        if (out.size() > 160) {
            std::string shortened(out, 0, 60);
            shortened.append("...").append(out, out.size() - 60, 60);
            out = std::move(shortened);
        }
        return out;
    }

    json &m_root;
    const JsonLimits &m_limits;
    std::vector<Frame> m_stack;
    std::int64_t m_values = 0;
};

} // namespace

Result<nlohmann::ordered_json> parseJsonDocument(std::string_view text, const JsonLimits &limits)
{
    json root;
    BoundedBuilder builder(root, limits);
    try {
        const bool ok = json::sax_parse(text.begin(), text.end(), &builder);
        if (!ok || builder.error)
            return builder.error ? *builder.error : Error{"not valid JSON"};
    } catch (const std::bad_alloc &) {
        return Error{"file: out of memory while reading the JSON", ErrorKind::OutOfMemory};
    } catch (const nlohmann::json::exception &e) {
        return Error{"not valid JSON: " + printableText(e.what(), 200)};
    }
    return root;
}

} // namespace attnscope
