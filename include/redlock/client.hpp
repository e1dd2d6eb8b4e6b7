// The asynchronous Redlock client.
#pragma once

#include <redlock/config.hpp>
#include <redlock/detail/asio.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace redlock {

namespace detail {
class client_core;
}

/// A Redlock client over N independent Redis masters, with one long-lived,
/// pipelined connection per node.
///
/// All work runs on a strand of the executor given to the constructor, so
/// the client may be used from any thread and from a multi-threaded
/// io_context. Completion handlers run on their associated executor (the
/// client's executor when they have none).
///
/// Destroying the client closes its connections; operations still pending
/// complete with boost::asio::error::operation_aborted (the keys they may
/// have set expire with their TTL).
class client {
 public:
  using executor_type = boost::asio::any_io_executor;

  /// Validates `config` (throws config_error naming the problem), logs a
  /// warning for an even N or N < 3, and starts connecting to every node.
  client(executor_type executor, client_config config);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  executor_type get_executor() const noexcept { return executor_; }

  /// Closes the connections; pending and later operations complete with
  /// boost::asio::error::operation_aborted, and once they have, the client
  /// leaves no work on the executor (io_context::run() can return).
  void close();
  const client_config& config() const noexcept;
  /// floor(N/2)+1 of the configured N.
  std::size_t quorum() const noexcept;

  /// Acquires `resource` on a quorum of nodes.
  ///
  /// Each attempt draws a fresh 128-bit token, sends `SET <prefix><resource>
  /// <token> NX PX <ttl>` to all nodes at once and completes as soon as a
  /// quorum has answered OK with validity left (validity = ttl - elapsed -
  /// drift), or as soon as a quorum has become impossible. A failed attempt
  /// is released on all nodes before the next one, per options.retry and
  /// options.wait_timeout.
  ///
  /// Handler signature: `void(redlock::error_code, redlock::lock)`.
  ///
  /// Completes with:
  /// - success: the lock, with its validity deadline and per-node outcomes;
  /// - errc::not_acquired: held by another owner (after all attempts);
  /// - errc::quorum_unreachable: too few nodes answered;
  /// - errc::authentication_failed: the nodes refused our credentials;
  /// - errc::validity_expired: a quorum agreed too late;
  /// - an invalid-argument errc (empty_resource, invalid_ttl, ...) without
  ///   touching the nodes;
  /// - boost::asio::error::operation_aborted: the client was destroyed.
  /// On failure the lock is empty but its nodes() tell each node's outcome.
  ///
  /// Cancellation: only by close() or destroying the client.
  template <class CompletionToken>
  auto async_acquire(std::string resource, lock_options options, CompletionToken&& token);

  /// Releases `held` on all nodes with a compare-and-delete script (only a
  /// key still holding our token is deleted), and announces the release to
  /// waiters (see retry_policy::wake_on_release).
  ///
  /// Handler signature: `void(redlock::error_code, std::size_t removed)`,
  /// `removed` being the number of nodes that had confirmed deleting the
  /// key when the handler was called.
  ///
  /// Completes as soon as a quorum of nodes has confirmed the deletion (no
  /// other owner can then be refused for lack of a quorum because of us), or
  /// else when every node has answered or the request timeout (ttl/20, at
  /// most 500 ms) has passed. A slow node never sets the pace: its delete
  /// stays queued on its connection and runs before any later command of this
  /// client on that node; if it never arrives, the key expires with its TTL.
  /// Success when a quorum answered (even if `removed` is 0 because the lock
  /// had expired), errc::quorum_unreachable when fewer did,
  /// errc::not_a_lock for an empty handle.
  ///
  /// Cancellation: only by close() or destroying the client.
  template <class CompletionToken>
  auto async_release(const lock& held, CompletionToken&& token);

  /// Extends `held` to expire `ttl` from now with a compare-and-PEXPIRE
  /// script on all nodes.
  ///
  /// Handler signature: `void(redlock::error_code, redlock::lock)`.
  ///
  /// Succeeds with a quorum of nodes confirming before the current validity
  /// ends; the new validity counts from the start of the extend. Completes
  /// with errc::lock_expired, without touching the nodes, if the validity
  /// had already ended; errc::lock_lost if too many nodes no longer hold
  /// our token; errc::quorum_unreachable if too few answered in time. On
  /// failure the returned handle is empty; the old one must no longer be
  /// trusted beyond its own deadline.
  template <class CompletionToken>
  auto async_extend(const lock& held, milliseconds ttl, CompletionToken&& token);

 private:
  void start_acquire(std::string resource, lock_options options,
                  detail::completion<error_code, lock> done);
  void start_release(lock held, detail::completion<error_code, std::size_t> done);
  void start_extend(lock held, milliseconds ttl, detail::completion<error_code, lock> done);

  executor_type executor_;
  std::shared_ptr<detail::client_core> core_;
};

}  // namespace redlock

#include <redlock/impl/client.hpp>
