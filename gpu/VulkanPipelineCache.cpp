#include "gpu/VulkanPipelineCache.h"

#include "gpu/VulkanDevice.h"

#include <cstdio>
#include <cstring>
#include <filesystem>

namespace attnscope::vk {

namespace {

std::uint32_t readU32(const unsigned char *p)
{
    return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}

} // namespace

bool pipelineCacheFits(std::span<const unsigned char> bytes, const DeviceInfo &device)
{
    constexpr std::size_t kHeader = 16 + 16; // four uint32 fields and the UUID
    if (bytes.size() < kHeader)
        return false;
    const std::uint32_t length = readU32(bytes.data()), version = readU32(bytes.data() + 4);
    if (length < kHeader || length > bytes.size() || version != 1) // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
        return false;
    return readU32(bytes.data() + 8) == device.vendorId && readU32(bytes.data() + 12) == device.deviceId &&
           std::memcmp(bytes.data() + 16, device.pipelineCacheUuid.data(), 16) == 0;
}

std::string pipelineCacheFile(const std::string &folder, const DeviceInfo &device)
{
    char name[64];
    std::snprintf(name, sizeof name, "pipelines-%04x-%04x.bin", unsigned(device.vendorId), unsigned(device.deviceId));
    return (std::filesystem::path(folder) / name).string();
}

} // namespace attnscope::vk
