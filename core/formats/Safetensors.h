#pragma once

#include "core/Result.h"
#include "core/io/MappedFile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnscope {

// One tensor of a .safetensors file: where its bytes are and what they hold. Only the
// header is checked here; values are read by whoever uses the tensor.
struct SafetensorsTensor {
    std::string name;
    std::string dtype;   // as written: "F16", "BF16", "F32", "F64", "I64", "BOOL", ...
    int elementSize = 0; // bytes per value; 0 for a dtype this reader does not know
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0; // offsets into the data section (after the header)
    std::uint64_t end = 0;
    const unsigned char *data = nullptr; // begin within the mapped file

    std::int64_t elementCount() const;
};

// A .safetensors file (Hugging Face's format: an 8-byte little-endian header length, a JSON
// header, then the data), memory-mapped. The header is checked strictly before anything is
// read: its length against the file, its JSON (depth and duplicate keys bounded), every
// tensor's dtype, shape and offsets (inside the data, size = elements x dtype size, no two
// tensors overlapping, the data section covered exactly), and `__metadata__` as strings.
// Every failure is one line naming the tensor and the offending field or offset.
class SafetensorsFile
{
public:
    static Result<SafetensorsFile> open(const std::string &path);
    // The same checks over bytes that `keepAlive` keeps valid (tests, fuzzing).
    static Result<SafetensorsFile> parse(const unsigned char *bytes, std::uint64_t size,
                                         std::shared_ptr<const void> keepAlive);

    const std::vector<SafetensorsTensor> &tensors() const { return m_tensors; }
    const SafetensorsTensor *find(const std::string &name) const;
    const std::map<std::string, std::string> &metadata() const { return m_metadata; }
    // Keeps the mapped bytes alive for views of the tensors.
    const std::shared_ptr<const void> &keepAlive() const { return m_keepAlive; }
    // Ok unless the file open() mapped changed on disk since (MappedFile::checkUnchanged): ask
    // after reading tensors, and report its error instead of what was read.
    Status checkUnchanged() const { return m_file ? m_file->checkUnchanged() : Status(Ok{}); }

private:
    std::vector<SafetensorsTensor> m_tensors; // in data order
    std::map<std::string, std::string> m_metadata;
    std::shared_ptr<const void> m_keepAlive;
    std::shared_ptr<const MappedFile> m_file; // when opened from a file
};

// Bytes per value of a safetensors dtype name, 0 if unknown.
int safetensorsElementSize(const std::string &dtype);

} // namespace attnscope
