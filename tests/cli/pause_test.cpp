// Work that follows the docs (check the token before each side effect) does
// no side effect after its process resumes from a pause that outlasted its
// lease, even before the client's executor has run: issue 20 §5. The
// processes are paused for real, with SIGSTOP, until another holder has
// the lock.
#include "cli_process.hpp"

#include "support/redis_server.hpp"

#include <redlock/redlock.hpp>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <regex>
#include <string>

namespace redlock::clitest {
namespace {

std::string probe_path() { return REDLOCK_LEASE_PROBE_PATH; }

std::string port_list(const test::cluster& nodes) {
  std::string ports;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) ports += ",";
    ports += std::to_string(nodes.node(i).port());
  }
  return ports;
}

void paused_past_the_lease(const std::string& mode) {
  test::cluster nodes(3);
  process probe({probe_path(), mode, port_list(nodes), "1000"}, {}, false, false, true);
  REQUIRE(probe.read_line() == "working");
  probe.signal(SIGSTOP);

  // Paused until the lease is over: another holder gets the lock.
  client_config config;
  config.nodes = nodes.node_configs();
  config.warn_without_aof = false;
  blocking_client rival(config);
  lock_options patient;
  patient.ttl = std::chrono::seconds(10);
  auto taken = rival.try_acquire_for("probe", std::chrono::seconds(10), patient);
  REQUIRE(taken.has_value());

  const auto resumed = std::chrono::steady_clock::now();
  probe.signal(SIGCONT);
  const auto last = probe.read_line();
  std::smatch m;
  REQUIRE(std::regex_match(last, m, std::regex("effects ([0-9]+) last_check_ns ([0-9]+)")));
  CHECK(std::stol(m[1].str()) > 0);
  const auto last_check =
      std::chrono::steady_clock::time_point(std::chrono::nanoseconds(std::stoll(m[2].str())));
  INFO(fmt::format(
      "last check {} us before the resume",
      std::chrono::duration_cast<std::chrono::microseconds>(resumed - last_check).count()));
  // Every side effect was checked before the pause; none after it.
  CHECK(last_check < resumed);
  CHECK(probe.wait().status == 0);
  rival.release(*taken);
}

}  // namespace

TEST_CASE("a leader paused past its term does no side effect after it resumes", "[cli][pause]") {
  paused_past_the_lease("leader");
}

TEST_CASE("run_exclusive work paused past its lease does no side effect after it resumes",
          "[cli][pause]") {
  paused_past_the_lease("scoped");
}

}  // namespace redlock::clitest
