#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace attnscope {

// What kind of failure an Error is, so callers branch on the kind (fall back to the CPU on a
// lost device, suggest a smaller size when memory runs out) instead of searching the text.
// The app layer turns kinds into translated messages.
enum class ErrorKind {
    InvalidInput, // the data breaks a rule of the format or the semantics (the default)
    TooLarge,     // refused before allocating: the request needs more memory than allowed
    OutOfMemory,  // an allocation failed (host or device memory)
    DeviceLost,   // the GPU stopped answering (VK_ERROR_DEVICE_LOST, a timed-out fence)
    Unsupported,  // this device or build cannot do this (missing feature, limit too small)
    NonFinite,    // the inputs were finite but the result overflowed to Inf or NaN
    Io,           // the file system refused (cannot open, disk full, rename failed)
    Internal,     // a bug or a driver failure that fits no other kind
    Cancelled,    // the caller asked it to stop (a newer request superseded it): not a failure to show
};

// A failure with a message meant for the user: it names the field or function, what
// was expected and what was found. Library code returns these instead of throwing.
struct Error {
    std::string message;
    ErrorKind kind = ErrorKind::InvalidInput;
    // The message's identity, for translation (core/ErrorCode.h): a stable id such as
    // "project.shape" and the values that fill its template. Empty where the message has none:
    // the app layer then shows `message`, in English.
    std::string code = {};
    std::vector<std::string> args = {};
};

// Minimal stand-in for C++23's std::expected: either a value or an Error.
template <typename T>
class [[nodiscard]] Result
{
public:
    Result(T value) : m_data(std::move(value)) {}
    Result(Error error) : m_data(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_data); }
    explicit operator bool() const { return ok(); }

    T &value() & { return std::get<T>(m_data); }
    const T &value() const & { return std::get<T>(m_data); }
    T &&value() && { return std::get<T>(std::move(m_data)); }
    T *operator->() { return &value(); }
    const T *operator->() const { return &value(); }
    T &operator*() & { return value(); }
    const T &operator*() const & { return value(); }

    const Error &error() const { return std::get<Error>(m_data); }
    const std::string &message() const { return error().message; }
    ErrorKind kind() const { return error().kind; }

private:
    std::variant<T, Error> m_data;
};

// For operations that produce nothing but can fail.
struct Ok {
};
using Status = Result<Ok>;

} // namespace attnscope
