#include "core/io/MemoryLimits.h"

#include "core/ErrorCode.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

namespace attnscope {

namespace {

constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

// The budget is this share of what is usable: the rest is for the process itself (Qt,
// Vulkan, thread stacks, allocator slack) and for the machine.
constexpr double kBudgetShare = 0.8;

std::int64_t readNumberFile(const std::string &path)
{
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max")
        return kUnlimited;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (end == text.c_str() || v >= (unsigned long long)kUnlimited)
        return kUnlimited;
    return std::int64_t(v);
}

// "MemTotal:       24684096 kB" -> bytes.
void readMeminfo(std::int64_t &total, std::int64_t &available)
{
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        long long kb = 0;
        if (std::sscanf(line.c_str(), "MemTotal: %lld kB", &kb) == 1)
            total = kb * 1024;
        else if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kb) == 1)
            available = kb * 1024;
    }
}

// Address space and data segment in use, from /proc/self/status (VmSize, VmData).
void readProcessUse(std::int64_t &vmSize, std::int64_t &vmData)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        long long kb = 0;
        if (std::sscanf(line.c_str(), "VmSize: %lld kB", &kb) == 1)
            vmSize = kb * 1024;
        else if (std::sscanf(line.c_str(), "VmData: %lld kB", &kb) == 1)
            vmData = kb * 1024;
    }
}

std::int64_t rlimitLeft(int resource, std::int64_t inUse)
{
    rlimit limit{};
    if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= rlim_t(kUnlimited))
        return kUnlimited;
    return std::max<std::int64_t>(0, std::int64_t(limit.rlim_cur) - inUse);
}

// The memory controller's limit minus its usage, cgroup v2 first, then v1.
std::int64_t cgroupLeft()
{
    std::ifstream in("/proc/self/cgroup");
    std::string line, v2Path, v1Path;
    while (std::getline(in, line)) {
        if (line.rfind("0::", 0) == 0)
            v2Path = line.substr(3);
        else if (const auto at = line.find(":memory:"); at != std::string::npos)
            v1Path = line.substr(at + 8);
    }
    std::int64_t left = kUnlimited;
    if (!v2Path.empty()) {
        const std::string dir = "/sys/fs/cgroup" + v2Path;
        const std::int64_t max = readNumberFile(dir + "/memory.max");
        if (max != kUnlimited)
            left = std::min(left, std::max<std::int64_t>(0, max - readNumberFile(dir + "/memory.current")));
    }
    for (const std::string &dir : {"/sys/fs/cgroup/memory" + v1Path, std::string("/sys/fs/cgroup/memory")}) {
        const std::int64_t max = readNumberFile(dir + "/memory.limit_in_bytes");
        if (max == kUnlimited || max >= (std::int64_t(1) << 60))
            continue; // v1 writes "no limit" as a page-rounded INT64_MAX
        const std::int64_t used = readNumberFile(dir + "/memory.usage_in_bytes");
        left = std::min(left, std::max<std::int64_t>(0, max - (used == kUnlimited ? 0 : used)));
        break;
    }
    return left;
}

// ATTNSCOPE_MEMORY_LIMIT=2G and the like; kUnlimited when unset or unreadable.
std::int64_t environmentLimit()
{
    const char *text = std::getenv("ATTNSCOPE_MEMORY_LIMIT");
    if (!text || !*text)
        return kUnlimited;
    char *end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || !(value > 0))
        return kUnlimited;
    double scale = 1;
    switch (*end) {
    case 'k':
    case 'K':
        scale = 1024.0;
        break;
    case 'm':
    case 'M':
        scale = 1024.0 * 1024;
        break;
    case 'g':
    case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
    default:
        break;
    }
    const double bytes = value * scale;
    return bytes >= double(kUnlimited) ? kUnlimited : std::int64_t(bytes);
}

} // namespace

std::int64_t MemoryInfo::usable() const
{
    return std::min({physical, available, addressSpaceLeft, dataLeft, cgroupLeft});
}

MemoryInfo memoryInfo()
{
    MemoryInfo info;
    info.physical = info.available = kUnlimited;
    readMeminfo(info.physical, info.available);
    if (info.available == kUnlimited) // kernels before 3.14 have no MemAvailable
        info.available = std::int64_t(::sysconf(_SC_AVPHYS_PAGES)) * std::int64_t(::sysconf(_SC_PAGESIZE));
    std::int64_t vmSize = 0, vmData = 0;
    readProcessUse(vmSize, vmData);
    info.addressSpaceLeft = rlimitLeft(RLIMIT_AS, vmSize);
    info.dataLeft = rlimitLeft(RLIMIT_DATA, vmData);
    info.cgroupLeft = cgroupLeft();
    return info;
}

void keepFreedMemoryForReuse()
{
    static std::once_flag once;
    std::call_once(once, [] {
        mallopt(M_MMAP_THRESHOLD, 64 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
    });
}

std::int64_t memoryBudget()
{
    const std::int64_t usable = memoryInfo().usable();
    const std::int64_t share = usable == kUnlimited ? kUnlimited : std::int64_t(double(usable) * kBudgetShare);
    return std::min(share, environmentLimit());
}

Status checkFitsInMemory(std::int64_t bytes, const std::string &what)
{
    const std::int64_t budget = memoryBudget();
    if (bytes <= budget)
        return Ok{};
    return codedError("memory.refused", {formatBytes(bytes), what, formatBytes(budget)}, ErrorKind::TooLarge);
}

std::int64_t maxInputFileBytes()
{
    return std::min<std::int64_t>(memoryBudget() / 16, std::int64_t(1) << 30);
}

std::string formatBytes(std::int64_t bytes)
{
    if (bytes == kUnlimited)
        return "more than 8 EiB";
    static const char *const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
    double value = double(bytes) / 1024;
    int unit = 0;
    while (value >= 1024 && unit < 5) {
        value /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, value >= 100 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
    return buf;
}

std::int64_t saturatingMul(std::int64_t a, std::int64_t b)
{
    if (a <= 0 || b <= 0)
        return a < 0 || b < 0 ? kUnlimited : 0;
    if (a > kUnlimited / b)
        return kUnlimited;
    return a * b;
}

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b)
{
    if (a > kUnlimited - b)
        return kUnlimited;
    return a + b;
}

double peakResidentMiB()
{
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0.0;
    return double(usage.ru_maxrss) / 1024.0;
}

} // namespace attnscope
