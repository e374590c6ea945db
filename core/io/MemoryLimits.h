#pragma once

#include "core/Result.h"

#include <cstdint>
#include <string>

namespace attnscope {

// What this process may still allocate, from what the machine and its limits say now. Every
// figure is in bytes; a limit that is not set reads as INT64_MAX.
struct MemoryInfo {
    std::int64_t physical = 0;         // MemTotal
    std::int64_t available = 0;        // MemAvailable (free plus reclaimable cache)
    std::int64_t addressSpaceLeft = 0; // RLIMIT_AS minus the address space in use (prlimit --as)
    std::int64_t dataLeft = 0;         // RLIMIT_DATA minus the data segment in use
    std::int64_t cgroupLeft = 0;       // memory.max (v2) or memory.limit_in_bytes (v1) minus usage

    // The smallest of the above.
    std::int64_t usable() const;
};

MemoryInfo memoryInfo();

// The bytes one piece of work (a computation, an export, a file read) may take: a fraction of
// MemoryInfo::usable(), so the process, the window and the rest of the machine keep room.
// ATTNSCOPE_MEMORY_LIMIT (bytes, or with a K/M/G suffix) lowers it, for tests and shared hosts.
std::int64_t memoryBudget();

// Ok when `bytes` fit in memoryBudget(); else an Error of kind TooLarge naming both figures:
// "size: this problem needs 14.4 GiB for its intermediate tensors; this machine allows 11.8 GiB".
// `what` completes "needs X for ..." ("its intermediate tensors", "the JSON export").
Status checkFitsInMemory(std::int64_t bytes, const std::string &what);

// Makes the C allocator keep freed memory for reuse: blocks below 64 MiB come from the heap and
// up to 256 MiB of freed heap stays mapped, instead of glibc's defaults (blocks from 128 KiB up
// mapped and unmapped each time, the threshold adapting only up to 32 MiB). A forward frees and
// allocates the same tens of megabytes per layer; each fresh mapping costs a page fault per
// 4 KiB written, about a sixth of a Qwen2.5-0.5B forward at T = 1024 (docs/performance.md).
// Process-wide and idempotent; the CPU engine calls it when it is created.
void keepFreedMemoryForReuse();

// The largest project or .npy file read into memory: the parsed document takes up to about
// 16 bytes per byte of text, so a sixteenth of the budget (and never more than 1 GiB).
std::int64_t maxInputFileBytes();

// "14.4 GiB", "512 MiB", "3.0 KiB", "17 bytes".
std::string formatBytes(std::int64_t bytes);

// Saturating arithmetic for size estimates: never overflows, INT64_MAX stands for "too much".
std::int64_t saturatingMul(std::int64_t a, std::int64_t b);
std::int64_t saturatingAdd(std::int64_t a, std::int64_t b);

// The process's peak resident memory so far in MiB (getrusage's ru_maxrss, which counts file-backed
// pages too): what benchmarks and `--pool`/`bench` report. 0 where the system does not say.
double peakResidentMiB();

} // namespace attnscope
