// The handle of an acquired lock.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

namespace detail {
struct lock_state;
struct lock_access;
}  // namespace detail

/// What one node said to the last operation on a lock.
struct node_outcome {
  /// What the node said.
  enum class status : std::uint8_t {
    pending,         ///< No answer yet when the operation completed (it did not wait).
    acquired,        ///< The node holds the key with our token.
    held_elsewhere,  ///< The key exists with another owner's token (or, for an extend, not ours).
    failed,          ///< Timeout, connection or server error: see `error`.
  };
  status state = status::pending;  ///< What the node said.
  error_code error{};              ///< Why, when failed.
};

/// The enumerator's name: "pending", "acquired", "held_elsewhere",
/// "failed"; "unknown" for a value that is no enumerator.
std::string_view to_string(node_outcome::status s) noexcept;

/// One acquisition of a resource, as the library knows it.
///
/// - Only the library creates handles that hold a lock: async_acquire, and
///   async_extend which returns the same lock with its new validity.
/// - Copies refer to the same acquisition. async_extend moves the validity
///   of every copy (it only ever grows, except that an extend or release
///   that finds the lock lost ends it for good; see client::async_extend),
///   and async_release ends it for every copy at once: after a release has
///   started, valid() is false everywhere, and a second release does nothing.
///   A moved-from handle is empty().
/// - A handle belongs to the client that acquired it; another client refuses
///   it with errc::foreign_lock.
/// - Destroying handles releases nothing; a lock nobody releases expires
///   with its TTL on the nodes.
/// - A default-constructed handle, or the one a failed acquire returns, is
///   empty(): it holds nothing but still reports each node's outcome.
///
/// Reading a handle is thread-safe, also while an operation on the same
/// lock runs on the client's strand.
class lock {
 public:
  lock() = default;

  /// True when the handle stands for no acquisition (default-constructed or
  /// from a failed acquire).
  bool empty() const noexcept { return state_ == nullptr; }

  /// The resource; for a multi-resource lock, the first of resources().
  const std::string& resource() const noexcept;
  /// Every resource this acquisition holds, in the order asked for (one
  /// for async_acquire; empty for an empty handle).
  const std::vector<std::string>& resources() const noexcept;
  /// The owner id of a reentrant lock (lock_options::reentrant_owner);
  /// empty for a plain lock.
  const std::string& reentrant_owner() const noexcept;
  /// The random value stored in Redis that proves ownership.
  const std::string& token() const noexcept;
  /// True for a fenced acquisition (lock_options::fenced).
  bool fenced() const noexcept;
  /// The fencing token of resource(): larger than that of every fenced
  /// acquisition of the resource that completed before this one began (see
  /// lock_options::fenced). 0 when the lock is not fenced or empty.
  std::uint64_t fence() const noexcept;
  /// One fencing token per resources(), in the same order; empty when the
  /// lock is not fenced.
  const std::vector<std::uint64_t>& fences() const noexcept;
  /// The TTL of the last successful acquire or extend.
  std::chrono::milliseconds ttl() const noexcept;

  /// Until then the lock is held on a majority (under the algorithm's
  /// assumptions: see docs/safety.md). Measured on redlock::clock. Never
  /// moves earlier, except to "now" when an extend or release finds the lock
  /// lost; after that it never moves again.
  clock::time_point validity_deadline() const noexcept;
  /// Time left before validity_deadline(), zero once it has passed or the
  /// lock was released.
  std::chrono::milliseconds remaining_validity(clock::time_point now = clock::now()) const noexcept;
  /// Held: not empty, not released, and before validity_deadline().
  bool valid(clock::time_point now = clock::now()) const noexcept;
  /// A release of this acquisition has started (through any copy).
  bool released() const noexcept;

  /// What each node said to the operation that returned this handle, one
  /// entry per configured node, in configuration order.
  const std::vector<node_outcome>& nodes() const noexcept { return nodes_; }

 private:
  friend struct detail::lock_access;
  lock(std::shared_ptr<detail::lock_state> state, std::vector<node_outcome> nodes);

  std::shared_ptr<detail::lock_state> state_;
  std::vector<node_outcome> nodes_;
};

/// "host:port" naming `node` in messages ("[address]:port" for an IPv6
/// address), as parse_node() reads it back.
std::string endpoint_name(const node_config& node);

/// Each node of `outcomes` (one per node of `nodes`, in configuration
/// order, as lock::nodes() has them) that did not grant, and why,
/// separated by "; ", e.g. "127.0.0.1:7001: Connection refused;
/// 127.0.0.1:7002: held elsewhere; 127.0.0.1:7003: no answer yet" (the
/// operation was decided without it). Nodes that granted are left out;
/// empty when none is left.
std::string describe_nodes(const std::vector<node_outcome>& outcomes,
                           const std::vector<node_config>& nodes);

/// A failed lock operation in one line: the message of `ec` (which is the
/// same for every occurrence of a code), followed by describe_nodes() of
/// `failed` in parentheses when some node did not grant, e.g.
/// "quorum unreachable: too few Redis nodes answered (127.0.0.1:7001:
/// Connection refused; 127.0.0.1:7002: Connection refused)". `failed` is
/// the lock the operation returned (empty for a failed acquire, which still
/// has its last attempt's nodes()); `nodes` is client::config().nodes.
/// blocking_client's exceptions carry the same node list in what().
std::string describe_failure(error_code ec, const lock& failed,
                             const std::vector<node_config>& nodes);

}  // namespace redlock
