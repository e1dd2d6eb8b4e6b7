// Which due times of a periodic job an instance acts on, and how long a
// claim on one lives: pure functions of the schedule and the clock.
#pragma once

#include <redlock/periodic.hpp>

namespace redlock::detail {

/// The first due time an instance starting at `now` considers: the
/// earliest one not more than `skew` ago, else the next one.
wall_clock::time_point first_due(const schedule& when, wall_clock::time_point now,
                                 milliseconds skew);

/// Too late to start `due`'s run at `now` (by this instance's clock).
bool missed(wall_clock::time_point due, wall_clock::time_point now, milliseconds skew) noexcept;

/// How long a claim on a due time lives: instances start it within `skew`
/// after it by their own clocks, and their clocks differ by up to `skew`,
/// so their attempts spread over at most 2 * skew of real time; the run
/// lock's TTL covers the time a claim takes to arrive.
milliseconds claim_ttl(milliseconds skew, milliseconds lock_ttl) noexcept;

/// The claim key's suffix for `due`: milliseconds since the epoch.
std::string due_id(wall_clock::time_point due);

}  // namespace redlock::detail
