// fence_checker: the in-process resource-side check of fencing tokens.
#include <redlock/fencing.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// Named, so that a unity build can merge this file with the other tests.
namespace fencing_test {

using redlock::fence_checker;

TEST_CASE("fence_checker admits larger fences and refuses smaller ones", "[unit][fencing]") {
  fence_checker checker;
  CHECK(checker.last() == 0);
  CHECK(checker.last_token().empty());

  CHECK(checker.admit(5, "holder-a"));
  CHECK(checker.last() == 5);
  CHECK(checker.last_token() == "holder-a");
  CHECK(checker.admit(7, "holder-b"));
  CHECK(checker.last() == 7);
  // The old holder, paused past its lease, comes back: refused.
  CHECK_FALSE(checker.admit(5, "holder-a"));
  CHECK_FALSE(checker.admit(6, "holder-c"));
  CHECK(checker.last() == 7);
  CHECK(checker.last_token() == "holder-b");
  // Gaps are fine: fences only need to grow.
  CHECK(checker.admit(1000, "holder-d"));
  CHECK(checker.last() == 1000);
}

TEST_CASE("fence_checker breaks a tie by token", "[unit][fencing]") {
  fence_checker checker;
  REQUIRE(checker.admit(9, "holder-a"));
  SECTION("the same hold writes again with its fence") {
    CHECK(checker.admit(9, "holder-a"));
    CHECK(checker.admit(9, "holder-a"));
    CHECK(checker.last() == 9);
  }
  SECTION("another holder with an equal fence is refused, and stays refused") {
    CHECK_FALSE(checker.admit(9, "holder-b"));
    CHECK(checker.last_token() == "holder-a");
    CHECK(checker.admit(9, "holder-a"));
    CHECK_FALSE(checker.admit(9, "holder-b"));
  }
  SECTION("once a larger fence is admitted, the old holder's fence is stale") {
    REQUIRE(checker.admit(10, "holder-b"));
    CHECK_FALSE(checker.admit(9, "holder-a"));
    CHECK(checker.admit(10, "holder-b"));
  }
  SECTION("tokens are compared exactly") {
    CHECK_FALSE(checker.admit(9, "holder-a "));
    CHECK_FALSE(checker.admit(9, "holder-"));
    CHECK_FALSE(checker.admit(9, ""));
  }
}

TEST_CASE("fence_checker never admits fence 0 (a lock that is not fenced)", "[unit][fencing]") {
  fence_checker checker;
  CHECK_FALSE(checker.admit(0, ""));
  CHECK_FALSE(checker.admit(0, "holder-a"));
  CHECK(checker.last() == 0);
  REQUIRE(checker.admit(1, "holder-a"));
  CHECK_FALSE(checker.admit(0, "holder-a"));
}

TEST_CASE("fence_checker handles the whole 64-bit range", "[unit][fencing]") {
  fence_checker checker;
  const auto top = UINT64_MAX;
  CHECK(checker.admit(top - 1, "a"));
  CHECK(checker.admit(top, "b"));
  CHECK_FALSE(checker.admit(top - 1, "a"));
  CHECK(checker.admit(top, "b"));
  CHECK_FALSE(checker.admit(top, "a"));
  CHECK(checker.last() == top);
}

// Threads present fences near a shared, growing "latest acquire" counter,
// some fresh, many stale or equal to another thread's, each thread under its
// own token (one holder per thread). Whatever the interleaving: the fences a
// thread gets admitted never go backwards, no fence is ever admitted for two
// tokens, and last() ends at the largest admitted fence.
TEST_CASE("fence_checker under concurrent writers: admitted fences never go backwards",
          "[unit][fencing][threads]") {
  constexpr std::size_t threads = 8;
  constexpr int rounds = 20000;
  fence_checker checker;
  std::atomic<std::uint64_t> latest{1};
  std::vector<std::vector<std::uint64_t>> admitted(threads);
  std::vector<std::size_t> refused(threads, 0);

  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const std::string token = "holder-" + std::to_string(t);
      std::mt19937_64 random(t + 1);
      std::uniform_int_distribution<int> step(-3, 1);
      for (int i = 0; i < rounds; ++i) {
        // Now and then a new acquire: the counter moves on.
        if (random() % 8 == 0) latest.fetch_add(1, std::memory_order_relaxed);
        const auto now = latest.load(std::memory_order_relaxed);
        const auto fence = std::max<std::int64_t>(1, static_cast<std::int64_t>(now) + step(random));
        if (checker.admit(static_cast<std::uint64_t>(fence), token)) {
          admitted[t].push_back(static_cast<std::uint64_t>(fence));
        } else {
          ++refused[t];
        }
      }
    });
  }
  for (auto& w : workers) w.join();

  std::map<std::uint64_t, std::set<std::size_t>> holders_of;  // fence -> threads admitted with it
  std::uint64_t largest = 0;
  std::size_t total_admitted = 0;
  std::size_t total_refused = 0;
  for (std::size_t t = 0; t < threads; ++t) {
    INFO("thread " << t);
    CHECK(std::is_sorted(admitted[t].begin(), admitted[t].end()));
    for (auto f : admitted[t]) holders_of[f].insert(t);
    if (!admitted[t].empty()) largest = std::max(largest, admitted[t].back());
    total_admitted += admitted[t].size();
    total_refused += refused[t];
  }
  for (const auto& [fence, holders] : holders_of) {
    INFO("fence " << fence);
    CHECK(holders.size() == 1);
  }
  CHECK(checker.last() == largest);
  // The run exercised both answers (it is not vacuous).
  CHECK(total_admitted > 0);
  CHECK(total_refused > 0);
}

}  // namespace fencing_test
