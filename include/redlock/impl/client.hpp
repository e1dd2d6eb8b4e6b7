// Template members of redlock::client: they adapt the completion token,
// connect its cancellation slot, and hand a type-erased callback to the
// operation built in src/.
#pragma once

// Included at the end of <redlock/client.hpp>; on its own it brings that in.
#include <redlock/client.hpp>

namespace redlock {

template <class CompletionToken>
auto client::async_acquire(std::string resource, lock_options options, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
      [this](auto handler, std::string resource, lock_options options) {
        // The slot is read before the handler moves into the operation.
        auto slot = detail::cancellation_slot_of(handler);
        auto op =
            make_acquire({std::move(resource)}, std::move(options),
                         detail::make_completion<error_code, lock>(std::move(handler), executor_));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token, std::move(resource), std::move(options));
}

template <class CompletionToken>
auto client::async_acquire_all(std::vector<std::string> resources, lock_options options,
                               CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
      [this](auto handler, std::vector<std::string> resources, lock_options options) {
        auto slot = detail::cancellation_slot_of(handler);
        auto op =
            make_acquire(std::move(resources), std::move(options),
                         detail::make_completion<error_code, lock>(std::move(handler), executor_));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token, std::move(resources), std::move(options));
}

template <class CompletionToken>
auto client::async_release(const lock& held, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
      [this](auto handler, lock held) {
        auto slot = detail::cancellation_slot_of(handler);
        auto op = make_release(std::move(held), detail::make_completion<error_code, std::size_t>(
                                                    std::move(handler), executor_));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token, held);
}

template <class CompletionToken>
auto client::async_extend(const lock& held, milliseconds ttl, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
      [this](auto handler, lock held, milliseconds ttl) {
        auto slot = detail::cancellation_slot_of(handler);
        auto op =
            make_extend(std::move(held), ttl,
                        detail::make_completion<error_code, lock>(std::move(handler), executor_));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token, held, ttl);
}

template <class CompletionToken>
auto client::async_status(std::string resource, milliseconds timeout, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, resource_status)>(
      [this](auto handler, std::string resource, milliseconds timeout) {
        auto slot = detail::cancellation_slot_of(handler);
        auto op = make_status(
            std::move(resource), timeout,
            detail::make_completion<error_code, resource_status>(std::move(handler), executor_));
        detail::bind_cancellation(slot, op);
        op->launch();
      },
      token, std::move(resource), timeout);
}

}  // namespace redlock
