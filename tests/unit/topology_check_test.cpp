// What a node's INFO makes of it: parsing, refusals, warnings, and the
// registry that spots one server listed twice. No sockets.
#include "detail/topology_check.hpp"
#include "detail/server_registry.hpp"

#include <catch2/catch.hpp>

namespace topology_check_test {

using redlock::errc;
using redlock::detail::check_topology;
using redlock::detail::parse_info;
using redlock::detail::server_info;
using redlock::detail::server_registry;

namespace {

// The shape of Redis 7.0's INFO: sections, CRLF line ends, unrelated fields.
const char* const standalone_master =
    "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"
    "run_id:1f0e2c7d9a3b4c5d6e7f8091a2b3c4d5e6f70812\r\ntcp_port:6379\r\n\r\n"
    "# Memory\r\nused_memory:1000\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n\r\n"
    "# Persistence\r\nloading:0\r\naof_enabled:1\r\n\r\n"
    "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n"
    "# Cluster\r\ncluster_enabled:0\r\n";

bool mentions(const std::vector<redlock::detail::topology_risk>& risks, std::string_view text) {
  for (const auto& risk : risks) {
    if (risk.explanation.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("INFO is parsed field by field", "[unit][topology]") {
  const auto info = parse_info(standalone_master);
  CHECK(info.run_id == "1f0e2c7d9a3b4c5d6e7f8091a2b3c4d5e6f70812");
  CHECK(info.role == "master");
  CHECK(info.cluster_enabled == false);
  CHECK(info.aof_enabled == true);
  CHECK(info.maxmemory == 0u);
  CHECK(info.maxmemory_policy == "noeviction");
  CHECK(info.connected_replicas == 0u);
}

TEST_CASE("INFO without the fields, or with garbage, leaves them unknown", "[unit][topology]") {
  const auto info = parse_info("garbage\n:\nrole\naof_enabled:maybe\nmaxmemory:-5\n# x:y\n");
  CHECK(info.role.empty());
  CHECK_FALSE(info.aof_enabled.has_value());
  CHECK_FALSE(info.maxmemory.has_value());
  const auto verdict = check_topology(info, true);
  CHECK_FALSE(verdict.refusal);
  CHECK(verdict.risks.empty());
}

TEST_CASE("an independent master with AOF and no eviction passes without a warning",
          "[unit][topology]") {
  const auto verdict = check_topology(parse_info(standalone_master), true);
  CHECK_FALSE(verdict.refusal);
  CHECK(verdict.risks.empty());
}

TEST_CASE("a replica is refused, naming its master", "[unit][topology]") {
  auto info = parse_info(standalone_master);
  info.role = "slave";
  info.master_host = "10.0.0.7";
  info.master_port = "6380";
  const auto verdict = check_topology(info, true);
  CHECK(verdict.refusal == errc::replica_node);
  CHECK(verdict.reason.find("replica of 10.0.0.7:6380") != std::string::npos);
  CHECK(verdict.reason.find("independent masters") != std::string::npos);
}

TEST_CASE("a node in cluster mode is refused", "[unit][topology]") {
  server_info info = parse_info(standalone_master);
  info.cluster_enabled = true;
  const auto verdict = check_topology(info, true);
  CHECK(verdict.refusal == errc::cluster_node);
  CHECK(verdict.reason.find("cluster mode") != std::string::npos);
}

TEST_CASE("settings that can lose a granted lock are warned about", "[unit][topology]") {
  server_info info = parse_info(standalone_master);
  SECTION("an evicting policy with a memory limit, volatile-* included") {
    for (const char* policy : {"allkeys-lru", "allkeys-random", "volatile-lru", "volatile-ttl"}) {
      info.maxmemory = 1u << 30;
      info.maxmemory_policy = policy;
      const auto verdict = check_topology(info, true);
      CHECK_FALSE(verdict.refusal);
      CHECK(mentions(verdict.risks, policy));
    }
  }
  SECTION("an evicting policy without a memory limit evicts nothing") {
    info.maxmemory = 0;
    info.maxmemory_policy = "allkeys-lru";
    CHECK(check_topology(info, true).risks.empty());
  }
  SECTION("no AOF, unless that warning is turned off") {
    info.aof_enabled = false;
    const auto risks = check_topology(info, true).risks;
    CHECK(mentions(risks, "appendonly is no"));
    REQUIRE(risks.size() == 1);
    CHECK(risks[0].kind == redlock::node_risk::no_aof);
    CHECK(check_topology(info, false).risks.empty());
  }
  SECTION(
      "the warning a library user gets names the field that turns it off; the explanation an "
      "application formats itself does not") {
    info.aof_enabled = false;
    const auto risk = check_topology(info, true).risks.at(0);
    CHECK(risk.explanation.find("warn_without_aof") == std::string::npos);
    CHECK(redlock::detail::default_risk_warning(risk).find(
              "client_config::warn_without_aof turns this warning off") != std::string::npos);
  }
  SECTION("a master with replicas can fail over") {
    info.connected_replicas = 2;
    const auto risks = check_topology(info, true).risks;
    CHECK(mentions(risks, "2 replica(s)"));
    REQUIRE(risks.size() == 1);
    CHECK(risks[0].kind == redlock::node_risk::replicas);
  }
}

TEST_CASE("a server claimed by one node stays refused to its twin", "[unit][topology]") {
  server_registry servers(4);
  CHECK_FALSE(servers.claim(0, "aaa", "127.0.0.1:7000"));
  CHECK_FALSE(servers.claim(1, "bbb", "127.0.0.1:7001"));
  CHECK(servers.claim(2, "aaa", "localhost:7000") == "127.0.0.1:7000");
  // The same node reconnecting to its own server is no twin.
  CHECK_FALSE(servers.claim(0, "aaa", "127.0.0.1:7000"));
  SECTION("while the first node is disconnected: its votes still stand") {
    CHECK(servers.claim(2, "aaa", "localhost:7000") == "127.0.0.1:7000");
  }
  SECTION("after the server restarted, whichever of the two reconnects first") {
    CHECK(servers.claim(2, "ccc", "localhost:7000") == "127.0.0.1:7000");
    CHECK_FALSE(servers.claim(0, "ccc", "127.0.0.1:7000"));
  }
  SECTION("a node whose server changed is checked against the others again") {
    CHECK_FALSE(servers.claim(0, "ddd", "127.0.0.1:7000"));
    CHECK(servers.claim(3, "bbb", "localhost:7001") == "127.0.0.1:7001");
  }
  SECTION("a server that reports no run_id cannot be compared") {
    CHECK_FALSE(servers.claim(3, "", "127.0.0.1:7003"));
    CHECK_FALSE(servers.claim(1, "", "127.0.0.1:7001"));
  }
  SECTION("a node outside the registry is not recorded") {
    CHECK_FALSE(servers.claim(9, "aaa", "127.0.0.1:7009"));
  }
}

}  // namespace topology_check_test
