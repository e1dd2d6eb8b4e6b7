// Which due times of a periodic job an instance acts on, when it may claim
// one, and how long a claim lives: pure functions of the schedule and the
// clock.
#pragma once

#include <redlock/periodic.hpp>

#include <optional>
#include <string>

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

/// When claim attempts on a due time may start, by the claimer's clock.
struct claim_window {
  wall_clock::time_point opens;
  wall_clock::time_point closes;
};

/// periodic_job's window: from the due time (its timer) to skew + lag after
/// it (missed() past that).
claim_window periodic_window(wall_clock::time_point due, milliseconds skew,
                             milliseconds lag) noexcept;

/// A one-shot claim's window (async_claim_due): from skew before the due
/// time (a caller whose clock or start is early) to skew + lag after it.
claim_window one_shot_window(wall_clock::time_point due, milliseconds skew,
                             milliseconds lag) noexcept;

/// The due time whose one-shot window holds `now`, the nearest one if two
/// do; nothing when none does.
std::optional<wall_clock::time_point> due_near(const schedule& when, wall_clock::time_point now,
                                               milliseconds skew, milliseconds lag);

/// How long a claim on a due time lives. Instances start claiming within
/// `window` by their own clocks, which differ by up to `skew`, and a claim
/// takes up to `lag` (the request timeout) to land: all claims land within
/// (closes - opens) + skew + lag of real time (for periodic_job,
/// 2 * (skew + lag)). The nodes' clocks may run fast by drift_factor, and
/// `lock_ttl` is kept as slack on top.
milliseconds claim_ttl(const claim_window& window, milliseconds skew, milliseconds lag,
                       milliseconds lock_ttl, double drift_factor) noexcept;

/// claim_ttl, but at least the shortest gap between due times (at most
/// max_duration): instances with other skew or timeout settings, whose
/// windows the first claimer cannot know, still find the claim there, as
/// no valid window reaches the next due time.
milliseconds claim_lifetime(milliseconds ttl, milliseconds shortest_gap) noexcept;

/// The claim key's suffix for `due`: milliseconds since the epoch.
std::string due_id(wall_clock::time_point due);

/// The resource a due time's claim locks: `<name>:due:<id>`.
std::string claim_resource(const std::string& name, wall_clock::time_point due);

}  // namespace redlock::detail
