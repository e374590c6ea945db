#pragma once

#include "core/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

// One member of a ZIP archive, from its central directory.
struct ZipMember {
    std::string name;
    int method = 0; // 0 stored, 8 deflated
    std::uint32_t crc = 0;
    std::uint64_t compressedSize = 0;
    std::uint64_t size = 0;
    std::uint64_t localHeaderOffset = 0;
};

// The members of a ZIP archive (NumPy's .npz), ZIP64 sizes included. Every offset and size is
// checked against the bytes before it is used; errors name the member and the offset.
Result<std::vector<ZipMember>> listZipMembers(std::string_view zip);

// Where a member's compressed bytes are inside the archive (for a stored member, its data).
Result<std::string_view> zipMemberBytes(std::string_view zip, const ZipMember &member);

// A member's uncompressed bytes (stored or deflated), refused with kind TooLarge when its size
// is above maxBytes, and checked against the member's CRC-32.
Result<std::string> zipMemberContent(std::string_view zip, const ZipMember &member, std::uint64_t maxBytes);

} // namespace attnscope
