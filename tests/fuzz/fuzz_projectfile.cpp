// Fuzz target for the project-file reader (parseProject): any bytes must give a project or a
// one-line error, never a crash, an exception or a sanitizer report; a project that reads
// must save and read back, and a small one computes on the CPU engine (the modern fields' odd
// values: huge RoPE positions, tiny soft-caps, sinks beside empty rows).

#include "core/attention/CpuBackend.h"
#include "core/attention/Validation.h"
#include "core/formats/ProjectFile.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace {

void check(bool condition, const char *what, const std::string &detail)
{
    if (condition)
        return;
    std::fprintf(stderr, "fuzz_projectfile: %s: %s\n", what, detail.c_str());
    std::abort();
}

// A message meant for one terminal line: no control characters, bounded.
bool oneLine(const std::string &message)
{
    for (unsigned char c : message)
        if (c < 0x20 || c == 0x7f)
            return false;
    return !message.empty() && message.size() < 2000;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    auto project = parseProject(text);
    if (!project) {
        check(oneLine(project.message()), "error message is not one clean line", project.message());
        return 0;
    }
    const std::string saved = serializeProject(*project);
    auto again = parseProject(saved);
    check(again.ok(), "a saved project does not read back", again.ok() ? "" : again.message());
    check(serializeProject(*again) == saved, "saving twice differs", saved.substr(0, 200));
    if (traceBytes(project->problem) < (1 << 20)) {
        auto trace = CpuBackend(1).compute(project->problem);
        check(trace.ok() || trace.kind() == ErrorKind::NonFinite, "a valid project does not compute",
              trace.ok() ? "" : trace.message());
    }
    return 0;
}
