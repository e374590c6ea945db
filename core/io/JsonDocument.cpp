#include "core/io/JsonDocument.h"

#include "core/ErrorCode.h"
#include "core/io/UserText.h"

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace attnscope {

namespace {

using json = nlohmann::ordered_json;

// nlohmann's "parse error at line L, column C: DETAIL" as a coded error with no English of
// nlohmann's in it, so the app can translate all of it: the line, the column, the byte offset
// and the text read last (user text, the end of it kept) are its arguments; DETAIL, nlohmann's
// English, is reduced to whether the text ended too early.
Error syntaxError(const std::string &what, std::size_t position, const std::string &lastToken)
{
    const std::string shown = printableText(what, 200);
    static constexpr std::string_view lead = "parse error at line ", column = ", column ";
    auto digits = [&](std::size_t from) {
        std::size_t end = from;
        while (end < shown.size() && shown[end] >= '0' && shown[end] <= '9')
            ++end;
        return end;
    };
    if (shown.starts_with(lead)) {
        const std::size_t lineEnd = digits(lead.size());
        if (lineEnd > lead.size() && shown.compare(lineEnd, column.size(), column) == 0) {
            const std::size_t colStart = lineEnd + column.size(), colEnd = digits(colStart);
            if (colEnd > colStart && shown.compare(colEnd, 2, ": ") == 0) {
                const std::string line = shown.substr(lead.size(), lineEnd - lead.size()),
                                  col = shown.substr(colStart, colEnd - colStart),
                                  // nlohmann counts the bytes read, the failing one included.
                    offset = std::to_string(position > 0 ? position - 1 : 0);
                if (what.find("unexpected end of input") != std::string::npos)
                    return codedError("json.syntax.end", {line, col, offset});
                // The end of a long token is where the error is.
                std::size_t from = lastToken.size() > 40 ? lastToken.size() - 40 : 0;
                while (from > 0 && from < lastToken.size() &&
                       (static_cast<unsigned char>(lastToken[from]) & 0xc0) == 0x80)
                    ++from;
                const std::string token =
                    (from > 0 ? "..." : "") + printableText(std::string_view(lastToken).substr(from), 60);
                return codedError("json.syntax", {line, col, offset, token});
            }
        }
    }
    return codedError("json.invalid", {shown});
}

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
    bool binary(json::binary_t &) { return fail(codedError("json.binary", {path()})); }

    bool start_object(std::size_t) { return open(json::object()); }
    bool start_array(std::size_t) { return open(json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(json::string_t &k)
    {
        Frame &top = m_stack.back();
        if (!top.keys.insert(k).second) {
            top.pendingKey = std::move(k);
            return fail(codedError("json.duplicateKey", {path()}));
        }
        top.pendingKey = std::move(k);
        return true;
    }

    bool parse_error(std::size_t position, const std::string &lastToken, const nlohmann::detail::exception &e)
    {
        if (e.id == 406) // number overflow: the lexer read a number beyond double range
            return fail(codedError("json.numberRange", {path(), printableText(lastToken, 40)}));
        // what() reads "[json.exception.parse_error.101] parse error at line 3, column 12: ...;
        // last read: '<the token>'"; the token is user text of any length.
        std::string what = e.what();
        const auto at = what.find("parse error");
        if (at != std::string::npos)
            what = what.substr(at);
        return fail(syntaxError(what, position, lastToken));
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
            return fail(codedError("json.tooManyValues", {std::to_string(m_limits.maxValues)}, ErrorKind::TooLarge));
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
            return fail(codedError("json.depth",
                                   {path(), std::to_string(m_stack.size() + 1), std::to_string(m_limits.maxDepth)}));
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
            return builder.error ? *builder.error : codedError("json.invalid.bare", {});
    } catch (const std::bad_alloc &) {
        return codedError("json.outOfMemory", {}, ErrorKind::OutOfMemory);
    } catch (const nlohmann::json::exception &e) {
        return codedError("json.invalid", {printableText(e.what(), 200)});
    }
    return root;
}

} // namespace attnscope
