// The topology check at connect, against real servers: replicas, cluster
// mode and one server listed twice are refused with a per-node error; risky
// settings are warned about once; credentials refused by some nodes.
#include "test_env.hpp"

#include "support/fault_proxy.hpp"

#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::log_level;

namespace {

/// A refused node never votes. Its operations fail at once with the refusal,
/// unless they met it reconnecting (every backoff it connects and is checked
/// again): then they may still be pending when the quorum completes.
bool refused(const redlock::node_outcome& node, errc code) {
  return node.state == status::pending || (node.state == status::failed && node.error == code);
}

/// Makes node `replica` replicate node `master`, and waits until the master
/// counts it (replication starts after REPLICAOF has answered).
void make_replica(env& e, std::size_t replica, std::size_t master) {
  const auto before = info_field(*e.admin[master], "replication", "connected_slaves");
  const auto port = std::to_string(e.nodes.node(master).port());
  REQUIRE(e.admin[replica]->command({"REPLICAOF", "127.0.0.1", port}).text == "OK");
  REQUIRE(poll_until(
      e.io,
      [&] { return info_field(*e.admin[master], "replication", "connected_slaves") > before; },
      5s));
}

/// Runs the client until `count` lines of `level` containing `text` have
/// been logged: the checks run as each node connects, and an operation
/// completes at a quorum, before the slowest node may have connected.
void wait_for_log(boost::asio::io_context& io, const log_capture& log, log_level level,
                  std::string_view text, std::size_t count = 1) {
  run_until(
      io, [&] { return log.count(level, text) >= count; }, 5s, text);
}

}  // namespace

TEST_CASE("a replica is refused with replica_node and the masters keep serving the lock",
          "[integration][topology]") {
  env e(5);
  make_replica(e, 4, 0);
  redlock::client locks(e.io.get_executor(), e.config);
  const auto master = fmt::format("replica of 127.0.0.1:{}", e.nodes.node(0).port());
  wait_for_log(e.io, e.log, log_level::error, master);
  // The master it replicates from may fail over to it one day: a warning.
  wait_for_log(e.io, e.log, log_level::warning, "1 replica(s)");
  auto got = acquire(e.io, locks, "job", once());
  INFO(describe_nodes(got.held) << e.log.dump());
  REQUIRE_FALSE(got.ec);
  CHECK(refused(got.held.nodes()[4], errc::replica_node));
  CHECK(e.log.count(log_level::error, "independent masters") == 1);
  CHECK(e.log.count(log_level::warning, "1 replica(s)") == 1);
  // Later operations fail on it at once, with the same cause.
  auto again = extend(e.io, locks, got.held, 10s);
  REQUIRE_FALSE(again.ec);
  CHECK(refused(again.held.nodes()[4], errc::replica_node));
}

TEST_CASE("a majority of replicas fails the acquire with replica_node", "[integration][topology]") {
  env e(3);
  make_replica(e, 1, 0);
  make_replica(e, 2, 0);
  redlock::client locks(e.io.get_executor(), e.config);
  auto got = acquire(e.io, locks, "job", once());
  INFO(describe_nodes(got.held));
  CHECK(got.ec == errc::replica_node);
  CHECK_THAT(got.ec.message(), Catch::Contains("independent masters"));
  CHECK(e.key_nowhere(e.key("job")));
}

TEST_CASE("a node in cluster mode is refused with cluster_node", "[integration][topology]") {
  redlock::test::cluster plain(2);
  redlock::test::server_options clustered;
  clustered.extra_args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"};
  redlock::test::cluster shard(1, clustered);
  log_capture log;
  auto config = make_config(plain, log);
  config.nodes.push_back(shard.node_configs()[0]);
  boost::asio::io_context io;
  redlock::client locks(io.get_executor(), config);
  wait_for_log(io, log, log_level::error, "cluster mode");
  auto got = acquire(io, locks, "job", once());
  INFO(describe_nodes(got.held) << log.dump());
  REQUIRE_FALSE(got.ec);
  CHECK(refused(got.held.nodes()[2], errc::cluster_node));
  CHECK(log.count(log_level::error, "cluster mode") == 1);
}

