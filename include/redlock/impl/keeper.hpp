// Template members of redlock::keeper.
#pragma once

// Included at the end of <redlock/keeper.hpp>; on its own it brings that in.
#include <redlock/keeper.hpp>

#include <boost/system/system_error.hpp>

namespace redlock {

template <class CompletionToken>
auto keeper::async_wait_lost(CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code)>(
      [this](auto handler) {
        if (empty()) throw boost::system::system_error(errc::not_a_lock, "redlock: keeper");
        start_wait(detail::make_completion<error_code>(std::move(handler), get_executor()));
      },
      token);
}

template <class CompletionToken>
auto keeper::async_release(CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
      [this](auto handler) {
        if (empty()) throw boost::system::system_error(errc::not_a_lock, "redlock: keeper");
        auto slot = detail::cancellation_slot_of(handler);
        auto op = make_release(
            detail::make_completion<error_code, std::size_t>(std::move(handler), get_executor()));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token);
}

}  // namespace redlock
