#include <redlock/error.hpp>

#include <openssl/x509.h>

#include <string>

namespace redlock {
namespace {

class redlock_category final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "redlock"; }

  // Long: one case per errc, a table that reads best whole.
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::not_acquired:
        return "lock not acquired: the resource is held by another owner";
      case errc::quorum_unreachable:
        return "quorum unreachable: too few Redis nodes answered";
      case errc::validity_expired:
        return "quorum reached too late: no validity time left";
      case errc::lock_expired:
        return "the lock's validity has already ended";
      case errc::lock_lost:
        return "the lock is no longer held on a quorum of nodes";
      case errc::lock_released:
        return "the lock has been released";
      case errc::lock_expiring:
        return "no extension of the kept lock reached a quorum in time: its validity is about to "
               "end";
      case errc::hold_limit_reached:
        return "the kept lock reached its max_hold or max_extensions: its validity is about to end";
      case errc::node_timeout:
        return "the Redis node did not answer within the request timeout";
      case errc::node_unavailable:
        return "no connection to the Redis node";
      case errc::authentication_failed:
        return "authentication to the Redis node failed (wrong user name or password)";
      case errc::server_error:
        return "the Redis node answered with an error";
      case errc::protocol_error:
        return "unexpected or malformed reply from the Redis node";
      case errc::connection_closed:
        return "the client was shut down before the node answered";
      case errc::replica_node:
        return "the Redis node is a replica; Redlock needs independent masters";
      case errc::cluster_node:
        return "the Redis node runs in cluster mode; Redlock needs independent masters, not "
               "Redis Cluster shards";
      case errc::same_server:
        return "the Redis node is the same server as another configured node; Redlock needs "
               "independent masters";
      case errc::empty_resource:
        return "invalid argument: the resource name is empty";
      case errc::invalid_ttl:
        return "invalid argument: the TTL must be positive and at most 365 days";
      case errc::ttl_within_drift:
        return "invalid argument: the TTL must be larger than the clock-drift allowance (ttl * "
               "drift_factor + 2 ms)";
      case errc::invalid_request_timeout:
        return "invalid argument: the request timeout must be positive and smaller than the TTL";
      case errc::invalid_drift_factor:
        return "invalid argument: the drift factor must be in [0, 1)";
      case errc::invalid_retry_policy:
        return "invalid argument: retry and wait delays must be non-negative and at most 365 "
               "days, base_delay <= max_delay, jitter in [0, 1]";
      case errc::invalid_min_validity:
        return "invalid argument: min_validity must be non-negative and smaller than the TTL";
      case errc::invalid_keep_options:
        return "invalid argument: keep_options needs extend_at in (0, 0.9], a non-negative ttl "
               "larger than the drift allowance when set, a lost_margin in [0, extend_at * "
               "validity), and a non-negative max_hold";
      case errc::not_a_lock:
        return "invalid argument: the lock handle is empty";
      case errc::foreign_lock:
        return "invalid argument: the lock was acquired through another client";
      case errc::no_nodes:
        return "invalid configuration: no Redis nodes";
      case errc::duplicate_node:
        return "invalid configuration: the same node (host and port) is listed twice";
      case errc::invalid_node:
        return "invalid configuration: a node has an empty host, port 0 or a negative database";
      case errc::too_many_nodes:
        return "invalid configuration: more than 64 nodes";
      case errc::no_resources:
        return "invalid argument: the list of resources to acquire is empty";
      case errc::duplicate_resource:
        return "invalid argument: the list of resources names the same resource twice";
      case errc::too_many_resources:
        return "invalid argument: more than 256 resources in one acquire";
      case errc::empty_token:
        return "invalid argument: the lock token is empty";
      case errc::invalid_tls:
        return "invalid configuration: a TLS setting is incomplete or its file cannot be used";
      case errc::fence_state_lost:
        return "the Redis node lost its fencing state (restart, FLUSHALL or eviction); it is left "
               "out of fenced acquires until re-seeded from the other nodes";
      case errc::fenced_ttl_too_long:
        return "invalid argument: a fenced acquire's TTL must be at most "
               "client_config::max_fenced_ttl";
      case errc::invalid_lock_delay:
        return "invalid argument: the lock delay must be non-negative and at most 365 days";
      case errc::reserved_key:
        return "invalid argument: the resource's key is redlock:fencing, where the nodes keep "
               "their fencing state";
    }
    return "unknown redlock error " + std::to_string(value);
  }

  boost::system::error_condition default_error_condition(int value) const noexcept override {
    const auto code = static_cast<errc>(value);
    if ((code >= errc::empty_resource && code <= errc::invalid_tls) ||
        code == errc::fenced_ttl_too_long || code == errc::invalid_lock_delay ||
        code == errc::reserved_key) {
      return boost::system::errc::make_error_condition(boost::system::errc::invalid_argument);
    }
    if (static_cast<errc>(value) == errc::node_timeout) {
      return boost::system::errc::make_error_condition(boost::system::errc::timed_out);
    }
    return {value, *this};
  }
};

class tls_verify_category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "redlock.tls_verify"; }

  std::string message(int value) const override {
    return std::string("TLS certificate verification failed: ") +
           X509_verify_cert_error_string(value);
  }
};

}  // namespace

const boost::system::error_category& tls_verify_category() noexcept {
  static const tls_verify_category_impl category;
  return category;
}

const boost::system::error_category& error_category() noexcept {
  static const redlock_category category;
  return category;
}

bool is_invalid_argument(const error_code& ec) noexcept {
  return ec == boost::system::errc::invalid_argument;
}

bool is_permanent_node_failure(const error_code& ec) noexcept {
  return ec == errc::authentication_failed || ec == errc::replica_node ||
         ec == errc::cluster_node || ec == errc::same_server ||
         ec.category() == tls_verify_category();
}

}  // namespace redlock
