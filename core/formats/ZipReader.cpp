#include "core/formats/ZipReader.h"

#include "core/ErrorCode.h"

#include "core/io/UserText.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace attnscope {

namespace {

std::uint64_t le(std::string_view b, std::size_t at, int bytes)
{
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v |= std::uint64_t(static_cast<unsigned char>(b[at + std::size_t(i)])) << (8 * i);
    return v;
}

constexpr std::uint32_t kEndOfDirectory = 0x06054b50, kZip64Locator = 0x07064b50, kZip64End = 0x06064b50,
                        kDirectoryEntry = 0x02014b50, kLocalHeader = 0x04034b50;

} // namespace

Result<std::vector<ZipMember>> listZipMembers(std::string_view zip)
{
    if (zip.size() < 22)
        return codedError("zip.tooShort", {std::to_string(zip.size())});
    // The end-of-directory record is in the last 22 + 65535 bytes (after it, a comment).
    std::size_t end = std::string_view::npos;
    const std::size_t lowest = zip.size() > 22 + 65535 ? zip.size() - 22 - 65535 : 0;
    for (std::size_t at = zip.size() - 22;; --at) {
        if (le(zip, at, 4) == kEndOfDirectory) {
            end = at;
            break;
        }
        if (at == lowest)
            break;
    }
    if (end == std::string_view::npos)
        return codedError("zip.noDirectory", {});
    std::uint64_t count = le(zip, end + 10, 2), dirSize = le(zip, end + 12, 4), dirOffset = le(zip, end + 16, 4);
    if ((count == 0xffff || dirSize == 0xffffffff || dirOffset == 0xffffffff) && end >= 20 &&
        le(zip, end - 20, 4) == kZip64Locator) {
        // The 56-byte ZIP64 record lies before its locator. (Measured from the locator, not as
        // `zip.size() - 56`, which wrapped for a file of 42 to 55 bytes and let `at` be anything.)
        const std::size_t locator = end - 20;
        const std::uint64_t at = le(zip, locator + 8, 8);
        if (locator < 56 || at > locator - 56 || le(zip, std::size_t(at), 4) != kZip64End)
            return codedError("zip.zip64Record", {std::to_string(at)});
        count = le(zip, std::size_t(at) + 32, 8);
        dirSize = le(zip, std::size_t(at) + 40, 8);
        dirOffset = le(zip, std::size_t(at) + 48, 8);
    }
    if (dirOffset > zip.size() || dirSize > zip.size() - dirOffset)
        return codedError("zip.directory.pastEnd", {std::to_string(dirOffset), std::to_string(dirSize)});
    if (count > dirSize / 46)
        return codedError("zip.directory.count", {std::to_string(count), std::to_string(dirSize)});

    std::vector<ZipMember> members;
    std::size_t at = std::size_t(dirOffset);
    const std::size_t dirEnd = std::size_t(dirOffset + dirSize);
    for (std::uint64_t n = 0; n < count; ++n) {
        if (dirEnd - at < 46 || le(zip, at, 4) != kDirectoryEntry)
            return codedError("zip.entry", {std::to_string(n), std::to_string(at)});
        ZipMember m;
        m.method = int(le(zip, at + 10, 2));
        m.crc = std::uint32_t(le(zip, at + 16, 4));
        m.compressedSize = le(zip, at + 20, 4);
        m.size = le(zip, at + 24, 4);
        const std::size_t nameLen = le(zip, at + 28, 2), extraLen = le(zip, at + 30, 2),
                          commentLen = le(zip, at + 32, 2);
        m.localHeaderOffset = le(zip, at + 42, 4);
        if (dirEnd - at - 46 < nameLen + extraLen + commentLen)
            return codedError("zip.entry.pastEnd", {std::to_string(n)});
        m.name = std::string(zip.substr(at + 46, nameLen));
        // ZIP64: the sizes and offset that do not fit in 32 bits follow in extra field 0x0001.
        std::size_t e = at + 46 + nameLen;
        const std::size_t extraEnd = e + extraLen;
        while (extraEnd - e >= 4) {
            const std::size_t id = le(zip, e, 2), len = le(zip, e + 2, 2);
            if (extraEnd - e - 4 < len)
                break;
            if (id == 1) {
                std::size_t f = e + 4;
                const std::size_t fEnd = f + len;
                for (std::uint64_t *field : {&m.size, &m.compressedSize, &m.localHeaderOffset})
                    if (*field == 0xffffffff && fEnd - f >= 8) {
                        *field = le(zip, f, 8);
                        f += 8;
                    }
            }
            e += 4 + len;
        }
        members.push_back(std::move(m));
        at += 46 + nameLen + extraLen + commentLen;
    }
    return members;
}

