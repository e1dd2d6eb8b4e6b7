// Error codes of the redlock library and their category.
#pragma once

#include <boost/system/error_code.hpp>

#include <string_view>
#include <type_traits>

namespace redlock {

using error_code = boost::system::error_code;

/// Every error the library reports itself. Errors from the network
/// (connection refused, reset, ...) are passed through as Asio's codes.
enum class errc {
  // Outcomes of lock operations.
  not_acquired = 1,    ///< The resource is held by another owner on too many nodes.
  quorum_unreachable,  ///< Too few nodes answered for a majority to be possible.
  validity_expired,    ///< A majority agreed, but too late: no validity time was left.
  lock_expired,        ///< The lock's validity had ended before the operation started.
  lock_lost,           ///< Extend or release: the lock no longer held on a majority of nodes.
  lock_released,  ///< Extend: the lock had been released (through this or another copy); also the
                  ///< lost-lock signal of a kept lock released through another copy.
  lock_expiring,  ///< Kept lock: no extension landed in time; the validity is about to end.
  hold_limit_reached,  ///< Kept lock: max_hold or max_extensions reached; the validity is about to
                       ///< end.

  // Per-node failures.
  node_timeout,           ///< The node did not answer within the request timeout.
  node_unavailable,       ///< No connection to the node (it is being re-established).
  authentication_failed,  ///< AUTH was refused (wrong user name or password).
  server_error,           ///< The node answered with an error reply.
  protocol_error,         ///< The node's reply could not be parsed or was unexpected.
  connection_closed,      ///< The client shut down before the node answered.
  replica_node,           ///< The node is a replica (role:slave), not a master.
  cluster_node,           ///< The node runs in cluster mode (cluster_enabled:1).
  same_server,            ///< The node is the same Redis server (run_id) as another node.

  // Invalid arguments and configuration.
  empty_resource,           ///< The resource name is empty.
  invalid_ttl,              ///< The TTL is zero or negative.
  ttl_within_drift,         ///< The TTL is not larger than the clock-drift allowance.
  invalid_request_timeout,  ///< The per-node request timeout is not smaller than the TTL.
  invalid_drift_factor,     ///< The drift factor is negative or not below 1.
  invalid_retry_policy,  ///< A retry or wait delay is negative, the base exceeds the cap, or jitter
                         ///< is outside [0, 1].
  invalid_min_validity,  ///< min_validity is negative or not smaller than the TTL.
  invalid_keep_options,  ///< A keep_options value is out of range (see keep_options).
  not_a_lock,            ///< The lock handle is empty (default-constructed or moved from).
  foreign_lock,          ///< The lock was acquired through another client.
  no_nodes,              ///< The configuration lists no nodes.
  duplicate_node,        ///< Two nodes in the configuration share host and port.
  invalid_node,          ///< A node has an empty host, port 0 or a negative database.
  too_many_nodes,        ///< More than max_nodes nodes are configured.
  no_resources,          ///< A multi-resource acquire was given no resources.
  duplicate_resource,    ///< A multi-resource acquire names the same resource twice.
  too_many_resources,    ///< A multi-resource acquire names more than max_resources resources.
  empty_token,           ///< client::adopt was given an empty token.
  invalid_tls,  ///< A TLS setting is incomplete or its file cannot be used (see tls_config).

  // Fencing and lock-delay (added later; kept last so earlier values stay).
  /// The node lost its fencing state (restart, FLUSHALL, eviction) and is
  /// left out of fenced acquires until it is re-seeded from the others.
  fence_state_lost,
  /// A fenced acquire's TTL exceeds client_config::max_fenced_ttl.
  fenced_ttl_too_long,
  /// lock_options::lock_delay is negative or more than max_duration.
  invalid_lock_delay,
  /// The resource's key (prefix + resource) is "redlock:fencing", where the
  /// nodes keep their fencing state.
  reserved_key,
};

/// The enumerator's name as spelled here ("not_acquired", "lock_lost",
/// ...): stable, for logs and metric labels (message() is the sentence for
/// people). "unknown" for a value that is no enumerator.
std::string_view to_string(errc e) noexcept;

/// The category of #errc. Its name is "redlock".
const boost::system::error_category& error_category() noexcept;

inline error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// The category of a node's TLS certificate verification failures: the
/// value is OpenSSL's X509_V_ERR_* code, the message names the cause
/// ("certificate has expired", "hostname mismatch", ...). Its name is
/// "redlock.tls_verify". Other TLS failures are passed through as Asio's
/// SSL error codes.
const boost::system::error_category& tls_verify_category() noexcept;

/// True for the codes that report a bad argument or configuration; these
/// also compare equal to boost::system::errc::invalid_argument.
bool is_invalid_argument(const error_code& ec) noexcept;

/// True for the per-node failures that waiting cannot heal, because the
/// node refuses this client's configuration: errc::authentication_failed,
/// errc::replica_node, errc::cluster_node, errc::same_server and the codes
/// of tls_verify_category(). An acquire whose attempt such failures sink
/// ends at once instead of retrying (see lock_options::unreachable_timeout).
bool is_permanent_node_failure(const error_code& ec) noexcept;

}  // namespace redlock

namespace boost::system {
template <>
struct is_error_code_enum<redlock::errc> : std::true_type {};
}  // namespace boost::system
