// Whether a node may vote, judged from INFO answers made up here: no
// sockets, no server.
#include "detail/admission.hpp"

#include "detail/commands.hpp"
#include "detail/server_registry.hpp"
#include "made_replies.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

// Named, so that a unity build can merge this file with the other tests.
namespace admission_test {

using redlock::errc;
using redlock::node_risk;
using redlock::detail::admission;
using redlock::detail::failure_series;
using redlock::detail::reply;
using redlock::detail::server_registry;

namespace {

const auto text = redlock::test::text_reply;
const auto error = redlock::test::error_reply;

constexpr std::string_view healthy_master =
    "# Server\r\nrun_id:aaaa\r\n# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"
    "# Cluster\r\ncluster_enabled:0\r\n# Persistence\r\naof_enabled:1\r\n"
    "# Memory\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n";

constexpr std::string_view master_without_aof =
    "run_id:aaaa\r\nrole:master\r\ncluster_enabled:0\r\naof_enabled:0\r\nmaxmemory:0\r\n"
    "maxmemory_policy:noeviction\r\n";

}  // namespace

TEST_CASE("admission: a healthy master votes, and its next checks may be pipelined") {
  admission check(true, nullptr, 0, "n0:1");
  CHECK_FALSE(check.passed_before());
  const auto verdict = check.judge(text(healthy_master));
  CHECK_FALSE(verdict.refusal);
  CHECK(verdict.new_risks.empty());
  CHECK(verdict.unchecked_warning.empty());
  CHECK(check.passed_before());
}

TEST_CASE("admission: a replica is refused with the reason") {
  admission check(true, nullptr, 0, "n0:1");
  const auto verdict =
      check.judge(text("run_id:bbbb\r\nrole:slave\r\nmaster_host:h\r\nmaster_port:1\r\n"));
  CHECK(verdict.refusal == errc::replica_node);
  CHECK_FALSE(verdict.reason.empty());
  CHECK_FALSE(check.passed_before());
}

TEST_CASE("admission: an error answer refuses the node, as the error it stands for") {
  admission check(true, nullptr, 0, "n0:1");
  auto busy = check.judge(error("BUSY Redis is busy running a script"));
  CHECK(busy.refusal == errc::server_error);
  CHECK(busy.reason == "INFO failed: BUSY Redis is busy running a script");
  auto noauth = check.judge(error("NOAUTH Authentication required."));
  CHECK(noauth.refusal == errc::authentication_failed);
  reply number;
  number.type = reply::kind::integer;
  CHECK(check.judge(number).refusal == errc::protocol_error);
  CHECK_FALSE(check.passed_before());
}

TEST_CASE("admission: INFO not allowed or not there lets the node vote unchecked, said once") {
  admission check(true, nullptr, 0, "n0:1");
  const auto first = check.judge(error("NOPERM this user has no permissions to run 'info'"));
  CHECK_FALSE(first.refusal);
  CHECK(first.unchecked_warning ==
        "cannot check that it is an independent master (INFO answered: NOPERM this user has "
        "no permissions to run 'info')");
  CHECK(check.passed_before());
  const auto again = check.judge(error("ERR unknown command 'INFO'"));
  CHECK_FALSE(again.refusal);
  CHECK(again.unchecked_warning.empty());
}

TEST_CASE("admission: each risk is reported once per node, and a new one when it appears") {
  admission check(true, nullptr, 0, "n0:1");
  const auto first = check.judge(text(master_without_aof));
  REQUIRE(first.new_risks.size() == 1);
  CHECK(first.new_risks[0].kind == node_risk::no_aof);
  CHECK(check.judge(text(master_without_aof)).new_risks.empty());
  const auto evicting =
      check.judge(text("run_id:aaaa\r\nrole:master\r\ncluster_enabled:0\r\naof_enabled:0\r\n"
                       "maxmemory:100\r\nmaxmemory_policy:allkeys-lru\r\n"));
  REQUIRE(evicting.new_risks.size() == 1);
  CHECK(evicting.new_risks[0].kind != node_risk::no_aof);
}

TEST_CASE("admission: without the AOF warning, appendonly no is no risk") {
  admission check(false, nullptr, 0, "n0:1");
  CHECK(check.judge(text(master_without_aof)).new_risks.empty());
}

TEST_CASE("admission: a server already claimed by another node is refused as its twin") {
  auto servers = std::make_shared<server_registry>(2);
  admission first(true, servers, 0, "a:1");
  admission twin(true, servers, 1, "b:1");
  CHECK_FALSE(first.judge(text(healthy_master)).refusal);
  const auto verdict = twin.judge(text(healthy_master));
  CHECK(verdict.refusal == errc::same_server);
  CHECK(verdict.reason.find("node a:1") != std::string::npos);
  CHECK_FALSE(twin.passed_before());
}

TEST_CASE("admission: the set-up commands are AUTH, SELECT and a subscriber's PING, in order") {
  redlock::node_config node;
  CHECK(redlock::detail::setup_commands(node, false).empty());
  node.username = "u";
  node.password = "p";
  node.database = 2;
  const auto commands = redlock::detail::setup_commands(node, true);
  REQUIRE(commands.size() == 3);
  CHECK(commands[0] == redlock::detail::auth_command("u", "p"));
  CHECK(commands[1] == redlock::detail::select_command(2));
  CHECK(commands[2] == redlock::detail::format_command({"PING"}));
}

TEST_CASE("admission: a failure is news when a series starts or its cause changes") {
  failure_series failures;
  CHECK(failures.is_news(errc::node_unavailable));
  failures.add(errc::node_unavailable);
  CHECK_FALSE(failures.is_news(errc::node_unavailable));
  CHECK(failures.is_news(errc::replica_node));
  failures.add(errc::replica_node);
  CHECK(failures.count() == 2);
  CHECK(failures.last() == errc::replica_node);
  CHECK(failures.end());
  CHECK_FALSE(failures.end());
  CHECK(failures.is_news(errc::replica_node));
}

}  // namespace admission_test
