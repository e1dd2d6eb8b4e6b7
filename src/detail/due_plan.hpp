// Which due times of a periodic job an instance acts on, and how long a
// claim on one lives: pure functions of the schedule and the clock.
#pragma once

#include <redlock/periodic.hpp>

namespace redlock::detail {

/// The first due time an instance starting at `now` considers: the
/// earliest one not more than `skew` ago, else the next one.
wall_clock::time_point first_due(const schedule& when, wall_clock::time_point now,
                                 milliseconds skew);

/// Too late to start `due`'s claim at `now` (by this instance's clock):
/// more than skew + lag after it, `lag` allowing for a timer that fires
/// late.
bool missed(wall_clock::time_point due, wall_clock::time_point now, milliseconds skew,
            milliseconds lag) noexcept;

/// How long a claim on a due time lives. Instances start claiming within
/// skew + lag after it by their own clocks, which differ by up to `skew`,
/// and a claim takes up to `lag` (the request timeout) to land: all claims
/// land within 2 * (skew + lag) of real time. The nodes' clocks may run
/// fast by drift_factor, and `lock_ttl` is kept as slack on top.
milliseconds claim_ttl(milliseconds skew, milliseconds lag, milliseconds lock_ttl,
                       double drift_factor) noexcept;

/// The claim key's suffix for `due`: milliseconds since the epoch.
std::string due_id(wall_clock::time_point due);

}  // namespace redlock::detail
