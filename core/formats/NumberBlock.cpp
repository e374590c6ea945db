#include "core/formats/NumberBlock.h"

#include "core/ErrorCode.h"
#include "core/io/UserText.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace attnscope {

namespace {

bool isSeparator(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '\r';
}

// The text with every row on a line of its own. A bracketed text keeps what lies between its first
// "[" and its last "]" ("array(", "tensor(", ", dtype=float32)" and the like go); each "]" ends a
// row, and the brackets go.
std::string rowsOnLines(std::string_view text)
{
    const auto open = text.find('['), close = text.rfind(']');
    if (open != std::string_view::npos && close != std::string_view::npos && close > open)
        text = text.substr(open, close - open + 1);
    std::string out;
    out.reserve(text.size());
    for (const char c : text)
        out += c == ']' ? '\n' : c == '[' ? ' ' : c;
    return out;
}

} // namespace

Result<NumberBlock> parseNumberBlock(std::string_view text)
{
    const std::string lines = rowsOnLines(text);
    NumberBlock block;
    std::size_t pos = 0;
    int row = 0;
    while (pos <= lines.size()) {
        const std::size_t end = std::min(lines.find('\n', pos), lines.size());
        const std::string_view line(lines.data() + pos, end - pos);
        pos = end + 1;
        std::vector<double> numbers;
        std::size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && isSeparator(line[i]))
                ++i;
            if (i >= line.size())
                break;
            std::size_t j = i;
            while (j < line.size() && !isSeparator(line[j]))
                ++j;
            const std::string token(line.substr(i, j - i));
            i = j;
            const std::string line = std::to_string(row + 1), number = std::to_string(numbers.size() + 1);
            char *stop = nullptr;
            errno = 0;
            const double v = std::strtod(token.c_str(), &stop);
            if (stop != token.c_str() + token.size() || token.empty() || !std::isfinite(v))
                return codedError("paste.notNumber", {line, number, printableText(token, 40)});
            if (std::abs(v) > double(std::numeric_limits<float>::max()))
                return codedError("paste.float32", {line, number, printableText(token, 40)});
            numbers.push_back(v);
            if (block.values.size() + numbers.size() > kMaxPastedNumbers)
                return codedError("paste.tooMany", {std::to_string(kMaxPastedNumbers)});
        }
        if (numbers.empty())
            continue; // a blank line, or the space between "]" and "["
        if (block.rows > 0 && int(numbers.size()) != block.cols)
            return numbers.size() == 1
                       ? codedError("paste.raggedOne", {std::to_string(row + 1), std::to_string(block.cols)})
                       : codedError("paste.ragged", {std::to_string(row + 1), std::to_string(numbers.size()),
                                                     std::to_string(block.cols)});
        block.cols = int(numbers.size());
        block.values.insert(block.values.end(), numbers.begin(), numbers.end());
        ++block.rows;
        ++row;
    }
    if (block.rows == 0)
        return codedError("paste.empty", {});
    return block;
}

} // namespace attnscope
