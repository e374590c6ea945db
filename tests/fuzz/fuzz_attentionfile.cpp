// Fuzz target for the attention-file readers (parseAttentionBytes): .npy, .npz (the ZIP
// directory, stored and deflated members) and .safetensors (the header), told apart by their
// first bytes. Any bytes must give an attention set whose every value can be read, or a
// one-line error; never a crash, an exception or an allocation the input does not justify.
//
// Each input is also read a second time as the body of a ZIP64 archive: the harness appends a
// ZIP64 locator and an end-of-directory record that defers to the ZIP64 record, the locator
// pointing at the input's last 56 bytes (at offset 0 when it is shorter). Told by magic alone,
// random bytes almost never put a locator 20 bytes before an end record at the end of a file
// that starts like a ZIP, so the ZIP64 end record, its offsets and the ZIP64 extra fields were
// never reached (the 42-55-byte over-read of issue 20 hid there); this way the fuzzer writes the
// ZIP64 record and the directory, and any input shorter than 14 bytes is a 42-55-byte archive.

#include "core/formats/AttentionFile.h"
#include "core/formats/ZipReader.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

void requireOneLine(const std::string &message)
{
    for (unsigned char c : message)
        if (c < 0x20 || c == 0x7f) {
            std::fprintf(stderr, "fuzz_attentionfile: error message is not one clean line: %s\n", message.c_str());
            std::abort();
        }
}

void appendLe(std::string &out, std::uint64_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out.push_back(char((value >> (8 * i)) & 0xff));
}

// The input followed by a ZIP64 locator and an end-of-directory record, read as an .npz would be.
void readAsZip64Body(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    std::string tail;
    appendLe(tail, 0x07064b50, 4);                 // ZIP64 end-of-directory locator
    appendLe(tail, 0, 4);                          // disk of the ZIP64 record
    appendLe(tail, size >= 56 ? size - 56 : 0, 8); // where the ZIP64 record is
    appendLe(tail, 1, 4);                          // disks
    appendLe(tail, 0x06054b50, 4);                 // end-of-directory record
    appendLe(tail, 0, 4);                          // disks
    appendLe(tail, 0xffff, 2);                     // members here: see the ZIP64 record
    appendLe(tail, 0xffff, 2);                     // members
    appendLe(tail, 0xffffffff, 4);                 // directory size
    appendLe(tail, 0xffffffff, 4);                 // directory offset
    appendLe(tail, 0, 2);                          // comment length
    // An allocation of exactly the archive's size, so that any read past its end is one (ASan).
    const std::size_t total = size + tail.size();
    const std::unique_ptr<char[]> buffer(new char[total]);
    std::copy(data, data + size, buffer.get());
    std::copy(tail.begin(), tail.end(), buffer.get() + size);
    const std::string_view zip(buffer.get(), total);
    auto members = listZipMembers(zip);
    if (!members) {
        requireOneLine(members.message());
        return;
    }
    for (const ZipMember &m : *members) {
        auto content = zipMemberContent(zip, m, std::uint64_t(size) * 1032 + 1024);
        if (!content) {
            requireOneLine(content.message());
            continue;
        }
        auto owned = std::make_shared<const std::string>(std::move(*content));
        if (auto set = parseAttentionBytes(*owned, owned); !set)
            requireOneLine(set.message());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attnscope;
    readAsZip64Body(data, size);
    auto bytes = std::make_shared<const std::string>(reinterpret_cast<const char *>(data), size);
    AttentionFileInfo info;
    auto set = parseAttentionBytes(*bytes, bytes, &info);
    if (!set) {
        requireOneLine(set.message());
        return 0;
    }
    // Every value must be readable and finite (the reader refuses NaN and Inf).
    float sum = 0.0f;
    for (int l = 0; l < set->layers(); ++l)
        for (int h = 0; h < set->heads(); ++h)
            for (std::int64_t i = 0; i < set->queries(); ++i)
                for (std::int64_t j = 0; j < set->keys(); ++j) {
                    const float v = set->at(0, l, h, i, j);
                    if (!(v == v) || v - v != 0.0f) {
                        std::fprintf(stderr, "fuzz_attentionfile: non-finite value accepted\n");
                        std::abort();
                    }
                    sum += v;
                }
    if (set->valueBytes() > std::int64_t(size) * 4 + 64) {
        std::fprintf(stderr, "fuzz_attentionfile: %lld value bytes from a %zu-byte input\n",
                     (long long)set->valueBytes(), size);
        std::abort();
    }
    // Every row is counted once, and the row check's summary is one line.
    const RowSumCheck &rows = info.rows;
    if (rows.rows != std::int64_t(set->layers()) * set->heads() * set->queries() ||
        rows.ones + rows.zeros + rows.below > rows.rows || rows.above > rows.rows || rows.negative > rows.rows) {
        std::fprintf(stderr, "fuzz_attentionfile: row counts do not add up\n");
        std::abort();
    }
    requireOneLine(rows.summary());
    // Softmax of any finite rows is attention: every row sums to 1.
    if (set->valueBytes() <= (1 << 20)) {
        auto soft = softmaxRows(*set);
        if (!soft) {
            requireOneLine(soft.message());
        } else if (!checkRowSums(*soft, 1e-3).isExact()) {
            std::fprintf(stderr, "fuzz_attentionfile: softmax rows do not sum to 1\n");
            std::abort();
        }
    }
    return sum == 12345.0f ? 1 : 0;
}
