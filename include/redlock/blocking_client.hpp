// A blocking facade for applications that do not run an io_context.
#pragma once

#include <redlock/client.hpp>
#include <redlock/keeper.hpp>

#include <boost/system/system_error.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace redlock {

class blocking_client;
namespace detail {
struct blocking_runner;
}

/// A lock held for a scope: kept extended (see keeper) until it is released
/// or destroyed, and released in the destructor. Movable, not copyable.
///
/// It keeps its blocking_client's background thread and connections alive
/// until it is released, even past the blocking_client's destruction. Do not
/// release or destroy it from the client's own thread (a stop callback or
/// on_lost): the release would wait for that thread.
class scoped_lock {
 public:
  /// Holds nothing.
  scoped_lock() = default;
  /// Releases, waiting for the release; errors are not reported (a key the
  /// release could not reach expires with its TTL).
  ~scoped_lock();
  /// Takes `other`'s lock (and keeper); `other` owns nothing afterwards.
  scoped_lock(scoped_lock&& other) noexcept;
  /// Releases what this one held, then takes `other`'s.
  scoped_lock& operator=(scoped_lock&& other) noexcept;
  scoped_lock(const scoped_lock&) = delete;
  scoped_lock& operator=(const scoped_lock&) = delete;

  /// True until released (or moved from).
  bool owns_lock() const noexcept { return !kept_.empty(); }
  /// The lock, kept extended: its validity moves with every extension.
  /// Its nodes() tell each node's outcome of the acquire.
  const lock& held() const noexcept { return held_; }
  /// The lost-lock signal (see keeper): fired, its reason, and the token
  /// requested when it fires.
  bool lost() const noexcept { return kept_.lost(); }
  /// Why the signal fired (see keep_options); empty while it has not.
  error_code lost_reason() const noexcept { return kept_.lost_reason(); }
  /// The work's token (see keeper::stop_token()): stop_requested() turns
  /// true on time when the lock must be given up; check it before each side
  /// effect.
  lease_token stop_token() const noexcept { return kept_.stop_token(); }
  /// The keeper that extends the lock, for async_wait_lost and the rest.
  keeper& kept() noexcept { return kept_; }

  /// Releases now (see client::async_release); returns the number of nodes
  /// the key was removed from. Throws boost::system::system_error on
  /// failure, errc::lock_lost included. Afterwards owns_lock() is false.
  std::size_t release();
  /// As release(), but sets `ec` instead of throwing.
  std::size_t release(error_code& ec);

 private:
  friend class blocking_client;
  scoped_lock(std::shared_ptr<detail::blocking_runner> runner, lock held, keeper kept) noexcept
      : runner_(std::move(runner)), held_(std::move(held)), kept_(std::move(kept)) {}

  std::shared_ptr<detail::blocking_runner> runner_;
  /// The acquired handle, with each node's outcome (the keeper's copy has
  /// none); it shares the keeper's validity.
  lock held_;
  keeper kept_;
};

/// Runs a redlock::client on an io_context of its own, in a background
/// thread, and waits for each operation. Safe to call from several threads
/// at once. The overloads without an error_code throw
/// boost::system::system_error on failure; for an acquire that nodes
/// refused or failed, its what() also names each of them and why (as
/// describe_failure() does), e.g. "redlock: acquire (127.0.0.1:7001:
/// Connection refused; 127.0.0.1:7002: Connection refused): quorum
/// unreachable: too few Redis nodes answered".
class blocking_client {
 public:
  /// Starts a client on its own io_context thread; throws config_error as
  /// client's constructor does.
  explicit blocking_client(client_config config);
  /// Closes the client (see client::close()) and joins its thread, once no
  /// scoped_lock of it is left. A node that owes replies (one that is
  /// paused, overloaded or cut off, and the deletes of a release queued
  /// for it) is given up to client_config::connect_timeout (1 s by default)
  /// to take what is queued and close its side: with such a node, this
  /// takes that long. A shorter connect_timeout makes it quicker (the
  /// redlock tool: --connect-timeout), at the cost of giving up sooner on
  /// a slow connection set-up; keys not deleted expire with their TTL.
  ~blocking_client();
  blocking_client(const blocking_client&) = delete;
  blocking_client& operator=(const blocking_client&) = delete;

