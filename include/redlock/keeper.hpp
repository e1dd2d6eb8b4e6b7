// Auto-extension of a held lock, and the lost-lock signal.
#pragma once

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/error.hpp>
#include <redlock/lease_token.hpp>
#include <redlock/lock.hpp>

#include <cstddef>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

namespace redlock {

namespace detail {
class keep_op;
}

/// Keeps a lock extended while work runs, and tells the work when it must
/// stop because the lock is lost or about to be: the lost-lock signal.
///
/// Extensions follow keep_options (by default when a third of the validity
/// is left, with the lock's own TTL). Extensions of all keepers of one
/// client run on one timer, and those due at about the same time leave in
/// one write per node on the client's connections.
///
/// The signal fires once, with its reason (see keep_options), in three
/// forms: stop_token() is requested, async_wait_lost() completes, and
/// keep_options::on_lost is called. It fires *before* the validity ends
/// (lost_margin ahead) when no extension has landed in time, so work that
/// heeds it stops while the lock still holds.
///
/// The keeping stops, without a signal, when the keeper is stopped, moved
/// over or destroyed, or released through async_release(); a lock that was
/// released is never extended again, and an extension in flight when the
/// release begins cannot bring the key back (the extend script only
/// touches a key that still holds our token). Releasing through another
/// copy of the handle fires the signal with errc::lock_released at once, as
/// does an extend or release through another copy that finds it lost
/// (errc::lock_lost). After a signal nothing is extended; an extension
/// already in flight may still land, so release the lock when the work has
/// stopped (the scoped forms do).
///
/// All members are thread-safe. A keeper must be destroyed before its
/// client's executor is; it may outlive the client (it then has signalled
/// errc::connection_closed).
class keeper {
 public:
  /// The client's executor: where the keeper's handlers run by default.
  using executor_type = boost::asio::any_io_executor;

  /// Empty: keeps nothing.
  keeper() = default;
  /// Starts keeping `held`, acquired through `owner`. Throws
  /// boost::system::system_error with errc::not_a_lock (empty handle),
  /// errc::foreign_lock (another client's lock) or
  /// errc::invalid_keep_options. A lock already released or past its
  /// validity gets the signal at once.
  keeper(client& owner, lock held, keep_options options = {});
  /// Stops keeping (does not release).
  ~keeper();
  /// Takes over `other`'s lock; `other` keeps nothing afterwards.
  keeper(keeper&& other) noexcept = default;
  /// Stops keeping the lock this keeper had, then takes `other`'s.
  keeper& operator=(keeper&& other) noexcept;
  keeper(const keeper&) = delete;
  keeper& operator=(const keeper&) = delete;

  /// Keeps nothing (default-made or moved from).
  bool empty() const noexcept { return op_ == nullptr; }
  /// The kept lock: a copy of the handle, whose validity moves with every
  /// extension. Its fence() and fences() (for a fenced acquire) are those
  /// of the acquire and never change: extensions keep the fencing tokens.
  /// Its nodes() is empty: each node's outcome is in the handle that was
  /// acquired (a keeper does not keep a copy of them for every kept lock).
  const lock& held() const noexcept;
  /// The signal has fired, or its time has passed (so it is about to fire:
  /// this is true on time even while the client's executor is busy, or
  /// right after the process resumes from a pause). Once true, true for
  /// ever: an extension that lands after the signal's time does not take it
  /// back, and the signal fires. The work must stop; the lock may still
  /// hold for up to lost_margin.
  bool lost() const noexcept;
  /// Why, once lost(); success before.
  error_code lost_reason() const noexcept;
  /// The work's token: stop_requested() turns true when lost() does (on
  /// time, even before the signal is delivered) and never turns false
  /// again; check it before each side effect. Its std::stop_token
  /// conversion is requested when the signal is delivered: callbacks
  /// registered on that run on the client's strand (keep them short).
  lease_token stop_token() const noexcept;
  /// Extensions that have landed so far.
  unsigned extensions() const noexcept;
  /// Stops extending without releasing; the lock expires with its validity.
  void stop() noexcept;
  /// The client's executor (empty for an empty keeper).
  executor_type get_executor() const;

  /// Waits for the lost-lock signal. Throws boost::system::system_error
  /// (errc::not_a_lock) when the keeper is empty.
  ///
  /// Handler signature: `void(redlock::error_code reason)`.
  ///
  /// Completion condition: the signal fired (now or before), or the keeping
  /// stopped without one.
  ///
  /// Error codes: the signal's reason (errc::lock_lost, errc::lock_expiring,
  /// errc::hold_limit_reached, errc::lock_released, errc::connection_closed);
  /// boost::asio::error::operation_aborted when the keeping stopped without
  /// a signal (released, stopped, destroyed) or the keeper is empty.
  ///
  /// Per-operation cancellation: none; stop the keeper instead. Any number
  /// of waits may be pending.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_wait_lost(CompletionToken&& token);

  /// Stops keeping, then releases the lock as client::async_release does
  /// (same handler signature, completion condition, error codes and
  /// cancellation). No signal fires for this release. Throws
  /// boost::system::system_error (errc::not_a_lock) when the keeper is empty.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_release(CompletionToken&& token);

 private:
  void start_wait(detail::completion<error_code> done);
  std::shared_ptr<detail::pending_operation> make_release(
      detail::completion<error_code, std::size_t> done);

  std::shared_ptr<detail::keep_op> op_;
};

/// Acquires `resources` (one, or several taken together as
/// client::async_acquire_all does) and starts keeping the lock: the kept
/// lock every recipe is built on (run_exclusive, the blocking client's
/// scoped locks, leader_election, periodic_job's runs, `redlock exec`), the
/// way etcd's recipes share one session. `keep` is checked against
/// options.ttl before anything is acquired. The keeper is made on the
/// handler's executor, just before the handler runs: a handler that never
/// runs leaves a lock that expires with its TTL, not one kept for ever.
///
/// Handler signature: `void(redlock::error_code, redlock::lock attempt,
/// redlock::keeper kept)`. On success `kept` keeps `attempt`; on failure
/// `kept` is empty and `attempt` is the acquire's failed lock (its nodes()
/// tell each node's outcome, see describe_failure()).
///
/// Completion condition: the acquire completed (and, on success, the
/// keeping started), or `keep` was refused.
///
/// Error codes: those of client::async_acquire_all (its invalid-argument
/// errors first), and errc::invalid_keep_options (nothing acquired).
///
/// Per-operation cancellation: options.stop, and with Boost >= 1.77 the
/// handler's cancellation slot, cancel the acquire as for
/// client::async_acquire; once kept, stop or release the keeper instead.
///
/// The handler is never invoked from inside this function.
template <class CompletionToken>
auto async_acquire_kept(client& owner, std::vector<std::string> resources, lock_options options,
                        keep_options keep, CompletionToken&& token);

}  // namespace redlock

#include <redlock/impl/keeper.hpp>
