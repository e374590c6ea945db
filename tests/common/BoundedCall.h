#pragma once

// Calls that must return on their own (a read of /dev/zero, an open() of a FIFO without a
// writer), run so that one that blocks fails its test instead of hanging the suite.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace attnscope::test {

// Runs `work` on a thread of its own and returns its result once it has returned; nothing when
// it has not returned within `failAfterMs`. That bound only tells a call that blocks from one that
// returns: the test asserts that the call returned and what it returned, never how long it took.
// A call that never returns is left to its thread.
template <typename F>
auto returnsOnItsOwn(F work, int failAfterMs = 60000) -> std::optional<std::invoke_result_t<F>>
{
    using T = std::invoke_result_t<F>;
    struct State {
        std::mutex mutex;
        std::condition_variable returned;
        std::optional<T> result;
    };
    auto state = std::make_shared<State>();
    std::thread([state, work = std::move(work)]() mutable {
        T result = work();
        std::lock_guard lock(state->mutex);
        state->result.emplace(std::move(result));
        state->returned.notify_all();
    }).detach();
    std::unique_lock lock(state->mutex);
    if (!state->returned.wait_for(lock, std::chrono::milliseconds(failAfterMs),
                                  [&] { return state->result.has_value(); }))
        return std::nullopt;
    return std::move(state->result);
}

} // namespace attnscope::test
