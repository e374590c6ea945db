#include "core/tokenizers/TokenRegex.h"

#include "core/io/UserText.h"
#include "core/tokenizers/UnicodeText.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace attnscope {

namespace {

enum class ItemKind : std::uint8_t { Range, Categories, WhiteSpace, Word };

// One member of a character class; `negated` for \S, \W, \P{..} inside a class.
struct ClassItem {
    ItemKind kind = ItemKind::Range;
    bool negated = false;
    char32_t low = 0, high = 0;   // Range
    std::uint32_t categories = 0; // Categories: one bit per UnicodeCategory
};

enum class NodeKind : std::uint8_t {
    Empty,
    Set,
    Sequence,
    Alternation,
    Repeat,
    Lookahead,
    LineStart,
    LineEnd,
    TextStart,
    TextEnd
};

constexpr std::uint32_t bit(UnicodeCategory c)
{
    return 1u << unsigned(c);
}

bool categoryMask(std::string_view name, std::uint32_t &mask)
{
    using C = UnicodeCategory;
    struct Named {
        const char *name;
        std::uint32_t mask;
    };
    constexpr std::uint32_t letter = bit(C::Lu) | bit(C::Ll) | bit(C::Lt) | bit(C::Lm) | bit(C::Lo);
    constexpr std::uint32_t mark = bit(C::Mn) | bit(C::Mc) | bit(C::Me);
    constexpr std::uint32_t number = bit(C::Nd) | bit(C::Nl) | bit(C::No);
    constexpr std::uint32_t punctuation =
        bit(C::Pc) | bit(C::Pd) | bit(C::Ps) | bit(C::Pe) | bit(C::Pi) | bit(C::Pf) | bit(C::Po);
    constexpr std::uint32_t symbol = bit(C::Sm) | bit(C::Sc) | bit(C::Sk) | bit(C::So);
    constexpr std::uint32_t separator = bit(C::Zs) | bit(C::Zl) | bit(C::Zp);
    constexpr std::uint32_t other = bit(C::Cc) | bit(C::Cf) | bit(C::Cs) | bit(C::Co) | bit(C::Cn);
    static const Named names[] = {
        {"L", letter},
        {"Letter", letter},
        {"M", mark},
        {"Mark", mark},
        {"N", number},
        {"Number", number},
        {"P", punctuation},
        {"Punctuation", punctuation},
        {"S", symbol},
        {"Symbol", symbol},
        {"Z", separator},
        {"Separator", separator},
        {"C", other},
        {"Other", other},
        {"LC", bit(C::Lu) | bit(C::Ll) | bit(C::Lt)},
        {"L&", bit(C::Lu) | bit(C::Ll) | bit(C::Lt)},
    };
    for (const Named &n : names)
        if (name == n.name) {
            mask = n.mask;
            return true;
        }
    static const char *const two[] = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                                      "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc",
                                      "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"};
    for (unsigned k = 0; k < std::size(two); ++k)
        if (name == two[k]) {
            mask = 1u << k;
            return true;
        }
    return false;
}

bool isWordChar(char32_t c)
{
    using C = UnicodeCategory;
    const UnicodeCategory cat = unicodeCategory(c);
    return cat <= C::Me || cat == C::Nd || cat == C::Pc;
}

char32_t caseFold(char32_t c)
{
    if (c == 0x17f) // LATIN SMALL LETTER LONG S folds to s
        return U's';
    std::u32string lower;
    appendLowerCase(c, lower);
    return lower.size() == 1 ? lower[0] : c;
}

} // namespace

struct TokenRegex::Program {
    struct Node {
        NodeKind kind = NodeKind::Empty;
        bool negated = false;          // Set: [^...]; Lookahead: (?!...)
        bool caseInsensitive = false;  // Set
        bool lazy = false;             // Repeat
        std::int64_t min = 0, max = 0; // Repeat; max < 0 for no bound
        std::vector<ClassItem> items;  // Set
        std::vector<int> children;     // Sequence, Alternation; Repeat and Lookahead: one
    };
    std::vector<Node> nodes;
    int root = 0;