TEST_CASE("one server listed under two names is refused once as same_server",
          "[integration][topology]") {
  env e(3);
  auto config = e.config;
  // 127.0.0.1:P and localhost:P are one server; config validation cannot
  // tell, its run_id can.
  config.nodes[2].host = "localhost";
  config.nodes[2].port = e.nodes.node(0).port();
  redlock::client locks(e.io.get_executor(), config);
  wait_for_log(e.io, e.log, log_level::error, "same Redis server as node");
  auto got = acquire(e.io, locks, "job", once());
  INFO(describe_nodes(got.held) << e.log.dump());
  REQUIRE_FALSE(got.ec);
  // Whichever of the two answered INFO second is refused.
  const auto& first = got.held.nodes()[0];
  const auto& second = got.held.nodes()[2];
  CHECK((refused(first, errc::same_server) != refused(second, errc::same_server)));
  CHECK(got.held.nodes()[1].state == status::acquired);
  CHECK(e.log.count(log_level::error, "same Redis server as node") == 1);
  // With the other server gone, one server is all that holds the lock: an
  // extend must not count it twice and claim a majority.
  e.nodes.node(1).stop();
  auto extended = extend(e.io, locks, got.held, 10s);
  INFO(describe_nodes(extended.held));
  CHECK(extended.ec);
  CHECK(count_nodes(extended.held, status::acquired) <= 1);
}

TEST_CASE("a twin stays refused while the node it duplicates is disconnected",
          "[integration][topology]") {
  // Nodes 0 and 4 both reach server 0, each through a proxy of its own, so
  // the test decides which of them connects when.
  env e(4);
  redlock::test::fault_proxy first(e.nodes.node(0).port());
  redlock::test::fault_proxy twin(e.nodes.node(0).port());
  auto config = e.config;
  config.reconnect = {10ms, 50ms, 0.5};
  config.nodes[0].port = first.port();
  config.nodes.push_back(config.nodes[0]);
  config.nodes[4].port = twin.port();
  const auto twin_name = fmt::format("127.0.0.1:{}", twin.port());
  twin.refuse_new_connections(true);
  redlock::client locks(e.io.get_executor(), config);

  // Node 0 passes its check: its SET reaches server 0.
  auto warm = acquire(e.io, locks, "warm", once());
  REQUIRE_FALSE(warm.ec);
  REQUIRE(poll_until(e.io, [&] { return e.admin[0]->get(e.key("warm")) == warm.held.token(); }));

  // The twin connects (and is refused) again and again.
  const auto connections = [&] {
    return info_field(*e.admin[0], "stats", "total_connections_received");
  };
  auto before = connections();
  twin.refuse_new_connections(false);
  REQUIRE(poll_until(
      e.io, [&] { return connections() > before + 1; }, 5s));

  // Node 0 loses its connection and cannot reconnect; the twin is checked
  // again at its next reconnects and must still be refused: node 0's votes
  // (the key above) still stand.
  first.refuse_new_connections(true);
  first.reset_connections();
  before = connections();
  const auto reconnected = twin_name + ": reconnected";
  REQUIRE(poll_until(
      e.io,
      [&] { return connections() > before + 1 || e.log.count(log_level::info, reconnected) > 0; },
      5s));
  auto got = acquire(e.io, locks, "job", once());
  INFO(describe_nodes(got.held) << e.log.dump());
  REQUIRE_FALSE(got.ec);
  CHECK(refused(got.held.nodes()[4], errc::same_server));
  CHECK_FALSE(e.admin[0]->get(e.key("job")));
  CHECK(e.log.count(log_level::info, reconnected) == 0);
}

