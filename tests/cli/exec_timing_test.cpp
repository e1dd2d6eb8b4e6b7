// When `redlock exec` signals and kills CMD, from its --ttl and --grace.
#include "redlock/exec_timing.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <variant>

namespace exec_timing_test {

using namespace std::chrono_literals;
using redlock::cli::exec_timing;
using redlock::cli::plan_exec_timing;

namespace {
/// ttl * 0.01 rounded up, + 2 ms.
std::chrono::milliseconds validity(std::chrono::milliseconds ttl) {
  return ttl - std::chrono::milliseconds((ttl.count() + 99) / 100) - 2ms;
}
}  // namespace

TEST_CASE("exec timing: SIGKILL comes before the validity ends", "[unit][exec-timing]") {
  for (auto ttl : {300ms, 1000ms, 2000ms, 30000ms, 3600000ms}) {
    for (auto grace : {0ms, 50ms, 200ms, 1000ms, 5000ms}) {
      auto planned = plan_exec_timing(ttl, grace, 0.01);
      if (!std::holds_alternative<exec_timing>(planned)) continue;
      const auto& t = std::get<exec_timing>(planned);
      INFO("ttl " << ttl.count() << " grace " << grace.count());
      CHECK(t.grace == grace);
      CHECK(t.kill_margin >= 20ms);
      // Signal at validity - lost_margin, SIGKILL grace later: kill_margin
      // before the end.
      CHECK(t.lost_margin == t.grace + t.kill_margin);
      CHECK(t.lost_margin < validity(ttl));
      // The keeper accepts it: the margin leaves the extensions room.
      CHECK(t.extend_at <= 0.9);
      CHECK(static_cast<double>(t.lost_margin.count()) <
            t.extend_at * static_cast<double>(validity(ttl).count()));
    }
  }
}

TEST_CASE("exec timing: a grace that cannot fit is refused, naming both values",
          "[unit][exec-timing]") {
  auto refused = plan_exec_timing(2s, 5s, 0.01);
  REQUIRE(std::holds_alternative<std::string>(refused));
  const auto& message = std::get<std::string>(refused);
  CHECK(message.find("--grace 5s") != std::string::npos);
  CHECK(message.find("--ttl 2s") != std::string::npos);
  CHECK(std::holds_alternative<std::string>(plan_exec_timing(1s, 2s, 0.01)));
  CHECK(std::holds_alternative<std::string>(plan_exec_timing(1s, -1ms, 0.01)));
  // The largest grace it names is accepted.
  CHECK(std::holds_alternative<exec_timing>(plan_exec_timing(2s, 1380ms, 0.01)));
}

TEST_CASE("exec timing: the default grace is 5 s, or a quarter of the validity",
          "[unit][exec-timing]") {
  const auto long_ttl = std::get<exec_timing>(plan_exec_timing(30s, std::nullopt, 0.01));
  CHECK(long_ttl.grace == 5s);
  CHECK(long_ttl.extend_at >= 1.0 / 3);
  const auto short_ttl = std::get<exec_timing>(plan_exec_timing(2s, std::nullopt, 0.01));
  CHECK(short_ttl.grace == 500ms);
  // Too short a TTL for any grace is refused, naming it.
  auto tiny = plan_exec_timing(25ms, std::nullopt, 0.01);
  REQUIRE(std::holds_alternative<std::string>(tiny));
  CHECK(std::get<std::string>(tiny).find("--ttl 25ms is too short") != std::string::npos);
  // A grace near the TTL moves the extensions earlier, never past 0.9.
  const auto wide = std::get<exec_timing>(plan_exec_timing(2s, 1380ms, 0.01));
  CHECK(wide.extend_at > 0.8);
  CHECK(wide.extend_at <= 0.9);
}

}  // namespace exec_timing_test
