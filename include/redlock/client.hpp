// The asynchronous Redlock client.
#pragma once

#include <redlock/config.hpp>
#include <redlock/detail/asio.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/detail/pending_operation.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>
#include <redlock/status.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace redlock {

namespace detail {
class client_core;
}
class keeper;

/// A Redlock client over N independent Redis masters, with one long-lived,
/// pipelined connection per node.
///
/// All work runs on a strand of the executor given to the constructor, so
/// the client may be used from any thread and from a multi-threaded
/// io_context. Completion handlers run on their associated executor (the
/// client's executor when they have none).
///
/// Destroying the client closes it (see close()). A lock handle belongs to
/// the client that acquired it: extend and release it through that client.
class client {
 public:
  /// Where handlers run when their completion token names no executor.
  using executor_type = boost::asio::any_io_executor;

  /// Validates `config` (throws config_error naming the problem), logs a
  /// warning for an even N or N < 3, and starts connecting to every node.
  client(executor_type executor, client_config config);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// The executor the client was made with.
  executor_type get_executor() const noexcept { return executor_; }

  /// Closes the connections; pending and later operations complete with
  /// boost::asio::error::operation_aborted. Commands already queued on a
  /// live connection (the deletes of a release that has just started, and
  /// the undo that an acquire aborted in mid-attempt queues behind its SETs)
  /// are still written out first, for at most connect_timeout, and so are
  /// those waiting for a node whose connection is being set up (once the
  /// set-up is done, within its connect timeout); those waiting for a node
  /// to reconnect after a failure are dropped, and their keys expire with
  /// their TTL. After that the client leaves no work on the executor
  /// (io_context::run() can return). Destroying the io_context without
  /// running it after the client is destroyed leaks nothing either: what
  /// was queued is dropped unsent.
  void close();
  /// The configuration in use (TLS settings merged into each node).
  const client_config& config() const noexcept;
  /// floor(N/2)+1 of the configured N.
  std::size_t quorum() const noexcept;

  /// Acquires `resource` on a quorum of nodes.
  ///
  /// Each attempt draws a fresh 128-bit token, sends `SET <prefix><resource>
  /// <token> NX PX <ttl>` (a script, for a reentrant lock: see
  /// lock_options::reentrant_owner) to every node at once and is decided as soon as a
  /// quorum has answered OK with validity left (validity = ttl - elapsed -
  /// drift), or a quorum has become impossible, or the request timeout has
  /// passed. A failed attempt is undone wherever its SET may have landed
  /// before the next one starts, per options.retry and options.wait_timeout
  /// (a set wait is the limit unless retry.max_attempts is set: see
  /// effective_max_attempts()).
  ///
  /// Handler signature: `void(redlock::error_code, redlock::lock)`.
  ///
  /// Completion condition: an attempt reached a quorum; or the last allowed
  /// attempt failed and was undone (out of attempts, the wait over, no
  /// attempt answered by a quorum for options.unreachable_timeout, or sunk
  /// by failures that waiting cannot heal: is_permanent_node_failure()); or
  /// the operation was cancelled.
  ///
  /// Error codes:
  /// - success: the lock, with its validity deadline and per-node outcomes;
  /// - errc::not_acquired: held by another owner (after all attempts);
  /// - errc::quorum_unreachable: too few nodes answered (the last attempt;
  ///   with options.unreachable_timeout, none for that long);
  /// - errc::authentication_failed: most nodes that failed refused our
  ///   credentials;
  /// - errc::replica_node, errc::cluster_node, errc::same_server: most nodes
  ///   that failed were refused by the topology check (a replica, a cluster
  ///   node, one server listed twice; see client_config::warn_without_aof);
  /// - a code of tls_verify_category(): most nodes that failed presented a
  ///   certificate that did not verify (the first one's cause);
  /// - errc::validity_expired: a quorum agreed too late (or with less than
  ///   options.min_validity left);
  /// - an invalid-argument errc (empty_resource, invalid_ttl, ...) without
  ///   touching the nodes;
  /// - boost::asio::error::operation_aborted: cancelled, or the client was
  ///   closed or destroyed.
  /// On failure the lock is empty but its nodes() tell each node's outcome
  /// (describe_failure() puts them in one line).
  ///
  /// Per-operation cancellation: options.stop (a std::stop_token, any Boost),
  /// and with Boost >= 1.77 the cancellation slot associated with the
  /// handler (any type but none: terminal, partial and total act alike). A
  /// wait between attempts ends at once; an attempt in flight is first
  /// undone on every node where its SET may have landed. Also ended by
  /// close().
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_acquire(std::string resource, lock_options options, CompletionToken&& token);