TEST_CASE("an error answer to INFO fails the node until the check passes",
          "[integration][topology]") {
  // With maxclients reached, the server answers the first command (INFO)
  // with an error and closes: no node to vote, and no "unchecked" node.
  env e(3);
  auto config = e.config;
  config.reconnect = {10ms, 50ms, 0.5};
  REQUIRE(e.admin[2]->command({"CONFIG", "SET", "maxclients", "1"}).text == "OK");
  redlock::client locks(e.io.get_executor(), config);
  wait_for_log(e.io, e.log, log_level::error, "INFO failed: ERR max number of clients");
  auto got = acquire(e.io, locks, "job", once());
  INFO(describe_nodes(got.held) << e.log.dump());
  REQUIRE_FALSE(got.ec);
  CHECK(got.held.nodes()[2].state != status::acquired);
  CHECK(e.log.count(log_level::warning, "cannot check") == 0);
  // Room again: the node is checked, accepted and votes.
  REQUIRE(e.admin[2]->command({"CONFIG", "SET", "maxclients", "100"}).text == "OK");
  wait_for_log(e.io, e.log, log_level::info, "reconnected");
  auto again = acquire(e.io, locks, "job2", once());
  INFO(describe_nodes(again.held));
  REQUIRE_FALSE(again.ec);
  REQUIRE(poll_until(e.io, [&] { return e.admin[2]->get(e.key("job2")) == again.held.token(); }));
}

TEST_CASE("a refusal met after another failure is still logged", "[integration][topology]") {
  env e(3);
  make_replica(e, 2, 0);
  // Node 2 is reached through a proxy that first resets every connection.
  redlock::test::fault_proxy gate(e.nodes.node(2).port());
  gate.refuse_new_connections(true);
  auto config = e.config;
  config.reconnect = {10ms, 50ms, 0.5};
  config.nodes[2].port = gate.port();
  const auto name = fmt::format("127.0.0.1:{}", gate.port());
  redlock::client locks(e.io.get_executor(), config);
  warm_up(e.io, locks);
  run_until(
      e.io, [&] { return e.log.count(log_level::warning, name) >= 1; }, 5s, "the first failure");
  gate.refuse_new_connections(false);
  wait_for_log(e.io, e.log, log_level::error, "replica of 127.0.0.1:");
  CHECK(e.log.count(log_level::error, name + ": refused") == 1);
}

TEST_CASE("settings that can lose a lock are warned about once per node",
          "[integration][topology]") {
  redlock::test::server_options evicting;
  evicting.extra_args = {"--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru"};
  env e(3, evicting);
  auto config = e.config;
  config.warn_without_aof = true;
  redlock::client locks(e.io.get_executor(), config);
  auto got = acquire(e.io, locks, "job", once());
  REQUIRE_FALSE(got.ec);
  wait_for_log(e.io, e.log, log_level::warning, "maxmemory-policy is volatile-lru", 3);
  wait_for_log(e.io, e.log, log_level::warning, "appendonly is no", 3);
  // A reconnect checks again but does not repeat the warnings.
  e.nodes.node(0).restart();
  wait_for_log(e.io, e.log, log_level::info, "reconnected");
  CHECK(e.log.count(log_level::warning, "appendonly is no") == 3);
  // A library user is told which field turns the AOF warning off.
  CHECK(e.log.count(log_level::warning, "client_config::warn_without_aof turns this warning off") ==
        3);
}

TEST_CASE("client_config::on_risk takes the risky settings instead of the log",
          "[integration][topology]") {
  env e(3);
  auto config = e.config;
  config.warn_without_aof = true;
  struct seen {
    redlock::node_risk risk;
    std::size_t node;
    std::string endpoint;
    std::string explanation;
  };
  auto reports = std::make_shared<std::vector<seen>>();
  config.on_risk = [reports](const redlock::node_risk_report& r) {
    reports->push_back({r.risk, r.node, std::string(r.endpoint), std::string(r.explanation)});
  };
  redlock::client locks(e.io.get_executor(), config);
  run_until(
      e.io, [&] { return reports->size() >= 3; }, 5s, "a report from every node");
  std::set<std::size_t> nodes;
  for (const auto& r : *reports) {
    INFO(r.explanation);
    CHECK(r.risk == redlock::node_risk::no_aof);
    CHECK(to_string(r.risk) == "no_aof");
    CHECK(r.endpoint == fmt::format("127.0.0.1:{}", e.nodes.node(r.node).port()));
    CHECK(r.explanation.starts_with("appendonly is no"));
    // The application names its own switch: the library names none.
    CHECK(r.explanation.find("warn_without_aof") == std::string::npos);
    nodes.insert(r.node);
  }
  CHECK(nodes == std::set<std::size_t>{0, 1, 2});
  CHECK(e.log.count(log_level::warning, "appendonly") == 0);
}

