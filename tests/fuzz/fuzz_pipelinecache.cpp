// Fuzz target for the pipeline cache file's check (gpu/VulkanPipelineCache.h): the bytes of a
// cache file are passed to the driver only when pipelineCacheFits accepts their header for the
// device. Checked here against an independent reading of VkPipelineCacheHeaderVersionOne for a
// fixed device: never a read past the input, never a header of another device or version let
// through, never a fitting one refused.

#include "gpu/VulkanDevice.h"
#include "gpu/VulkanPipelineCache.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    attnscope::vk::DeviceInfo device;
    device.vendorId = 0x10de;
    device.deviceId = 0x2330;
    for (std::size_t i = 0; i < device.pipelineCacheUuid.size(); ++i)
        device.pipelineCacheUuid[i] = std::uint8_t(0xa0 + i);
    // A copy of exactly `size` bytes, so a read past the end is caught under ASan.
    std::vector<unsigned char> bytes(data, data + size);
    const bool fits = attnscope::vk::pipelineCacheFits(bytes, device);
    bool expected = size >= 32;
    if (expected) {
        std::uint32_t field[4];
        std::memcpy(field, bytes.data(), sizeof field); // little-endian, as the header is
        expected = field[0] >= 32 && field[0] <= size && field[1] == 1 && field[2] == device.vendorId &&
                   field[3] == device.deviceId &&
                   std::memcmp(bytes.data() + 16, device.pipelineCacheUuid.data(), 16) == 0;
    }
    if (fits != expected) {
        std::fprintf(stderr, "fuzz_pipelinecache: %s a header it should %s\n", fits ? "accepted" : "refused",
                     fits ? "refuse" : "accept");
        std::abort();
    }
    return 0;
}
