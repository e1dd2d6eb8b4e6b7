// Template members of redlock::client: they only adapt the completion token
// and hand a type-erased callback to the core in src/.
#pragma once

namespace redlock {

template <class CompletionToken>
auto client::async_acquire(std::string resource, lock_options options, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
      [this](auto handler, std::string resource, lock_options options) {
        start_acquire(std::move(resource), std::move(options),
                   detail::make_completion<error_code, lock>(std::move(handler), executor_));
      },
      token, std::move(resource), std::move(options));
}

template <class CompletionToken>
auto client::async_release(const lock& held, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, std::size_t)>(
      [this](auto handler, lock held) {
        start_release(std::move(held), detail::make_completion<error_code, std::size_t>(
                                          std::move(handler), executor_));
      },
      token, held);
}

template <class CompletionToken>
auto client::async_extend(const lock& held, milliseconds ttl, CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, lock)>(
      [this](auto handler, lock held, milliseconds ttl) {
        start_extend(std::move(held), ttl,
                     detail::make_completion<error_code, lock>(std::move(handler), executor_));
      },
      token, held, ttl);
}

}  // namespace redlock