  /// Acquires every resource in `resources` as one lock: on each node, one
  /// script call sets all of their keys or none (none when any is held,
  /// even in part), with the same quorum and validity rules as
  /// async_acquire. The keys are `<prefix><resource>` holding the plain
  /// token, so single-resource acquires (of this and other Redlock clients)
  /// exclude and are excluded as usual. The lock is extended and released
  /// as a whole; a release wakes the waiters of each resource.
  ///
  /// Handler signature, completion condition, error codes and cancellation
  /// as async_acquire, plus the invalid-argument errors errc::no_resources
  /// (an empty list), errc::too_many_resources (more than max_resources)
  /// and errc::duplicate_resource. With options.reentrant_owner the set is
  /// reentrant as a whole. errc::not_acquired means
  /// some resource of the set is held elsewhere on too many nodes; what an
  /// attempt set is undone before the next one, as for async_acquire. While
  /// waiting (retry_policy::wake_on_release), the release of any resource of
  /// the set starts the next attempt.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_acquire_all(std::vector<std::string> resources, lock_options options,
                         CompletionToken&& token);

  /// Releases `held` on all nodes with a compare-and-delete script (only a
  /// key that still holds our token is deleted), and announces the release
  /// to waiters (see retry_policy::wake_on_release); this client's longest
  /// waiter for the resource gets its attempt queued right behind the
  /// delete. Every copy of the handle reads released() and no longer valid()
  /// from the start.
  ///
  /// Handler signature: `void(redlock::error_code, std::size_t removed)`,
  /// `removed` being the number of nodes that had confirmed deleting our key
  /// when the handler was called.
  ///
  /// Completion condition: a quorum of nodes confirmed the delete; or enough
  /// nodes answered that they no longer held our token to rule a quorum
  /// out; or every node answered or failed; or the request timeout (ttl/20,
  /// at most 500 ms) passed. A slow node never sets the pace: its delete
  /// stays queued on its connection (and is sent again after a reconnect,
  /// while the key can still exist), and runs before any later command of
  /// this client on that node; if it never arrives, the key expires with
  /// its TTL.
  ///
  /// Error codes:
  /// - success: a quorum deleted our key;
  /// - errc::lock_lost: a majority no longer held our token: the lock had
  ///   lapsed (expired, or taken after expiring) before the release, so the
  ///   critical section may have run without it;
  /// - errc::quorum_unreachable: too few nodes answered to know (a delete
  ///   sent again after a reconnect that finds no key counts as no answer:
  ///   its first copy may have deleted it);
  /// - errc::not_a_lock: `held` is empty; errc::foreign_lock: it was
  ///   acquired through another client (nothing is sent);
  /// - boost::asio::error::operation_aborted: cancelled or the client closed
  ///   (the deletes already queued still run; see close()).
  /// Releasing the same acquisition again succeeds at once with removed = 0
  /// and sends nothing (nobody is woken twice).
  ///
  /// Per-operation cancellation (Boost >= 1.77 slot): completes at once with
  /// operation_aborted; the deletes already queued still run, and the handle
  /// stays released.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_release(const lock& held, CompletionToken&& token);

  /// Extends `held` to expire `ttl` from now with a compare-and-PEXPIRE
  /// script on all nodes. The script never shortens a key: a node whose key
  /// already expires later than `ttl` from now keeps its expiry, so no
  /// extend, successful or not, leaves the keys expiring before the
  /// validity any copy of the handle reports.
  ///
  /// Handler signature: `void(redlock::error_code, redlock::lock)`. The lock
  /// is the same acquisition as `held` (so it can still be released) with
  /// this round's node outcomes.
  ///
  /// Completion condition: a quorum confirmed; or a quorum became
  /// impossible and no answer still pending could change the error (see
  /// lock_lost); or the request timeout or the old validity passed.
  ///
  /// Error codes:
  /// - success: the validity deadline of every copy becomes the later of
  ///   the old one and (start of the extend + ttl - drift);
  /// - errc::lock_lost: fewer than a quorum of nodes can still hold our
  ///   token: those answering "not ours" now and those where another owner
  ///   refused our SET at acquire time are ruled out, silent ones are not.
  ///   The round waits for the answers that could still decide this, so the
  ///   verdict does not depend on their order. Also when a quorum confirmed
  ///   but a concurrent extend or release had found the lock lost. The
  ///   validity of every copy ends now, for good (release it to clean up
  ///   the rest);
  /// - errc::quorum_unreachable: too few nodes confirmed, but a quorum may
  ///   still hold the key: the old validity still stands, because no key was
  ///   shortened;
  /// - errc::validity_expired: a quorum confirmed, but with no validity left
  ///   under the new ttl; the old validity still stands;
  /// - errc::lock_expired: the validity this extend started under ended
  ///   before the round was decided (no node is touched if it had ended
  ///   before the call);
  /// - errc::lock_released: the lock had been released;
  /// - errc::authentication_failed, errc::replica_node, errc::cluster_node,
  ///   errc::same_server, a tls_verify_category() code: instead of
  ///   quorum_unreachable (with its meaning),
  ///   when most nodes that failed did so for that configuration error (a
  ///   node can turn into one while a lock is held, e.g. by a failover);
  /// - errc::not_a_lock: `held` is empty; errc::foreign_lock: it was
  ///   acquired through another client; an invalid-argument errc for a bad
  ///   `ttl`;
  /// - boost::asio::error::operation_aborted: cancelled or the client closed.
  ///
  /// Per-operation cancellation (Boost >= 1.77 slot): completes at once with
  /// operation_aborted and the old validity (an extend that lands later
  /// only makes the keys live longer).
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_extend(const lock& held, milliseconds ttl, CompletionToken&& token);

  /// A handle for an acquisition known only by its resource and token, such
  /// as one another process made and passed on (the `redlock acquire`
  /// command prints its token), so that it can be extended or released
  /// here. `options` are those it was acquired with: their ttl bounds how
  /// long a release keeps its deletes for a node that reconnects, their
  /// request_timeout (or ttl) sets the request timeout, their
  /// reentrant_owner says it is reentrant.
  ///
  /// Nothing is sent: the nodes alone know whether the token holds the
  /// resource, so the handle claims no validity. It is not valid() until an
  /// async_extend through it succeeds; that first extend is not refused as
  /// errc::lock_expired, and its validity counts from its own start. A
  /// release of a token that no majority holds ends with errc::lock_lost.
  ///
  /// Throws boost::system::system_error: errc::empty_token, or the
  /// invalid-argument errc that async_acquire would report for `resource`
  /// and `options`.
  lock adopt(std::string resource, std::string token, const lock_options& options = {}) const;

  /// Reads what every node holds for `resource` (the key's holder and
  /// remaining TTL), without taking or changing anything.
  ///
  /// Handler signature: `void(redlock::error_code, redlock::resource_status)`.
  ///
  /// Completion condition: every node answered or failed, or `timeout`
  /// passed (nodes still silent then read as errc::node_timeout).
  ///
  /// Error codes:
  /// - success: at least a quorum answered;
  /// - errc::quorum_unreachable: fewer answered (the status still tells
  ///   what those that did said);
  /// - errc::empty_resource, errc::invalid_request_timeout (`timeout` not
  ///   positive), without touching the nodes;
  /// - boost::asio::error::operation_aborted: cancelled or the client closed.
  ///
  /// Per-operation cancellation (Boost >= 1.77 slot): completes at once with
  /// operation_aborted.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_status(std::string resource, milliseconds timeout, CompletionToken&& token);

 private:
  friend class keeper;
  using pending = std::shared_ptr<detail::pending_operation>;
  pending make_acquire(std::vector<std::string> resources, lock_options options,
                       detail::completion<error_code, lock> done);
  pending make_release(lock held, detail::completion<error_code, std::size_t> done);
  pending make_extend(lock held, milliseconds ttl, detail::completion<error_code, lock> done);
  pending make_status(std::string resource, milliseconds timeout,
                      detail::completion<error_code, resource_status> done);

  executor_type executor_;
  std::shared_ptr<detail::client_core> core_;
};

}  // namespace redlock

#include <redlock/impl/client.hpp>