Result<std::string_view> zipMemberBytes(std::string_view zip, const ZipMember &m)
{
    const std::string shown = quotedText(m.name); // "ZIP member %1" in the templates
    const std::uint64_t at = m.localHeaderOffset;
    if (at > zip.size() || zip.size() - at < 30 || le(zip, std::size_t(at), 4) != kLocalHeader)
        return codedError("zip.localHeader", {shown, std::to_string(at)});
    const std::uint64_t data = at + 30 + le(zip, std::size_t(at) + 26, 2) + le(zip, std::size_t(at) + 28, 2);
    if (data > zip.size() || m.compressedSize > zip.size() - data)
        return codedError("zip.member.pastEnd",
                          {shown, std::to_string(m.compressedSize), std::to_string(data), std::to_string(zip.size())});
    return zip.substr(std::size_t(data), std::size_t(m.compressedSize));
}

Result<std::string> zipMemberContent(std::string_view zip, const ZipMember &m, std::uint64_t maxBytes)
{
    const std::string shown = quotedText(m.name); // "ZIP member %1" in the templates
    auto bytes = zipMemberBytes(zip, m);
    if (!bytes)
        return bytes.error();
    if (m.size > maxBytes)
        return codedError("zip.member.tooLarge", {shown, std::to_string(m.size), std::to_string(maxBytes)},
                          ErrorKind::TooLarge);
    // Deflate cannot expand more than about 1032:1, so a member that claims more is lying about
    // its size; refusing it here keeps a 200-byte file from reserving a gigabyte.
    if (m.method == 8 && m.size > m.compressedSize * 1032 + 1024)
        return codedError("zip.member.claims", {shown, std::to_string(m.size), std::to_string(m.compressedSize)});
    std::string out;
    if (m.method == 0) {
        if (m.size != m.compressedSize)
            return codedError("zip.member.storedSizes", {shown});
        out.assign(*bytes);
    } else if (m.method == 8) {
        out.resize(std::size_t(m.size));
        z_stream z{};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
            return Error{"ZIP member " + shown + ": cannot start inflating", ErrorKind::Internal};
        z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes->data()));
        z.avail_in = uInt(std::min<std::size_t>(bytes->size(), std::numeric_limits<uInt>::max()));
        z.next_out = reinterpret_cast<Bytef *>(out.data());
        z.avail_out = uInt(std::min<std::size_t>(out.size(), std::numeric_limits<uInt>::max()));
        int rc = Z_OK;
        // Members over 4 GiB are fed in pieces, as zlib counts in 32 bits.
        while (rc == Z_OK) {
            rc = inflate(&z, Z_NO_FLUSH);
            if (z.avail_in == 0 &&
                std::size_t(reinterpret_cast<const char *>(z.next_in) - bytes->data()) < bytes->size())
                z.avail_in = uInt(std::min<std::size_t>(
                    bytes->size() - std::size_t(reinterpret_cast<const char *>(z.next_in) - bytes->data()),
                    std::numeric_limits<uInt>::max()));
            if (z.avail_out == 0 && z.total_out < out.size())
                z.avail_out = uInt(std::min<std::size_t>(out.size() - z.total_out, std::numeric_limits<uInt>::max()));
        }
        const auto produced = z.total_out;
        inflateEnd(&z);
        if (rc != Z_STREAM_END || produced != m.size)
            return codedError("zip.corrupt", {shown, std::to_string(produced), std::to_string(m.size)});
    } else {
        return codedError("zip.method", {shown, std::to_string(m.method)});
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    for (std::size_t done = 0; done < out.size();) {
        const std::size_t piece = std::min<std::size_t>(out.size() - done, 1u << 30);
        crc = crc32(crc, reinterpret_cast<const Bytef *>(out.data() + done), uInt(piece));
        done += piece;
    }
    if (std::uint32_t(crc) != m.crc)
        return codedError("zip.crc", {shown});
    return out;
}

} // namespace attnscope