    bool itemsContain(const Node &n, char32_t c) const
    {
        for (const ClassItem &item : n.items) {
            bool in = false;
            switch (item.kind) {
            case ItemKind::Range:
                in = c >= item.low && c <= item.high;
                break;
            case ItemKind::Categories:
                in = (item.categories >> unsigned(unicodeCategory(c))) & 1u;
                break;
            case ItemKind::WhiteSpace:
                in = isWhiteSpace(c);
                break;
            case ItemKind::Word:
                in = isWordChar(c);
                break;
            }
            if (in != item.negated)
                return true;
        }
        return false;
    }
    bool setContains(const Node &n, char32_t c) const
    {
        bool in = itemsContain(n, c);
        if (!in && n.caseInsensitive) {
            const char32_t folded = caseFold(c);
            in = (folded != c && itemsContain(n, folded)) || (c >= 'a' && c <= 'z' && itemsContain(n, c - 32)) ||
                 (c == 's' && itemsContain(n, 0x17f));
        }
        return in != n.negated;
    }
};

namespace {

using Program = TokenRegex::Program;
using Node = Program::Node;

class Parser
{
public:
    explicit Parser(std::string_view pattern)
    {
        for (std::size_t i = 0; i < pattern.size();) {
            const Utf8Char c = decodeUtf8(pattern, i);
            if (!c.valid) {
                m_error = "the pattern is not valid UTF-8";
                return;
            }
            m_text.push_back(c.value);
            i += c.length;
        }
    }

    Result<Program> run()
    {
        if (!m_error.empty())
            return Error{m_error};
        Program p;
        m_program = &p;
        const int root = alternation(false, 0);
        if (m_error.empty() && m_pos < m_text.size())
            fail("unmatched \")\"");
        if (!m_error.empty())
            return Error{m_error};
        p.root = root;
        return p;
    }

private:
    std::u32string m_text;
    std::size_t m_pos = 0;
    std::string m_error;
    Program *m_program = nullptr;
    int m_depth = 0;

