// Due times of periodic jobs, and which of them an instance acts on.
#include "detail/due_plan.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace std::chrono_literals;
using redlock::schedule;
using redlock::wall_clock;

namespace {

wall_clock::time_point at(std::chrono::sys_days day, std::chrono::milliseconds time) {
  return wall_clock::time_point(day) + time;
}

constexpr auto day = std::chrono::sys_days(std::chrono::year(2026) / 11 / 23);

}  // namespace

TEST_CASE("schedule every: due times are fixed from the epoch", "[unit][schedule]") {
  const auto hourly = schedule::every(1h, 5min);
  CHECK(hourly.next_after(at(day, 10h)) == at(day, 10h + 5min));
  CHECK(hourly.next_after(at(day, 10h + 5min)) == at(day, 11h + 5min));  // strictly after
  CHECK(hourly.next_after(at(day, 10h + 4min + 59s)) == at(day, 10h + 5min));
  CHECK(hourly.next_after(at(day, 23h + 30min)) == at(day + std::chrono::days(1), 5min));
  const auto second = schedule::every(1s);
  const auto t = at(day, 10h) + 250ms;
  CHECK(second.next_after(t) == at(day, 10h + 1s));
  // Instances started at different times agree.
  CHECK(second.next_after(at(day, 10h) + 1ms) == second.next_after(at(day, 10h) + 999ms));
  CHECK_THROWS_AS(schedule::every(0ms), std::invalid_argument);
  CHECK_THROWS_AS(schedule::every(1s, 1s), std::invalid_argument);
  CHECK_THROWS_AS(schedule::every(1s, -1ms), std::invalid_argument);
}

TEST_CASE("schedule daily_at: times of day in UTC", "[unit][schedule]") {
  const auto twice = schedule::daily_at("14:00,02:30");
  CHECK(twice.next_after(at(day, 0h)) == at(day, 2h + 30min));
  CHECK(twice.next_after(at(day, 2h + 30min)) == at(day, 14h));
  CHECK(twice.next_after(at(day, 20h)) == at(day + std::chrono::days(1), 2h + 30min));
  const auto midnight = schedule::daily_at("00:00");
  CHECK(midnight.next_after(at(day, 0h)) == at(day + std::chrono::days(1), 0h));
  for (const char* bad : {"", "24:00", "7:5", "12:60", "ab:cd", "12:00,", "12:00,x", "-1:00"}) {
    INFO(bad);
    CHECK_THROWS_AS(schedule::daily_at(std::string_view(bad)), std::invalid_argument);
  }
  try {
    schedule::daily_at("12:00,25:00");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("25:00") != std::string::npos);
  }
}

TEST_CASE("due plan: the first due time, missing one, and how long a claim lives",
          "[unit][schedule]") {
  using namespace redlock::detail;
  const auto second = schedule::every(1s);
  // Started 300 ms after a due time, within a skew of 500 ms: that one.
  CHECK(first_due(second, at(day, 10h) + 300ms, 500ms) == at(day, 10h));
  // Exactly the skew after it: still that one.
  CHECK(first_due(second, at(day, 10h) + 500ms, 500ms) == at(day, 10h));
  // Later: the next one.
  CHECK(first_due(second, at(day, 10h) + 501ms, 500ms) == at(day, 10h + 1s));
  CHECK_FALSE(missed(at(day, 10h), at(day, 10h) + 550ms, 500ms, 50ms));
  CHECK(missed(at(day, 10h), at(day, 10h) + 551ms, 500ms, 50ms));
  // A skew of 0 still leaves the timer its lag.
  CHECK_FALSE(missed(at(day, 10h), at(day, 10h) + 20ms, 0ms, 50ms));
  // 2 * (500 + 50) ms, 1% fast node clocks, the lock's TTL as slack.
  CHECK(claim_ttl(periodic_window(at(day, 10h), 500ms, 50ms), 500ms, 50ms, 10s, 0.01) ==
        1111ms + 10s);
  // Long skews: the drift term grows with them (review: 15 min, 10 s TTL).
  CHECK(claim_ttl(periodic_window(at(day, 10h), 15min, 500ms), 15min, 500ms, 10s, 0.01) >
        2 * 15min + 18s);
  CHECK(due_id(wall_clock::time_point(1234567ms)) == "1234567");
}

TEST_CASE("due plan: claim windows, the due time near now, the shortest gap", "[unit][schedule]") {
  using namespace redlock::detail;
  const auto d = at(day, 10h);
  const auto periodic = periodic_window(d, 500ms, 50ms);
  CHECK(periodic.opens == d);
  CHECK(periodic.closes == d + 550ms);
  const auto one_shot = one_shot_window(d, 500ms, 50ms);
  CHECK(one_shot.opens == d - 500ms);
  CHECK(one_shot.closes == d + 550ms);
  // A one-shot window is a skew longer: the claim lives a skew longer too.
  CHECK(claim_ttl(one_shot, 500ms, 50ms, 10s, 0.0) == 1600ms + 10s);
  // Whatever the claimer's own settings, a claim outlives the gap to the
  // next due time (review: mixed skews ran a due time twice).
  using redlock::detail::claim_lifetime;
  CHECK(claim_lifetime(1600ms + 10s, 1h) == 1h);
  CHECK(claim_lifetime(2h, 1h) == 2h);
  CHECK(claim_lifetime(1s, std::chrono::hours(24 * 400)) == redlock::max_duration);
  CHECK(claim_resource("nightly", wall_clock::time_point(1234567ms)) == "nightly:due:1234567");

  const auto minute = schedule::every(1min);
  // Within the skew before or after a due time (plus the lag after it).
  CHECK(due_near(minute, d - 2s, 2s, 50ms) == d);
  CHECK(due_near(minute, d + 2050ms, 2s, 50ms) == d);
  CHECK_FALSE(due_near(minute, d - 2001ms, 2s, 50ms));
  CHECK_FALSE(due_near(minute, d + 2051ms, 2s, 50ms));
  CHECK_FALSE(due_near(minute, d + 30s, 2s, 50ms));
  // Two due times in reach: the nearer one.
  const auto second = schedule::every(1s);
  CHECK(due_near(second, d + 400ms, 450ms, 200ms) == d);
  CHECK(due_near(second, d + 600ms, 450ms, 200ms) == d + 1s);

  CHECK(schedule::every(1h, 5min).shortest_gap() == 1h);
  CHECK(schedule::daily_at("02:30").shortest_gap() == 24h);
  CHECK(schedule::daily_at("00:10,12:00,23:50").shortest_gap() == 20min);
}
