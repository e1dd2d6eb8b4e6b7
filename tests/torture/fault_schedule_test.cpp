// The random fault schedule keeps the assumptions it promises.
#include "fault_schedule.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace redlock::torture;
using namespace std::chrono_literals;

TEST_CASE("schedule: never more than a minority faulted, kills down past the TTL",
          "[torture][schedule]") {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    schedule_options options;
    options.seed = seed;
    options.length = 120s;
    const auto faults = make_schedule(options);
    INFO("seed " << seed);
    REQUIRE_FALSE(faults.empty());
    CHECK(max_concurrently_faulted(faults) <= 2);
    for (const auto& f : faults) {
      CHECK(f.node < options.nodes);
      CHECK(f.start < options.length);
      CHECK(f.duration > 0ms);
      if (f.kind == fault_kind::kill) {
        CHECK_FALSE(f.restart_at_once);
        CHECK(f.duration >= options.max_ttl);
        CHECK(f.duration >= min_downtime(options));
      }
      if (f.kind == fault_kind::fast_clock) {
        CHECK(f.ttl_factor >= 1 - options.drift_factor / 2);
        CHECK(f.ttl_factor <= 1);
      }
    }
  }
}

TEST_CASE("schedule: a node faulted once at a time", "[torture][schedule]") {
  schedule_options options;
  options.seed = 99;
  options.length = 300s;
  const auto faults = make_schedule(options);
  for (std::size_t n = 0; n < options.nodes; ++n) {
    std::vector<fault> on_node;
    for (const auto& f : faults) {
      if (f.node == n) on_node.push_back(f);
    }
    CHECK(max_concurrently_faulted(on_node) <= 1);
  }
}

TEST_CASE("schedule: the same seed gives the same schedule, with every kind",
          "[torture][schedule]") {
  schedule_options options;
  options.seed = 42;
  options.length = 300s;
  const auto a = make_schedule(options);
  const auto b = make_schedule(options);
  REQUIRE(a.size() == b.size());
  std::set<fault_kind> kinds;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].node == b[i].node);
    CHECK(a[i].start == b[i].start);
    CHECK(a[i].duration == b[i].duration);
    kinds.insert(a[i].kind);
  }
  CHECK(kinds.size() == std::size(all_fault_kinds));
  options.seed = 43;
  const auto c = make_schedule(options);
  bool differs = c.size() != a.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].start != c[i].start;
  CHECK(differs);
}

TEST_CASE("schedule: durable nodes restart at once", "[torture][schedule]") {
  schedule_options options;
  options.seed = 5;
  options.length = 300s;
  options.durable_nodes = true;
  std::size_t kills = 0;
  for (const auto& f : make_schedule(options)) {
    if (f.kind != fault_kind::kill) continue;
    ++kills;
    CHECK(f.restart_at_once);
  }
  CHECK(kills > 0);
  CHECK(max_concurrently_faulted(make_schedule(options)) <= 2);
}