    int fail(const std::string &message)
    {
        if (m_error.empty())
            m_error = message + " at character " + std::to_string(m_pos + 1);
        return 0;
    }
    static Node bare(NodeKind kind)
    {
        Node n;
        n.kind = kind;
        return n;
    }
    int add(Node n)
    {
        m_program->nodes.push_back(std::move(n));
        return int(m_program->nodes.size() - 1);
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char32_t peek(std::size_t ahead = 0) const
    {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : char32_t(0xffffffff);
    }

    int alternation(bool caseInsensitive, int depth)
    {
        if (depth > 200)
            return fail("groups nested too deeply");
        Node alt;
        alt.kind = NodeKind::Alternation;
        while (true) {
            alt.children.push_back(sequence(caseInsensitive, depth));
            if (!m_error.empty())
                return 0;
            if (peek() != U'|')
                break;
            ++m_pos;
        }
        if (alt.children.size() == 1)
            return alt.children[0];
        return add(std::move(alt));
    }

    int sequence(bool caseInsensitive, int depth)
    {
        Node seq;
        seq.kind = NodeKind::Sequence;
        while (!atEnd() && peek() != U'|' && peek() != U')') {
            // (?i) switches case folding on for the rest of the enclosing group.
            if (peek() == U'(' && peek(1) == U'?' && (peek(2) == U'i' || peek(2) == U'-') &&
                (peek(3) == U')' || (peek(2) == U'-' && peek(3) == U'i' && peek(4) == U')'))) {
                caseInsensitive = peek(2) == U'i';
                m_pos += caseInsensitive ? 4 : 5;
                continue;
            }
            int atomNode = atom(caseInsensitive, depth);
            if (!m_error.empty())
                return 0;
            atomNode = quantified(atomNode);
            if (!m_error.empty())
                return 0;
            seq.children.push_back(atomNode);
        }
        if (seq.children.size() == 1)
            return seq.children[0];
        return add(std::move(seq));
    }

    bool number(std::int64_t &value)
    {
        if (atEnd() || peek() < U'0' || peek() > U'9')
            return false;
        value = 0;
        while (!atEnd() && peek() >= U'0' && peek() <= U'9') {
            value = value * 10 + (peek() - U'0');
            if (value > 100000)
                return false;
            ++m_pos;
        }
        return true;
    }

    // {m}, {m,}, {m,n}; anything else after "{" is a literal "{" as in Oniguruma.
    bool interval(std::int64_t &min, std::int64_t &max)
    {
        const std::size_t start = m_pos;
        ++m_pos;
        if (!number(min)) {
            m_pos = start;
            return false;
        }
        max = min;
        if (peek() == U',') {
            ++m_pos;
            if (!number(max))
                max = -1;
        }
        if (peek() != U'}') {
            m_pos = start;
            return false;
        }
        ++m_pos;
        return true;
    }

    int quantified(int atomNode)
    {
        while (!atEnd()) {
            std::int64_t min = 0, max = -1;
            const char32_t c = peek();
            if (c == U'?')
                min = 0, max = 1, ++m_pos;
            else if (c == U'*')
                min = 0, max = -1, ++m_pos;
            else if (c == U'+')
                min = 1, max = -1, ++m_pos;
            else if (c == U'{') {
                if (!interval(min, max))
                    return atomNode;
                if (max >= 0 && max < min)
                    return fail("the repeat {" + std::to_string(min) + "," + std::to_string(max) + "} is reversed");
            } else
                return atomNode;
            const NodeKind kind = m_program->nodes[std::size_t(atomNode)].kind;
            if (kind == NodeKind::Lookahead || kind == NodeKind::LineStart || kind == NodeKind::LineEnd ||
                kind == NodeKind::TextStart || kind == NodeKind::TextEnd)
                return fail("nothing to repeat");
            Node rep;
            rep.kind = NodeKind::Repeat;
            rep.min = min;
            rep.max = max;
            if (peek() == U'?') {
                rep.lazy = true;
                ++m_pos;
            } else if (peek() == U'+') {
                return fail("possessive quantifiers are not supported");
            }
            rep.children.push_back(atomNode);
            atomNode = add(std::move(rep));
            if (peek() == U'?' || peek() == U'*' || peek() == U'+')
                return fail("a quantifier after a quantifier is not supported");
        }
        return atomNode;
    }

    int literal(char32_t c, bool caseInsensitive)
    {
        Node n;
        n.kind = NodeKind::Set;
        n.caseInsensitive = caseInsensitive;
        ClassItem item;
        item.low = item.high = c;
        n.items.push_back(item);
        return add(std::move(n));
    }

    bool hexDigits(std::size_t count, char32_t &value)
    {
        value = 0;
        for (std::size_t k = 0; k < count; ++k) {
            const char32_t h = peek();
            int digit = -1;
            if (h >= U'0' && h <= U'9')
                digit = int(h - U'0');
            else if (h >= U'a' && h <= U'f')
                digit = int(h - U'a') + 10;
            else if (h >= U'A' && h <= U'F')
                digit = int(h - U'A') + 10;
            if (digit < 0)
                return false;
            value = value * 16 + char32_t(digit);
            ++m_pos;
        }
        return true;
    }

    // After a backslash: one class item (a single code point as a one-point range).
    bool escape(ClassItem &item)
    {
        if (atEnd()) {
            fail("a pattern cannot end with \"\\\"");
            return false;
        }
        const char32_t c = peek();
        ++m_pos;
        item = ClassItem{};
        const auto single = [&](char32_t v) {
            item.kind = ItemKind::Range;
            item.low = item.high = v;
            return true;
        };
        switch (c) {
        case U't':
            return single(9);
        case U'n':
            return single(10);
        case U'v':
            return single(11);
        case U'f':
            return single(12);
        case U'r':
            return single(13);
        case U'a':
            return single(7);
        case U'e':
            return single(27);
        case U's':
        case U'S':
            item.kind = ItemKind::WhiteSpace, item.negated = c == U'S';
            return true;
        case U'w':
        case U'W':
            item.kind = ItemKind::Word, item.negated = c == U'W';
            return true;
        case U'd':
        case U'D':
            item.kind = ItemKind::Categories, item.categories = bit(UnicodeCategory::Nd), item.negated = c == U'D';
            return true;
        case U'x': {
            char32_t v = 0;
            if (peek() == U'{') {
                ++m_pos;
                std::size_t digits = 0;
                while (peek() != U'}' && digits < 8) {
                    char32_t d = 0;
                    if (!hexDigits(1, d)) {
                        fail("bad \\x{...} escape");
                        return false;
                    }
                    v = v * 16 + d;
                    ++digits;
                }
                if (peek() != U'}' || digits == 0 || v > 0x10ffff) {
                    fail("bad \\x{...} escape");
                    return false;
                }
                ++m_pos;
                return single(v);
            }
            if (!hexDigits(2, v)) {
                fail("bad \\x escape (expected two hex digits)");
                return false;
            }
            return single(v);
        }
        case U'u': {
            char32_t v = 0;
            if (!hexDigits(4, v)) {
                fail("bad \\u escape (expected four hex digits)");
                return false;
            }
            return single(v);
        }
        case U'p':
        case U'P': {
            item.kind = ItemKind::Categories;
            item.negated = c == U'P';
            if (peek() != U'{') {
                fail("expected \"{\" after \\p");
                return false;
            }
            ++m_pos;
            if (peek() == U'^') {
                item.negated = !item.negated;
                ++m_pos;
            }
            std::string name;
            while (!atEnd() && peek() != U'}' && name.size() < 40) {
                appendUtf8(peek(), name);
                ++m_pos;
            }
            if (peek() != U'}') {
                fail("unterminated \\p{...}");
                return false;
            }
            ++m_pos;
            if (!categoryMask(name, item.categories)) {
                fail("the property \\p{" + printableText(name, 40) + "} is not supported");
                return false;
            }
            return true;
        }
        default:
            break;
        }
        if (c < 0x80 && !((c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z')))
            return single(c); // escaped punctuation or space stands for itself
        if (c == U'0')
            return single(0);
        std::string shown = "\\";
        appendUtf8(c, shown);
        fail("the escape " + printableText(shown, 10) + " is not supported");
        return false;
    }

    int characterClass(bool caseInsensitive)
    {
        Node n;
        n.kind = NodeKind::Set;
        n.caseInsensitive = caseInsensitive;
        if (peek() == U'^') {
            n.negated = true;
            ++m_pos;
        }
        bool first = true;
        while (true) {
            if (atEnd())
                return fail("unterminated character class");
            char32_t c = peek();
            if (c == U']' && !first) {
                ++m_pos;
                break;
            }
            first = false;
            if (c == U'[')
                return fail("nested character classes and POSIX brackets are not supported");
            if (c == U'&' && peek(1) == U'&')
                return fail("class intersection (&&) is not supported");
            ClassItem item;
            ++m_pos;
            if (c == U'\\') {
                if (!escape(item))
                    return 0;
            } else {
                item.low = item.high = c;
            }
            // A range a-z: both ends single code points.
            if (item.kind == ItemKind::Range && !item.negated && peek() == U'-' && peek(1) != U']' &&
                m_pos + 1 < m_text.size()) {
                ++m_pos;
                ClassItem high;
                const char32_t h = peek();
                ++m_pos;
                if (h == U'\\') {
                    if (!escape(high))
                        return 0;
                } else {
                    high.low = high.high = h;
                }
                if (high.kind != ItemKind::Range || high.negated)
                    return fail("a class range must end in a single character");
                if (high.low < item.low)
                    return fail("the class range is reversed");
                item.high = high.low;
            }
            n.items.push_back(item);
        }
        return add(std::move(n));
    }

    int atom(bool caseInsensitive, int depth)
    {
        const char32_t c = peek();
        ++m_pos;
        switch (c) {
        case U'(': {
            bool ci = caseInsensitive;
            int lookahead = -1; // 0: (?=, 1: (?!
            if (peek() == U'?') {
                ++m_pos;
                const char32_t k = peek();
                ++m_pos;
                if (k == U':') {
                } else if (k == U'=' || k == U'!') {
                    lookahead = k == U'!';
                } else if (k == U'i' && peek() == U':') {
                    ++m_pos;
                    ci = true;
                } else if (k == U'-' && peek() == U'i' && peek(1) == U':') {
                    m_pos += 2;
                    ci = false;
                } else if (k == U'<' && (peek() == U'=' || peek() == U'!')) {
                    return fail("lookbehind is not supported");
                } else if (k == U'>') {
                    return fail("atomic groups are not supported");
                } else {
                    return fail("this kind of group is not supported");
                }
            }
            const int inner = alternation(ci, depth + 1);
            if (!m_error.empty())
                return 0;
            if (peek() != U')')
                return fail("missing \")\"");
            ++m_pos;
            if (lookahead < 0)
                return inner;
            Node look;
            look.kind = NodeKind::Lookahead;
            look.negated = lookahead == 1;
            look.children.push_back(inner);
            return add(std::move(look));
        }
        case U'[':
            return characterClass(caseInsensitive);
        case U'.': {
            Node n;
            n.kind = NodeKind::Set;
            n.negated = true;
            ClassItem item;
            item.low = item.high = U'\n';
            n.items.push_back(item);
            return add(std::move(n));
        }
        case U'^':
            return add(bare(NodeKind::LineStart));
        case U'$':
            return add(bare(NodeKind::LineEnd));
        case U'*':
        case U'+':
        case U'?':
            --m_pos;
            return fail("nothing to repeat");
        case U'\\': {
            if (peek() == U'A' || peek() == U'z') {
                const bool start = peek() == U'A';
                ++m_pos;
                return add(bare(start ? NodeKind::TextStart : NodeKind::TextEnd));
            }
            if (peek() >= U'1' && peek() <= U'9')
                return fail("backreferences are not supported");
            ClassItem item;
            if (!escape(item))
                return 0;
            Node n;
            n.kind = NodeKind::Set;
            n.caseInsensitive = caseInsensitive;
            n.items.push_back(item);
            return add(std::move(n));
        }
        default:
            return literal(c, caseInsensitive);
        }
    }
};

// A continuation: what must match after a node, given the position it ended at.
struct Continuation {
    bool (*call)(const void *, std::size_t) = nullptr;
    const void *object = nullptr;
    bool operator()(std::size_t p) const { return call(object, p); }
};

template <typename F>
Continuation continuation(const F &f)
{
    return {[](const void *o, std::size_t p) { return (*static_cast<const F *>(o))(p); }, &f};
}

// Backtracking with continuations: match(node, pos, k) is true when the node matches at pos
// and the rest (k) matches after it; alternatives are tried in order and the first success
// wins, which is Oniguruma's leftmost-first semantics.
class Matcher
{
public:
    Matcher(const Program &program, const std::u32string &text) : m_p(program), m_text(text) {}

    // The end of the match starting at `pos`, or npos.
    std::size_t matchAt(std::size_t pos)
    {
        std::size_t end = std::u32string::npos;
        m_depth = 0;
        m_steps = 0;
        const auto done = [&](std::size_t p) {
            end = p;
            return true;
        };
        match(m_p.root, pos, continuation(done));
        return end;
    }

private:
    const Program &m_p;
    const std::u32string &m_text;
    int m_depth = 0;
    std::int64_t m_steps = 0;

    // A pattern that backtracks exponentially ((a*)*b on a run of a's) gives up at a start
    // position after this many steps, as if it did not match there; the patterns of real
    // tokenizer.json files take a few steps per character.
    static constexpr std::int64_t kMaxSteps = 1000000;

    // Deep recursion comes only from repeated groups on very long text; past this depth the
    // attempt fails rather than overflow the stack (no real tokenizer pattern gets near it).
    static constexpr int kMaxDepth = 4000;

    bool match(int index, std::size_t pos, Continuation k)
    {
        if (++m_steps > kMaxSteps || m_depth >= kMaxDepth)
            return false;
        ++m_depth;
        const bool r = step(index, pos, k);
        --m_depth;
        return r;
    }

    bool sequence(const Node &n, std::size_t i, std::size_t pos, Continuation k)
    {
        if (i == n.children.size())
            return k(pos);
        const auto next = [&](std::size_t p) { return sequence(n, i + 1, p, k); };
        return match(n.children[i], pos, continuation(next));
    }

    bool repeat(const Node &n, std::int64_t count, std::size_t pos, Continuation k)
    {
        const bool more = n.max < 0 || count < n.max;
        const auto again = [&](std::size_t p) {
            if (p == pos && count >= n.min)
                return false; // an empty iteration would loop forever
            return repeat(n, count + 1, p, k);
        };
        if (n.lazy) {
            if (count >= n.min && k(pos))
                return true;
            return more && match(n.children[0], pos, continuation(again));
        }
        if (more && match(n.children[0], pos, continuation(again)))
            return true;
        return count >= n.min && k(pos);
    }

    bool step(int index, std::size_t pos, Continuation k)
    {
        const Node &n = m_p.nodes[std::size_t(index)];
        switch (n.kind) {
        case NodeKind::Empty:
            return k(pos);
        case NodeKind::Set:
            return pos < m_text.size() && m_p.setContains(n, m_text[pos]) && k(pos + 1);
        case NodeKind::Sequence:
            return sequence(n, 0, pos, k);
        case NodeKind::Alternation:
            for (int child : n.children)
                if (match(child, pos, k))
                    return true;
            return false;
        case NodeKind::Repeat: {
            const Node &child = m_p.nodes[std::size_t(n.children[0])];
            if (child.kind != NodeKind::Set)
                return repeat(n, 0, pos, k);
            // A repeated single character: count the run once, then back off one at a time.
            std::size_t run = 0;
            const std::size_t limit =
                n.max < 0 ? m_text.size() - pos : std::min<std::size_t>(std::size_t(n.max), m_text.size() - pos);
            while (run < limit && m_p.setContains(child, m_text[pos + run]))
                ++run;
            if (std::int64_t(run) < n.min)
                return false;
            if (n.lazy) {
                for (std::size_t c = std::size_t(n.min); c <= run; ++c)
                    if (k(pos + c))
                        return true;
                return false;
            }
            for (std::size_t c = run + 1; c-- > std::size_t(n.min);)
                if (k(pos + c))
                    return true;
            return false;
        }
        case NodeKind::Lookahead: {
            const auto any = [](std::size_t) { return true; };
            const bool found = match(n.children[0], pos, continuation(any));
            return found != n.negated && k(pos);
        }
        case NodeKind::LineStart:
            return (pos == 0 || m_text[pos - 1] == U'\n') && k(pos);
        case NodeKind::LineEnd:
            return (pos == m_text.size() || m_text[pos] == U'\n') && k(pos);
        case NodeKind::TextStart:
            return pos == 0 && k(pos);
        case NodeKind::TextEnd:
            return pos == m_text.size() && k(pos);
        }
        return false;
    }
};

} // namespace

Result<TokenRegex> TokenRegex::compile(std::string_view pattern)
{
    auto program = Parser(pattern).run();
    if (!program)
        return program.error();
    TokenRegex r;
    r.m_program = std::make_shared<const Program>(std::move(*program));
    return r;
}

std::vector<TokenRegex::Match> TokenRegex::findAll(std::string_view text) const
{
    std::u32string chars;
    std::vector<std::size_t> offsets;
    chars.reserve(text.size());
    offsets.reserve(text.size() + 1);
    for (std::size_t i = 0; i < text.size();) {
        const Utf8Char c = decodeUtf8(text, i);
        chars.push_back(c.value);
        offsets.push_back(i);
        i += c.length;
    }
    offsets.push_back(text.size());
    std::vector<Match> matches;
    if (!m_program)
        return matches;
    Matcher matcher(*m_program, chars);
    for (std::size_t pos = 0; pos <= chars.size();) {
        const std::size_t end = matcher.matchAt(pos);
        if (end == std::u32string::npos) {
            ++pos;
            continue;
        }
        matches.push_back({offsets[pos], offsets[end]});
        pos = end > pos ? end : pos + 1;
    }
    return matches;
}

} // namespace attnscope
