#pragma once

#include "core/Result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace attnscope {

// A whole file mapped read-only into memory, so a large tensor file costs address space
// rather than a copy: views of it (attention sets, model weights) keep the mapping alive
// through shared_ptr. Regular files only: a FIFO or a device such as /dev/zero is refused.
class MappedFile
{
public:
    // Errors are of kind Io ("cannot open ...: No such file or directory") or InvalidInput
    // ("... is not a regular file").
    static Result<std::shared_ptr<const MappedFile>> open(const std::string &path);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const unsigned char *data() const { return m_data; }
    std::uint64_t size() const { return m_size; }
    std::string_view bytes() const { return {reinterpret_cast<const char *>(m_data), std::size_t(m_size)}; }
    const std::string &path() const { return m_path; }

private:
    MappedFile() = default;
    const unsigned char *m_data = nullptr;
    std::uint64_t m_size = 0;
    std::string m_path;
};

} // namespace attnscope
