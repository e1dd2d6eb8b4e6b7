// Turns any Asio completion handler into a type-erased callback that the
// non-template core (src/) can call when an operation ends.
#pragma once

#include <redlock/detail/asio.hpp>
#include <redlock/detail/pending_operation.hpp>
#include <redlock/detail/unique_function.hpp>

#include <tuple>

namespace redlock::detail {

template <class... Args>
using completion = unique_function<void(Args...)>;

/// Wraps `handler` so that calling the result invokes it through its
/// associated executor (the client's executor when it has none), keeping
/// that executor's work count up until then so its io_context stays alive.
template <class... Args, class Handler>
completion<Args...> make_completion(Handler&& handler,
                                    const boost::asio::any_io_executor& fallback) {
  auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler, fallback),
                                  boost::asio::execution::outstanding_work.tracked);
  return [handler = std::forward<Handler>(handler), work = std::move(work)](Args... args) mutable {
    // The core always calls from inside its own handlers, never from the
    // initiating function, so dispatch cannot run the handler inline there.
    boost::asio::dispatch(
        work, [handler = std::move(handler), args = std::make_tuple(std::move(args)...)]() mutable {
          // On the handler's executor, where its slot is emitted from.
          clear_cancellation(handler);
          std::apply(std::move(handler), std::move(args));
        });
  };
}

}  // namespace redlock::detail
