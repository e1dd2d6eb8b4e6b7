// The names of the public enumerations (to_string), one switch each: a
// switch without a default, so that -Wswitch names an enumerator that was
// added without a name here.
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/lock.hpp>
#include <redlock/periodic.hpp>
#include <redlock/status.hpp>

namespace redlock {

// Long: one case per errc, a table that reads best whole.
std::string_view to_string(errc e) noexcept {
  switch (e) {
    case errc::not_acquired:
      return "not_acquired";
    case errc::quorum_unreachable:
      return "quorum_unreachable";
    case errc::validity_expired:
      return "validity_expired";
    case errc::lock_expired:
      return "lock_expired";
    case errc::lock_lost:
      return "lock_lost";
    case errc::lock_released:
      return "lock_released";
    case errc::lock_expiring:
      return "lock_expiring";
    case errc::hold_limit_reached:
      return "hold_limit_reached";
    case errc::node_timeout:
      return "node_timeout";
    case errc::node_unavailable:
      return "node_unavailable";
    case errc::authentication_failed:
      return "authentication_failed";
    case errc::server_error:
      return "server_error";
    case errc::protocol_error:
      return "protocol_error";
    case errc::connection_closed:
      return "connection_closed";
    case errc::replica_node:
      return "replica_node";
    case errc::cluster_node:
      return "cluster_node";
    case errc::same_server:
      return "same_server";
    case errc::empty_resource:
      return "empty_resource";
    case errc::invalid_ttl:
      return "invalid_ttl";
    case errc::ttl_within_drift:
      return "ttl_within_drift";
    case errc::invalid_request_timeout:
      return "invalid_request_timeout";
    case errc::invalid_drift_factor:
      return "invalid_drift_factor";
    case errc::invalid_retry_policy:
      return "invalid_retry_policy";
    case errc::invalid_min_validity:
      return "invalid_min_validity";
    case errc::invalid_keep_options:
      return "invalid_keep_options";
    case errc::not_a_lock:
      return "not_a_lock";
    case errc::foreign_lock:
      return "foreign_lock";
    case errc::no_nodes:
      return "no_nodes";
    case errc::duplicate_node:
      return "duplicate_node";
    case errc::invalid_node:
      return "invalid_node";
    case errc::too_many_nodes:
      return "too_many_nodes";
    case errc::no_resources:
      return "no_resources";
    case errc::duplicate_resource:
      return "duplicate_resource";
    case errc::too_many_resources:
      return "too_many_resources";
    case errc::empty_token:
      return "empty_token";
    case errc::invalid_tls:
      return "invalid_tls";
    case errc::fence_state_lost:
      return "fence_state_lost";
    case errc::fenced_ttl_too_long:
      return "fenced_ttl_too_long";
    case errc::invalid_lock_delay:
      return "invalid_lock_delay";
    case errc::reserved_key:
      return "reserved_key";
  }
  return "unknown";
}

std::string_view to_string(node_outcome::status s) noexcept {
  using status = node_outcome::status;
  switch (s) {
    case status::pending:
      return "pending";
    case status::acquired:
      return "acquired";
    case status::held_elsewhere:
      return "held_elsewhere";
    case status::failed:
      return "failed";
  }
  return "unknown";
}

std::string_view to_string(node_status::holding h) noexcept {
  using holding = node_status::holding;
  switch (h) {
    case holding::unknown:
      return "unknown";
    case holding::free:
      return "free";
    case holding::plain:
      return "plain";
    case holding::reentrant:
      return "reentrant";
    case holding::other:
      return "other";
  }
  return "invalid";  // "unknown" is an enumerator's name here
}

std::string_view to_string(retry_policy::backoff mode) noexcept {
  switch (mode) {
    case retry_policy::backoff::fixed:
      return "fixed";
    case retry_policy::backoff::exponential:
      return "exponential";
  }
  return "unknown";
}

std::string_view to_string(log_level level) noexcept {
  switch (level) {
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warning:
      return "warning";
    case log_level::error:
      return "error";
  }
  return "unknown";
}

std::string_view to_string(occurrence_outcome outcome) noexcept {
  switch (outcome) {
    case occurrence_outcome::ran:
      return "ran";
    case occurrence_outcome::claimed_elsewhere:
      return "claimed_elsewhere";
    case occurrence_outcome::previous_running:
      return "previous_running";
    case occurrence_outcome::missed:
      return "missed";
    case occurrence_outcome::failed:
      return "failed";
    case occurrence_outcome::contended:
      return "contended";
  }
  return "unknown";
}

std::string_view to_string(claim_outcome outcome) noexcept {
  switch (outcome) {
    case claim_outcome::claimed:
      return "claimed";
    case claim_outcome::claimed_elsewhere:
      return "claimed_elsewhere";
    case claim_outcome::contended:
      return "contended";
    case claim_outcome::missed:
      return "missed";
    case claim_outcome::failed:
      return "failed";
  }
  return "unknown";
}

std::string_view to_string(node_risk risk) noexcept {
  switch (risk) {
    case node_risk::replicas:
      return "replicas";
    case node_risk::evicting_policy:
      return "evicting_policy";
    case node_risk::no_aof:
      return "no_aof";
  }
  return "unknown";
}

}  // namespace redlock
