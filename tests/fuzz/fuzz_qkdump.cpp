// Fuzz target for the attnscope-qk dump reader (QkDump::open, then every layer). The input is
// split at its first NUL byte into attnscope-qk.json and the bytes of layer-000.safetensors,
// both written into a folder of this process's own, so the bytes reach the index's checks, the
// confinement of the files it names, the safetensors header, the shapes and dtypes and the scan
// of every value. The seeds (tests/fuzz/corpus/qkdump) are the fixtures of tests/fixtures/qk with
// every layer naming layer-000. A dump opens or gives a one-line error; an opened dump's layers
// all read and validate. Never a crash, an exception or a hang.

#include "core/attention/QkAttention.h"
#include "core/formats/QkDump.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace {

void require(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_qkdump: %s\n", what);
        std::abort();
    }
}

void checkMessage(const std::string &message)
{
    require(!message.empty(), "an error message is empty");
    for (unsigned char c : message)
        require(c >= 0x20 && c != 0x7f, "an error message is not one clean line");
}

// The folder the inputs are written to, removed when the process ends.
struct Folder {
    std::string path;
    Folder()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "fuzz_qkdump-XXXXXX").string();
        require(::mkdtemp(pattern.data()) != nullptr, "cannot create a folder");
        path = pattern;
    }
    ~Folder()
    {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

void writeFile(const std::string &path, std::string_view bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    require(bool(out), "cannot write an input file");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    static const Folder folder;
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const std::size_t nul = input.find('\0');
    const std::string_view index = input.substr(0, nul);
    const std::string_view layer = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
    writeFile(folder.path + "/" + QkDump::kIndexName, index);
    writeFile(folder.path + "/layer-000.safetensors", layer);

    auto dump = QkDump::open(folder.path);
    if (!dump) {
        checkMessage(dump.message());
        return 0;
    }
    require(dump->layers() > 0 && dump->queries() > 0 && dump->keys() > 0, "an empty dump opened");
    require(dump->tokens().empty() || std::int64_t(dump->tokens().size()) == dump->queries(),
            "not one token per query");
    require(dump->keyTokens().empty() || std::int64_t(dump->keyTokens().size()) == dump->keys(),
            "not one token per key");
    for (int l = 0; l < dump->layers(); ++l) {
        auto read = dump->layer(l);
        require(bool(read), "a layer of an opened dump does not read");
        require(bool(validateQkLayer(**read)), "a layer of an opened dump does not validate");
        require((*read)->tq() == dump->queries() && (*read)->tk() == dump->keys(), "a layer's rows differ");
        require(dump->facts(l).heads == (*read)->heads, "facts and layer differ");
    }
    require(bool(dump->checkUnchanged()), "the layer files changed");
    return 0;
}
