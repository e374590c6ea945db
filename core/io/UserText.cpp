#include "core/io/UserText.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace attnscope {

namespace {

// Length of the valid UTF-8 sequence at text[i] and its code point, or 0 when invalid.
std::size_t utf8Sequence(std::string_view text, std::size_t i, std::uint32_t &codePoint)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    std::size_t length = 0;
    std::uint32_t min = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        length = 2, codePoint = b0 & 0x1fu, min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        length = 3, codePoint = b0 & 0x0fu, min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        length = 4, codePoint = b0 & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (i + length > text.size())
        return 0;
    for (std::size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80)
            return 0;
        codePoint = (codePoint << 6) | (byte(i + k) & 0x3fu);
    }
    if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff))
        return 0;
    return length;
}

// Code points that are valid text but act on a terminal or on the line structure.
bool steersDisplay(std::uint32_t c)
{
    return (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029 || c == 0x200e || c == 0x200f ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff;
}

enum class Escapes {
    Message,  // one line: backslashes doubled, controls as \xNN
    Quoted,   // the same with '"' escaped
    Terminal, // line breaks kept, backslashes as they are, controls as \uNNNN (terminalText)
};

std::string escaped(std::string_view text, std::size_t maxBytes, Escapes mode)
{
    const bool terminal = mode == Escapes::Terminal;
    std::string out;
    char buf[16];
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char b = static_cast<unsigned char>(text[i]);
        std::string piece;
        std::size_t used = 1;
        if (terminal && (b == '\\' || b == '\n')) {
            piece.assign(1, char(b));
        } else if (b == '\\') {
            piece = "\\\\";
        } else if (mode == Escapes::Quoted && b == '"') {
            piece = "\\\"";
        } else if ((b < 0x20 || b == 0x7f) && terminal) {
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(b));
            piece = buf;
        } else if (b < 0x20 || b == 0x7f) {
            std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(b));
            piece = buf;
        } else if (b < 0x80) {
            piece.assign(1, char(b));
        } else {
            std::uint32_t codePoint = 0;
            used = utf8Sequence(text, i, codePoint);
            if (used == 0) {
                used = 1;
                std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(b));
                piece = buf;
            } else if (steersDisplay(codePoint)) {
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(codePoint));
                piece = buf;
            } else {
                piece.assign(text.substr(i, used));
            }
        }
        if (out.size() + piece.size() > maxBytes) {
            out += "...";
            return out;
        }
        out += piece;
        i += used;
    }
    return out;
}

} // namespace

std::string printableText(std::string_view text, std::size_t maxBytes)
{
    return escaped(text, maxBytes, Escapes::Message);
}

std::string quotedText(std::string_view text, std::size_t maxBytes)
{
    std::string out(1, '"');
    out.append(escaped(text, maxBytes, Escapes::Quoted)).append(1, '"');
    return out;
}

std::string terminalText(std::string_view text)
{
    return escaped(text, std::string::npos, Escapes::Terminal);
}

std::size_t incompleteUtf8Tail(std::string_view text)
{
    // The last lead byte within three bytes of the end, and whether its sequence runs past it.
    for (std::size_t back = 1; back <= std::min<std::size_t>(3, text.size()); ++back) {
        const unsigned char b = static_cast<unsigned char>(text[text.size() - back]);
        if ((b & 0xc0) == 0x80)
            continue; // a continuation byte: look further back
        const std::size_t length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
        return length > back ? back : 0;
    }
    return 0;
}

} // namespace attnscope
