// The fence wherever a recipe hands out a lock: run_exclusive in every style,
// keeper::held(), leader terms and periodic runs, against real nodes.
#include "test_env.hpp"

#include <redlock/leader.hpp>
#include <redlock/periodic.hpp>
#include <redlock/run_exclusive.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
using redlock::keeper;

namespace {

/// Fresh nodes have no fencing state: the first fenced acquire waits
/// max_fenced_ttl (and a bit) until they are seeded, so keep it short.
constexpr milliseconds fenced_ttl{500};

void allow_short_fences(env& e) { e.config.max_fenced_ttl = fenced_ttl; }

/// A fenced acquire that waits out the seeding of fresh nodes.
redlock::lock_options fenced() {
  auto options = once(fenced_ttl);
  options.fenced = true;
  options.retry = redlock::retry_policy::fixed(50ms, 0, 0.0);
  options.wait_timeout = 5s;
  return options;
}

/// One fenced acquire and release, so that the nodes are seeded before a
/// recipe that does not wait for that runs.
void seed(env& e, redlock::client& locks) {
  auto got = acquire(e.io, locks, "seed", fenced());
  INFO(describe_nodes(got.held));
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.held.fence() > 0);
  release(e.io, locks, got.held);
}

/// Nonzero and strictly growing.
void check_growing(const std::vector<std::uint64_t>& fences, std::size_t at_least = 2) {
  REQUIRE(fences.size() >= at_least);
  CHECK(fences.front() > 0);
  for (std::size_t i = 1; i < fences.size(); ++i) {
    INFO("run " << i << ": " << fences[i - 1] << " then " << fences[i]);
    CHECK(fences[i] > fences[i - 1]);
  }
}

}  // namespace

TEST_CASE("fenced run_exclusive: the work sees a fence that grows from run to run",
          "[integration][fencing][scoped]") {
  env e(3);
  allow_short_fences(e);
  std::vector<std::uint64_t> seen;
  SECTION("callbacks") {
    redlock::client locks(e.io.get_executor(), e.config);
    for (int run = 0; run < 2; ++run) {
      auto [ec] = run_op<error_code>(e.io, [&](auto handler) {
        redlock::async_run_exclusive(
            locks, "job", fenced(), {},
            [&](keeper& kept, redlock::work_done done) {
              seen.push_back(kept.held().fence());
              done({});
            },
            std::move(handler));
      });
      REQUIRE_FALSE(ec);
    }
  }
  SECTION("futures") {
    redlock::client locks(e.io.get_executor(), e.config);
    for (int run = 0; run < 2; ++run) {
      auto finished = redlock::async_run_exclusive(
          locks, "job", fenced(), {},
          [&](keeper& kept, redlock::work_done done) {
            seen.push_back(kept.held().fence());
            done({});
          },
          boost::asio::use_future);
      run_until(e.io, [&] { return finished.wait_for(0s) == std::future_status::ready; });
      REQUIRE_NOTHROW(finished.get());
    }
  }
  SECTION("coroutines") {
    redlock::client locks(e.io.get_executor(), e.config);
    for (int run = 0; run < 2; ++run) {
      auto failure = std::make_shared<std::optional<std::exception_ptr>>();
      boost::asio::co_spawn(
          e.io,
          redlock::run_exclusive(locks, "job", fenced(), {},
                                 [&](keeper& kept) -> boost::asio::awaitable<void> {
                                   seen.push_back(kept.held().fence());
                                   co_return;
                                 }),
          [failure](std::exception_ptr thrown) { failure->emplace(thrown); });
      run_until(e.io, [&] { return failure->has_value(); });
      REQUIRE_FALSE(**failure);
    }
  }
  SECTION("blocking, the work taking the lease token and the lock") {
    redlock::blocking_client locks(e.config);
    for (int run = 0; run < 2; ++run) {
      const auto fence = locks.run_exclusive(
          "job", fenced(), {}, [](redlock::lease_token lease, const redlock::lock& held) {
            CHECK_FALSE(lease.stop_requested());
            return held.fence();
          });
      seen.push_back(fence);
    }
  }
  SECTION("blocking, the work taking the scoped_lock") {
    redlock::blocking_client locks(e.config);
    for (int run = 0; run < 2; ++run) {
      locks.run_exclusive("job", fenced(), {}, [&](redlock::scoped_lock& scope) {
        seen.push_back(scope.held().fence());
      });
    }
  }
  check_growing(seen);
}

