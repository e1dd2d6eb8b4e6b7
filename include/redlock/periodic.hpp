// Jobs that run at most once per period across all instances that run the
// same schedule.
#pragma once

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/keeper.hpp>
#include <redlock/run_exclusive.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

namespace detail {
class periodic_run;
}

using wall_clock = std::chrono::system_clock;

/// When a periodic job is due, on the wall clock (UTC). Instances agree on
/// the times because the times depend only on the schedule, not on when an
/// instance started.
class schedule {
 public:
  /// Every `interval` from the Unix epoch, shifted by `offset` (for example
  /// every hour at 5 past: every(1h, 5min)). Throws std::invalid_argument for
  /// an interval that is not positive or an offset outside [0, interval).
  static schedule every(milliseconds interval, milliseconds offset = milliseconds{0});
  /// At these times of day, UTC, every day. Throws std::invalid_argument for
  /// an empty list or a time outside [0, 24h).
  static schedule daily_at(std::vector<std::chrono::minutes> times_of_day);
  /// daily_at from text such as "02:30" or "00:00,12:00"; throws
  /// std::invalid_argument naming the bad part.
  static schedule daily_at(std::string_view times_of_day);

  /// The first due time strictly after `after`.
  wall_clock::time_point next_after(wall_clock::time_point after) const;

 private:
  milliseconds interval_{0};
  milliseconds offset_{0};
  std::vector<std::chrono::minutes> times_of_day_;  ///< Sorted; used when interval_ is 0.
};

/// How a periodic job runs: when, and under which locks.
struct periodic_options {
  schedule when = schedule::every(std::chrono::minutes(1));  ///< The due times.
  /// The most the wall clocks of any two instances may differ. An instance
  /// claims a due time only within this long (plus the request timeout, for
  /// a late timer) after it by its own clock; the claim lives long enough
  /// to cover every instance's window (see docs/usage.md). 0 is allowed
  /// (clocks in step).
  milliseconds max_clock_skew{1000};
  /// The run lock (held, kept extended, while the job runs): its TTL bounds
  /// how long a crashed run blocks the next one. Retries are ignored.
  lock_options lock{};
  keep_options keep{};  ///< How the run lock is kept extended while the job runs.
  /// This instance reads its wall clock as system_clock + clock_offset (the
  /// tests simulate instances with skewed clocks with it).
  milliseconds clock_offset{0};
};

/// One due time of a periodic job.
struct occurrence {
  wall_clock::time_point due;  ///< The due time, on the wall clock.
  /// The key suffix of this due time's claim: milliseconds since the epoch.
  std::string id;
};

enum class occurrence_outcome {
  ran,                ///< This instance claimed it and ran the job.
  claimed_elsewhere,  ///< Another instance claimed it first.
  previous_running,   ///< Claimed, but the previous run still holds the run lock: skipped.
  missed,             ///< This instance came too late (more than max_clock_skew).
  failed,             ///< The claim or the run lock failed (no quorum, ...): not run here.
};

/// Runs a job at most once per due time across every instance that runs a
/// periodic_job with the same client key prefix, name and schedule.
///
/// For each due time, the instance claims `<name>:due:<id>` with a lock that
/// is not released once the job has started (see docs/usage.md for its TTL),
/// then runs the job under the run lock `<name>` with auto-extension, so
/// runs of consecutive due times never overlap either; the claimer waits
/// for the run lock up to lock.ttl + the request timeout, by when a crashed
/// run's lock has expired. A crashed run blocks nothing but its own due
/// time. A claim whose job could not start is released, so another instance
/// still within its window may take the due time.
class periodic_job {
 public:
  /// Called with the due time, the kept run lock and the callback to call
  /// when the job is over; see async_run_exclusive for `kept` and `done`.
  using job = std::function<void(const occurrence&, keeper& kept, work_done done)>;
  /// Told what became of each due time (for logs and metrics).
  using outcome_handler = std::function<void(const occurrence&, occurrence_outcome, error_code)>;

  /// Throws boost::system::system_error for an empty name or bad lock or
  /// keep options, std::invalid_argument for a negative max_clock_skew.
  periodic_job(client& owner, std::string name, periodic_options options, job run,
               outcome_handler on_outcome = {});
  /// Stops scheduling; a job running now runs to its end.
  ~periodic_job();
  periodic_job(const periodic_job&) = delete;
  periodic_job& operator=(const periodic_job&) = delete;

  /// Starts waiting for due times; the first one considered is the latest
  /// not more than max_clock_skew ago, or the next one.
  void start();
  /// Stops scheduling: no job starts and no outcome is reported after it
  /// (a due time being claimed now is left unrun); a job running now runs
  /// to its end. The client must outlive the periodic_job.
  void stop();

 private:
  std::shared_ptr<detail::periodic_run> run_;
};

}  // namespace redlock
