// A writer for tst_outputfiles to kill: writes BYTES to TARGET through AtomicFileWriter, says
// "writing" on stdout half-way and waits for a line on stdin before it writes the rest and
// commits ("committed"). `named` takes the path of a file system without O_TMPFILE.
//   output_writer TARGET BYTES [named]

#include "core/io/FileIo.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char *argv[])
{
    using namespace attnscope;
    if (argc < 3) {
        std::fprintf(stderr, "usage: output_writer TARGET BYTES [named]\n");
        return 2;
    }
    const std::size_t total = std::strtoull(argv[2], nullptr, 10);
    if (argc > 3 && std::string(argv[3]) == "named")
        AtomicFileWriter::setUnnamedTemporariesAllowed(false);
    AtomicFileWriter file(argv[1]);
    if (Status s = file.open(); !s) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
    }
    std::vector<char> chunk(1 << 20);
    std::size_t done = 0;
    auto writeUpTo = [&](std::size_t end) {
        while (done < end) {
            const std::size_t n = std::min(chunk.size(), end - done);
            for (std::size_t i = 0; i < n; ++i)
                chunk[i] = char('a' + (done + i) % 26);
            file.write(chunk.data(), n);
            done += n;
        }
    };
    writeUpTo(total / 2);
    std::printf("writing %s\n", file.unnamedTemporary() ? "unnamed" : "named");
    std::fflush(stdout);
    char line[16];
    if (!std::fgets(line, sizeof line, stdin))
        return 3;
    writeUpTo(total);
    if (Status s = file.commit(); !s) {
        std::fprintf(stderr, "%s\n", s.message().c_str());
        return 1;
    }
    std::printf("committed\n");
    return 0;
}
