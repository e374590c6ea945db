#pragma once

#include <string>
#include <utility>
#include <variant>

namespace attnscope {

// A failure with a message meant for the user: it names the field or function, what
// was expected and what was found. Library code returns these instead of throwing.
struct Error {
    std::string message;
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

private:
    std::variant<T, Error> m_data;
};

// For operations that produce nothing but can fail.
struct Ok {};
using Status = Result<Ok>;

} // namespace attnscope