  /// See client::async_acquire. Throws boost::system::system_error on
  /// failure, errc::not_acquired included.
  lock acquire(std::string resource, const lock_options& options = {});
  /// Returns an empty lock and sets `ec` on failure.
  lock acquire(std::string resource, const lock_options& options, error_code& ec);
  /// See client::async_acquire_all: several resources as one lock. Throws
  /// (errc::not_acquired included), or sets `ec` and returns an empty lock.
  lock acquire_all(std::vector<std::string> resources, const lock_options& options = {});
  /// As acquire_all() above, but sets `ec` instead of throwing.
  lock acquire_all(std::vector<std::string> resources, const lock_options& options, error_code& ec);
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
    return try_acquire_within(std::move(resource), wait_in_ms(wait), std::move(options));
  }
  /// try_acquire_for until `deadline` on any clock.
  template <class Clock, class Duration>
  std::optional<lock> try_acquire_until(std::string resource,
                                        const std::chrono::time_point<Clock, Duration>& deadline,
                                        lock_options options = {}) {
    return try_acquire_for(std::move(resource), deadline - Clock::now(), std::move(options));
  }

  /// Acquires as acquire() does (throws on failure, errc::not_acquired
  /// included) and keeps the lock extended per `keep` until the returned
  /// scoped_lock releases it.
  scoped_lock acquire_scoped(std::string resource, const lock_options& options = {},
                             const keep_options& keep = {});

  /// try_acquire_for, then keeps the lock extended per `keep` as
  /// acquire_scoped does: "try for `wait`, keep it, tell me yes or no".
  /// Returns no scoped_lock when the resource was still held elsewhere when
  /// the wait ran out; throws boost::system::system_error for any other
  /// failure (nodes unreachable, refused credentials or certificates,
  /// invalid options: an invalid `keep` before anything is sent). Bound a
  /// wait on nodes that cannot answer below `wait` with
  /// options.unreachable_timeout.
  template <class Rep, class Period>
  std::optional<scoped_lock> try_acquire_scoped_for(std::string resource,
                                                    const std::chrono::duration<Rep, Period>& wait,
                                                    lock_options options = {},
                                                    const keep_options& keep = {}) {
    return try_acquire_scoped_within(std::move(resource), wait_in_ms(wait), std::move(options),
                                     keep);
  }

  /// acquire_scoped for several resources as one lock (see acquire_all).
  scoped_lock acquire_all_scoped(std::vector<std::string> resources,
                                 const lock_options& options = {}, const keep_options& keep = {});

  /// Runs `fn` while holding `resource`, kept extended per `keep`, and
  /// releases it on every exit path; returns what `fn` returns. `fn` takes
  /// a lease_token (check its stop_requested() before each side effect; a
  /// `std::stop_token` parameter gets the delivered signal's token, which
  /// may lag the lease's time), a lease_token and the held `const lock&`,
  /// a scoped_lock&, or nothing.
  ///
  /// Fencing: with options.fenced, the held lock's fence() (fences() for
  /// several resources) is the fencing token of this run, the same for the
  /// whole run (extensions keep it); send it with every write the work
  /// makes (see lock_options::fenced). Read it through the `const lock&`
  /// parameter, or scoped_lock::held(); a form taking the lease_token alone
  /// cannot see it.
  ///
  /// Throws boost::system::system_error: with the acquire's error (fn did
  /// not run); with the lost-lock signal's reason if it fired while fn ran,
  /// or errc::lock_lost if the release found the lock had lapsed (fn's
  /// result is then dropped: fn may have run partly without the lock).
  /// Exceptions from fn propagate after the release.
  template <class Fn>
  auto run_exclusive(std::string resource, const lock_options& options, const keep_options& keep,
                     Fn&& fn) {
    auto scope = acquire_scoped(std::move(resource), options, keep);
    auto call = [&]() -> decltype(auto) {
      if constexpr (std::is_invocable_v<Fn&, lease_token, const lock&>) {
        return fn(scope.stop_token(), scope.held());
      } else if constexpr (std::is_invocable_v<Fn&, lease_token>) {
        return fn(scope.stop_token());
      } else if constexpr (std::is_invocable_v<Fn&, scoped_lock&>) {
        return fn(scope);
      } else {
        return fn();
      }
    };
    using result_type = decltype(call());
    if constexpr (std::is_void_v<result_type>) {
      call();
      finish_exclusive(scope);
    } else {
      result_type result = call();
      finish_exclusive(scope);
      return result;
    }
  }
  /// run_exclusive() with default lock and keep options.
  template <class Fn>
  auto run_exclusive(std::string resource, Fn&& fn) {
    return run_exclusive(std::move(resource), lock_options{}, keep_options{}, std::forward<Fn>(fn));
  }

  /// See client::async_release; returns the number of nodes the key was
  /// removed from. Throws on failure, errc::lock_lost included (the lock had
  /// lapsed before the release).
  std::size_t release(const lock& held);
  /// As release() above, but sets `ec` instead of throwing.
  std::size_t release(const lock& held, error_code& ec);

  /// See client::async_extend; returns the same lock with its new validity.
  /// On failure the returned lock (the error_code form) is still the same
  /// acquisition, with an honest validity, so it can be released.
  lock extend(const lock& held, milliseconds ttl);
  /// As extend() above, but sets `ec` instead of throwing.
  lock extend(const lock& held, milliseconds ttl, error_code& ec);

  /// See client::async_status: what every node holds for `resource` (the
  /// key's holder and remaining TTL), read within `timeout`, without taking
  /// or changing anything. Throws boost::system::system_error on failure:
  /// errc::quorum_unreachable when fewer than a quorum answered,
  /// errc::empty_resource or errc::invalid_request_timeout (`timeout` not
  /// positive).
  resource_status status(std::string resource, milliseconds timeout = milliseconds{2000});
  /// As status() above, but sets `ec` instead of throwing; with
  /// errc::quorum_unreachable the status still tells what the nodes that
  /// answered said.
  resource_status status(std::string resource, milliseconds timeout, error_code& ec);

  /// The asynchronous client underneath, for mixing styles.
  client& async_client() noexcept;

 private:
  /// A wait in milliseconds; one of max_duration or more waits max_duration
  /// (converting it exactly could overflow).
  template <class Rep, class Period>
  static milliseconds wait_in_ms(const std::chrono::duration<Rep, Period>& wait) {
    if (std::chrono::duration<double, std::milli>(wait).count() >=
        static_cast<double>(max_duration.count())) {
      return max_duration;
    }
    return std::chrono::ceil<milliseconds>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(wait));
  }
  /// Releases after run_exclusive's fn returned; throws as it says.
  static void finish_exclusive(scoped_lock& scope);
  /// async_acquire_kept, waited for: the kept lock; or, with `ec` set, an
  /// empty one, and `attempt` is the failed acquire.
  scoped_lock acquire_kept(std::vector<std::string> resources, const lock_options& options,
                           const keep_options& keep, lock& attempt, error_code& ec);
  std::optional<lock> try_acquire_within(std::string resource, milliseconds wait,
                                         lock_options options);
  std::optional<scoped_lock> try_acquire_scoped_within(std::string resource, milliseconds wait,
                                                       lock_options options,
                                                       const keep_options& keep);

  std::shared_ptr<detail::blocking_runner> runner_;
};

}  // namespace redlock
