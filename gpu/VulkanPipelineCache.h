#pragma once

// The pipelines' cache on disk (docs/architecture.md, "Pipeline cache"): what the driver made of
// the shaders at one start, given back to it at the next, so a backend starts without compiling
// them again. One file per device (vendor and device ids) in a folder the application names; the
// driver's data is passed on only when its header says it is this device's, with this driver's
// pipelineCacheUUID; anything else (another driver version, a truncated or foreign file) is
// ignored and replaced at the next save.

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace attnscope::vk {

struct DeviceInfo;

// Whether `bytes` begin with a pipeline cache header (VkPipelineCacheHeaderVersionOne: its own
// length, at least 32; version 1; the vendor and device ids; the 16-byte pipelineCacheUUID)
// naming this device and driver, and are at least as long as the header says it is.
bool pipelineCacheFits(std::span<const unsigned char> bytes, const DeviceInfo &device);

// The device's cache file in `folder`: "pipelines-VVVV-DDDD.bin" (hexadecimal ids).
std::string pipelineCacheFile(const std::string &folder, const DeviceInfo &device);

} // namespace attnscope::vk