TEST_CASE("without warn_without_aof, nodes without AOF are not warned about",
          "[integration][topology]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  CHECK(e.log.count(log_level::warning) == 0);
}

TEST_CASE("an ACL user that may not run INFO locks unchecked, with a warning",
          "[integration][topology]") {
  env e(3);
  for (auto& admin : e.admin) {
    REQUIRE(
        admin->command({"ACL", "SETUSER", "locker", "on", ">pw", "~*", "+@all", "-info"}).text ==
        "OK");
  }
  auto config = e.config;
  for (auto& node : config.nodes) {
    node.username = "locker";
    node.password = "pw";
  }
  redlock::client locks(e.io.get_executor(), config);
  auto got = acquire(e.io, locks, "job", once());
  INFO(describe_nodes(got.held));
  REQUIRE_FALSE(got.ec);
  wait_for_log(e.io, e.log, log_level::warning, "cannot check that it is an independent master", 3);
  CHECK(e.log.count(log_level::warning) == 3);
}

TEST_CASE("a password refused by one node fails that node only, by a majority the acquire",
          "[integration][topology]") {
  redlock::test::server_options secured;
  secured.requirepass = "s3cret";
  env e(5, secured);
  auto config = e.config;
  SECTION("one node") {
    config.nodes[1].password = "wrong";
    redlock::client locks(e.io.get_executor(), config);
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held) << e.log.dump());
    REQUIRE_FALSE(got.ec);
    // Node 1 may answer after the quorum: its refusal is then only logged.
    CHECK(refused(got.held.nodes()[1], errc::authentication_failed));
    wait_for_log(e.io, e.log, log_level::error, "connection set-up refused");
    CHECK(e.log.count(log_level::error,
                      fmt::format("node 127.0.0.1:{}: connection set-up refused: authentication",
                                  e.nodes.node(1).port())) == 1);
    CHECK(count_nodes(got.held, status::acquired) >= 3);
  }
  SECTION("a majority, with another node down") {
    for (std::size_t i : {0, 1, 2}) config.nodes[i].password = "wrong";
    e.nodes.node(3).stop();
    redlock::client locks(e.io.get_executor(), config);
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held));
    CHECK(got.ec == errc::authentication_failed);
  }
}

TEST_CASE("an ACL user refused by one node fails that node only, by a majority the acquire",
          "[integration][topology]") {
  env e(5);
  for (auto& admin : e.admin) {
    REQUIRE(admin->command({"ACL", "SETUSER", "locker", "on", ">pw", "~*", "+@all"}).text == "OK");
  }
  auto config = e.config;
  for (auto& node : config.nodes) {
    node.username = "locker";
    node.password = "pw";
  }
  SECTION("a wrong password on one node") {
    config.nodes[1].password = "wrong";
    redlock::client locks(e.io.get_executor(), config);
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held));
    REQUIRE_FALSE(got.ec);
    wait_for_log(e.io, e.log, log_level::error, "connection set-up refused");
    CHECK(e.log.count(log_level::error,
                      fmt::format("node 127.0.0.1:{}: connection set-up refused: authentication",
                                  e.nodes.node(1).port())) == 1);
    CHECK(got.held.nodes()[1].state != status::acquired);
    CHECK(e.key_everywhere_but(e.key("job"), got.held.token(), {1}));
  }
  SECTION("an unknown user on a majority") {
    for (std::size_t i : {0, 2, 4}) config.nodes[i].username = "nobody";
    redlock::client locks(e.io.get_executor(), config);
    auto got = acquire(e.io, locks, "job", once());
    INFO(describe_nodes(got.held));
    CHECK(got.ec == errc::authentication_failed);
    CHECK(e.key_nowhere(e.key("job")));
  }
}
