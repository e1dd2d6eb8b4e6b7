// A blocking facade for applications that do not run an io_context.
#pragma once

#include <redlock/client.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace redlock {

/// Runs a redlock::client on an io_context of its own, in a background
/// thread, and waits for each operation. Safe to call from several threads
/// at once. The overloads without an error_code throw
/// boost::system::system_error on failure.
class blocking_client {
 public:
  explicit blocking_client(client_config config);
  ~blocking_client();
  blocking_client(const blocking_client&) = delete;
  blocking_client& operator=(const blocking_client&) = delete;

  /// See client::async_acquire. Throws boost::system::system_error on
  /// failure, errc::not_acquired included.
  lock acquire(std::string resource, const lock_options& options = {});
  /// Returns an empty lock and sets `ec` on failure.
  lock acquire(std::string resource, const lock_options& options, error_code& ec);
  /// Returns no lock when the resource is held by someone else
  /// (errc::not_acquired, an expected outcome); throws on any other failure.
  std::optional<lock> try_acquire(std::string resource, const lock_options& options = {});
  /// Like try_acquire, but keeps trying for up to `wait`: attempts are then
  /// limited by the wait only (not by options.retry.max_attempts), spaced by
  /// options.retry's delays (its defaults when it has none, as try_once()
  /// does) and cut short by the holder's release (always listened for).
  /// Returns no lock when the resource was still held elsewhere when the
  /// wait ran out; a wait of zero or less makes one attempt. A cancelled or
  /// timed-out wait leaves none of its votes on the nodes.
  template <class Rep, class Period>
  std::optional<lock> try_acquire_for(std::string resource,
                                      const std::chrono::duration<Rep, Period>& wait,
                                      lock_options options = {}) {
    return try_acquire_within(
        std::move(resource),
        std::chrono::ceil<milliseconds>(std::chrono::duration_cast<std::chrono::nanoseconds>(wait)),
        std::move(options));
  }
  /// try_acquire_for until `deadline` on any clock.
  template <class Clock, class Duration>
  std::optional<lock> try_acquire_until(std::string resource,
                                        const std::chrono::time_point<Clock, Duration>& deadline,
                                        lock_options options = {}) {
    return try_acquire_for(std::move(resource), deadline - Clock::now(), std::move(options));
  }

  /// See client::async_release; returns the number of nodes the key was
  /// removed from. Throws on failure, errc::lock_lost included (the lock had
  /// lapsed before the release).
  std::size_t release(const lock& held);
  std::size_t release(const lock& held, error_code& ec);

  /// See client::async_extend; returns the same lock with its new validity.
  /// On failure the returned lock (the error_code form) is still the same
  /// acquisition, with an honest validity, so it can be released.
  lock extend(const lock& held, milliseconds ttl);
  lock extend(const lock& held, milliseconds ttl, error_code& ec);

  /// The asynchronous client underneath, for mixing styles.
  client& async_client() noexcept;

 private:
  std::optional<lock> try_acquire_within(std::string resource, milliseconds wait,
                                         lock_options options);

  struct runner;
  std::unique_ptr<runner> runner_;
};

}  // namespace redlock
