// What a node's INFO says about its place in the deployment, and whether
// Redlock can count it as an independent master. Pure: no I/O.
#pragma once

#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// The INFO fields the checks read; a field the server did not report
/// stays empty (other servers and older versions omit some).
struct server_info {
  std::string run_id;
  std::string role;  ///< "master" or "slave".
  std::string master_host;
  std::string master_port;
  std::optional<std::uint64_t> connected_replicas;  ///< INFO's connected_slaves.
  std::optional<bool> cluster_enabled;
  std::optional<bool> aof_enabled;
  std::optional<std::uint64_t> maxmemory;
  std::string maxmemory_policy;
};

/// Reads the "field:value" lines of an INFO reply; other lines are ignored.
server_info parse_info(std::string_view text);

/// A setting that weakens the lock on a node, and why (a sentence).
struct topology_risk {
  node_risk kind;
  std::string explanation;
};

/// The sentence logged for a risk when the application does not take risks
/// itself (client_config::on_risk): the explanation, and for no_aof the
/// field that turns the warning off.
std::string default_risk_warning(const topology_risk& risk);

/// The verdict on one node.
struct topology_verdict {
  /// Set when the node must not vote: errc::replica_node or
  /// errc::cluster_node.
  error_code refusal;
  /// Why, for the log: what was found and why Redlock cannot use it.
  std::string reason;
  /// Settings that weaken the lock on this node (eviction of lock keys,
  /// no AOF), each with a sentence for a warning.
  std::vector<topology_risk> risks;
};

/// `check_persistence`: report `appendonly no` among the risks.
topology_verdict check_topology(const server_info& info, bool check_persistence);

}  // namespace redlock::detail
