// Retry and reconnect delays: pure functions of policy, count and a random number.
#include "detail/backoff.hpp"

#include <catch2/catch.hpp>

// Named, so that a unity build can merge this file with the other tests.
namespace backoff_test {

using namespace std::chrono_literals;
using redlock::retry_policy;
using namespace redlock::detail;

namespace {
const redlock::clock::time_point t0{std::chrono::seconds(50)};
const auto no_deadline = redlock::clock::time_point::max();
}  // namespace

TEST_CASE("jitter scales the delay by a factor from 1-j to 1+j", "[unit][backoff]") {
  CHECK(jittered(100ms, 0.5, 0.0) == 50ms);
  CHECK(jittered(100ms, 0.5, 0.5) == 100ms);
  CHECK(jittered(100ms, 0.5, 0.999999) > 149ms);
  CHECK(jittered(100ms, 0.5, 0.999999) < 150ms);
  CHECK(jittered(100ms, 0.0, 0.9) == 100ms);
  CHECK(jittered(100ms, 1.0, 0.0) == 0ms);
}

TEST_CASE("capped exponential doubles up to the cap", "[unit][backoff]") {
  CHECK(capped_exponential(10ms, 1000ms, 1) == 10ms);
  CHECK(capped_exponential(10ms, 1000ms, 2) == 20ms);
  CHECK(capped_exponential(10ms, 1000ms, 5) == 160ms);
  CHECK(capped_exponential(10ms, 1000ms, 8) == 1000ms);
  CHECK(capped_exponential(10ms, 1000ms, 1000) == 1000ms);  // no overflow
}

TEST_CASE("retry delays: fixed and exponential", "[unit][backoff][retry]") {
  const auto fixed = retry_policy::fixed(40ms, 5, 0.0);
  CHECK(retry_delay(fixed, 1, 0.3) == 40ms);
  CHECK(retry_delay(fixed, 4, 0.3) == 40ms);

  const auto exponential = retry_policy::exponential(5ms, 30ms, 0, 0.0);
  CHECK(retry_delay(exponential, 1, 0.3) == 5ms);
  CHECK(retry_delay(exponential, 3, 0.3) == 20ms);
  CHECK(retry_delay(exponential, 4, 0.3) == 30ms);

  const auto jittery = retry_policy::fixed(100ms, 3, 0.2);
  CHECK(retry_delay(jittery, 1, 0.0) == 80ms);
  CHECK(retry_delay(jittery, 1, 0.5) == 100ms);
}

TEST_CASE("try_once never retries", "[unit][backoff][retry]") {
  CHECK_FALSE(next_attempt_at(retry_policy::try_once(), 1, t0, no_deadline, 0.5));
}

TEST_CASE("retries stop after max_attempts", "[unit][backoff][retry]") {
  const auto policy = retry_policy::fixed(10ms, 3, 0.0);
  CHECK(next_attempt_at(policy, 1, t0, no_deadline, 0.5) == t0 + 10ms);
  CHECK(next_attempt_at(policy, 2, t0, no_deadline, 0.5) == t0 + 10ms);
  CHECK_FALSE(next_attempt_at(policy, 3, t0, no_deadline, 0.5));
}

TEST_CASE("an unset max_attempts counts as the default", "[unit][backoff][retry]") {
  retry_policy policy;
  policy.jitter = 0.0;
  CHECK_FALSE(policy.max_attempts);
  CHECK(next_attempt_at(policy, retry_policy::default_max_attempts - 1, t0, no_deadline, 0.5) ==
        t0 + 100ms);
  CHECK_FALSE(next_attempt_at(policy, retry_policy::default_max_attempts, t0, no_deadline, 0.5));
}

TEST_CASE("a wait_timeout lifts the default attempt limit, an explicit one stays",
          "[unit][backoff][retry]") {
  redlock::lock_options options;
  CHECK(redlock::effective_max_attempts(options) == retry_policy::default_max_attempts);
  options.wait_timeout = 5s;
  CHECK(redlock::effective_max_attempts(options) == 0);  // the wait is the limit
  options.retry.max_attempts = 7;
  CHECK(redlock::effective_max_attempts(options) == 7);
  options.retry = retry_policy::try_once();
  CHECK(redlock::effective_max_attempts(options) == 1);
  options.wait_timeout = 0s;
  options.retry = retry_policy::fixed(10ms, 0);
  CHECK(redlock::effective_max_attempts(options) == 0);
}

TEST_CASE("retries stop at the caller's wait deadline", "[unit][backoff][retry]") {
  const auto unlimited = retry_policy::fixed(10ms, 0, 0.0);
  CHECK(next_attempt_at(unlimited, 1000, t0, t0 + 11ms, 0.5) == t0 + 10ms);
  // An attempt that would start at or after the deadline is not made.
  CHECK_FALSE(next_attempt_at(unlimited, 1000, t0, t0 + 10ms, 0.5));
  CHECK_FALSE(next_attempt_at(unlimited, 1, t0 + 20ms, t0 + 10ms, 0.5));
}

TEST_CASE("reconnect delay is capped exponential with jitter", "[unit][backoff][reconnect]") {
  redlock::reconnect_policy policy{50ms, 2000ms, 0.5};
  CHECK(reconnect_delay(policy, 1, 0.5) == 50ms);
  CHECK(reconnect_delay(policy, 3, 0.5) == 200ms);
  CHECK(reconnect_delay(policy, 20, 0.5) == 2000ms);
  CHECK(reconnect_delay(policy, 20, 0.0) == 1000ms);
  CHECK(reconnect_delay(policy, 20, 0.999) < 3000ms);
}

}  // namespace backoff_test