TEST_CASE("a kept fenced lock keeps its fence across extensions", "[integration][fencing][keep]") {
  env e(3);
  allow_short_fences(e);
  redlock::client locks(e.io.get_executor(), e.config);
  auto got = acquire(e.io, locks, "kept", fenced());
  REQUIRE_FALSE(got.ec);
  const auto fence = got.held.fence();
  REQUIRE(fence > 0);
  keeper kept(locks, got.held);
  REQUIRE(poll_until(
      e.io, [&] { return kept.extensions() >= 3; }, 3s));
  CHECK_FALSE(kept.lost());
  CHECK(kept.held().fenced());
  CHECK(kept.held().fence() == fence);
  CHECK(kept.held().fences() == std::vector<std::uint64_t>{fence});
  auto [ec, removed] = run_op<error_code, std::size_t>(
      e.io, [&](auto handler) { kept.async_release(std::move(handler)); });
  CHECK_FALSE(ec);
}

TEST_CASE("fenced leader terms: each term's fence is larger than the last",
          "[integration][fencing][leader]") {
  env e(3);
  allow_short_fences(e);
  redlock::campaign_options options;
  options.lock = fenced();
  options.lock.retry = redlock::retry_policy::fixed(50ms, 0, 0.0);
  struct contender {
    redlock::client locks;
    std::optional<redlock::leader_election> election;
    std::vector<std::uint64_t> fences;
  };
  auto make = [&](contender& c) {
    c.election.emplace(
        c.locks, "leader", options,
        [&c](const redlock::lock& held, redlock::lease_token) { c.fences.push_back(held.fence()); },
        [](error_code) {});
  };
  contender first{redlock::client(e.io.get_executor(), e.config), {}, {}};
  contender second{redlock::client(e.io.get_executor(), e.config), {}, {}};
  make(first);
  make(second);
  first.election->campaign();
  REQUIRE(poll_until(
      e.io, [&] { return first.election->leading(); }, 5s));
  second.election->campaign();
  auto [ec] = run_op<error_code>(
      e.io, [&](auto handler) { first.election->async_step_down(std::move(handler)); });
  CHECK_FALSE(ec);
  REQUIRE(poll_until(
      e.io, [&] { return second.election->leading(); }, 3s));
  REQUIRE(first.fences.size() == 1);
  REQUIRE(second.fences.size() == 1);
  check_growing({first.fences.front(), second.fences.front()});
  run_op<error_code>(e.io,
                     [&](auto handler) { second.election->async_step_down(std::move(handler)); });

  options.lock.ttl = fenced_ttl + 1ms;
  CHECK(code_of([&] { redlock::leader_election(first.locks, "leader", options, {}, {}); }) ==
        errc::fenced_ttl_too_long);
}

TEST_CASE("fenced periodic runs: each run's fence is larger than the last",
          "[integration][fencing][periodic]") {
  env e(3);
  allow_short_fences(e);
  redlock::client locks(e.io.get_executor(), e.config);
  seed(e, locks);
  redlock::periodic_options options;
  options.when = redlock::schedule::every(1s);
  options.max_clock_skew = 200ms;
  options.lock = once(fenced_ttl);
  options.lock.fenced = true;
  std::vector<std::uint64_t> fences;
  int failed = 0;
  redlock::periodic_job job(
      locks, "nightly", options,
      [&](const redlock::occurrence&, keeper& kept, redlock::work_done done) {
        fences.push_back(kept.held().fence());
        done({});
      },
      [&](const redlock::occurrence&, redlock::occurrence_outcome outcome, error_code) {
        if (outcome == redlock::occurrence_outcome::failed) ++failed;
      });
  job.start();
  wait_on_timer(e.io, 2600ms);
  job.stop();
  CHECK(failed == 0);
  check_growing(fences);

  SECTION("a fenced run lock longer than max_fenced_ttl, and a fenced claim, are refused") {
    options.lock.ttl = fenced_ttl + 1ms;
    CHECK(code_of([&] { redlock::periodic_job(locks, "nightly", options, {}); }) ==
          errc::fenced_ttl_too_long);
    redlock::due_claim_options claim;
    claim.lock.fenced = true;
    CHECK_THROWS_AS(redlock::async_claim_due(locks, "nightly", claim,
                                             [](error_code, const redlock::due_claim&) {}),
                    std::invalid_argument);
  }
}
