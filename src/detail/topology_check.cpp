#include "detail/topology_check.hpp"

#include <fmt/format.h>

#include <charconv>

namespace redlock::detail {
namespace {

std::optional<bool> flag(std::string_view value) {
  if (value == "1") return true;
  if (value == "0") return false;
  return std::nullopt;
}

std::optional<std::uint64_t> number(std::string_view value) {
  std::uint64_t out = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc{} || end != value.data() + value.size()) return std::nullopt;
  return out;
}

}  // namespace

server_info parse_info(std::string_view text) {
  server_info info;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    auto line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const auto colon = line.find(':');
    if (line.empty() || line.front() == '#' || colon == std::string_view::npos) continue;
    const auto field = line.substr(0, colon);
    const auto value = line.substr(colon + 1);
    if (field == "run_id") {
      info.run_id = value;
    } else if (field == "role") {
      info.role = value;
    } else if (field == "master_host") {
      info.master_host = value;
    } else if (field == "master_port") {
      info.master_port = value;
    } else if (field == "cluster_enabled") {
      info.cluster_enabled = flag(value);
    } else if (field == "aof_enabled") {
      info.aof_enabled = flag(value);
    } else if (field == "connected_slaves") {
      info.connected_replicas = number(value);
    } else if (field == "maxmemory") {
      info.maxmemory = number(value);
    } else if (field == "maxmemory_policy") {
      info.maxmemory_policy = value;
    }
  }
  return info;
}

topology_verdict check_topology(const server_info& info, bool check_persistence) {
  topology_verdict verdict;
  if (info.role == "slave") {
    verdict.refusal = errc::replica_node;
    verdict.reason = fmt::format(
        "it is a replica{}. Redlock needs independent masters: replication is asynchronous, so "
        "after a failover a promoted replica may not have a lock its master granted, and two "
        "clients hold it at once (docs/safety.md, \"Topology checks\")",
        info.master_host.empty() ? std::string()
                                 : fmt::format(" of {}:{}", info.master_host, info.master_port));
  } else if (info.cluster_enabled.value_or(false)) {
    verdict.refusal = errc::cluster_node;
    verdict.reason =
        "it runs in cluster mode (cluster_enabled:1). Redlock needs N independent masters, not "
        "the shards of one Redis Cluster: a key lives on one shard, whose replicas fail over "
        "asynchronously, so the quorum would be a single node's word (docs/safety.md, \"Topology "
        "checks\")";
  }
  if (info.role == "master" && info.connected_replicas.value_or(0) > 0) {
    verdict.risks.push_back(
        {node_risk::replicas,
         fmt::format("it has {} replica(s): if a failover (Sentinel, a manual REPLICAOF) ever "
                     "promotes one, locks granted here but not yet replicated are forgotten; lock "
                     "nodes should be independent masters without failover (docs/safety.md, "
                     "\"Topology checks\")",
                     *info.connected_replicas)});
  }
  // maxmemory 0 means no limit, so nothing is evicted whatever the policy.
  if (info.maxmemory.value_or(0) != 0 && !info.maxmemory_policy.empty() &&
      info.maxmemory_policy != "noeviction") {
    verdict.risks.push_back(
        {node_risk::evicting_policy,
         fmt::format("maxmemory-policy is {} with maxmemory {}: when memory runs out the node may "
                     "evict lock keys (they all have a TTL, so volatile-* policies evict them "
                     "too) and grant a held lock again; use noeviction (docs/safety.md, "
                     "\"Topology checks\")",
                     info.maxmemory_policy, *info.maxmemory)});
  }
  if (check_persistence && info.aof_enabled == false) {
    verdict.risks.push_back(
        {node_risk::no_aof,
         "appendonly is no: a restart forgets the locks this node granted, so unless restarts are "
         "delayed by more than the longest TTL a restarted node can grant a held lock again; use "
         "appendonly yes with appendfsync always, or delayed restarts (docs/safety.md, "
         "\"Topology checks\")"});
  }
  return verdict;
}

std::string default_risk_warning(const topology_risk& risk) {
  if (risk.kind == node_risk::no_aof) {
    return risk.explanation + "; client_config::warn_without_aof turns this warning off";
  }
  return risk.explanation;
}

}  // namespace redlock::detail
