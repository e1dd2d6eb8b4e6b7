// Jobs that run at most once per period across all instances that run the
// same schedule.
#pragma once

#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/detail/completion.hpp>
#include <redlock/keeper.hpp>
#include <redlock/run_exclusive.hpp>

#include <chrono>
#include <cstdint>
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
  /// The shortest time between two consecutive due times.
  milliseconds shortest_gap() const;

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
  /// how long a crashed run blocks the next one. Retries are ignored. With
  /// `lock.fenced` the run lock is a fenced acquire (its TTL at most
  /// client_config::max_fenced_ttl): the job reads the run's fencing token
  /// as kept.held().fence(), larger than every earlier run's. The due
  /// time's claim is never fenced.
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

/// What became of one due time on one instance.
enum class occurrence_outcome {
  ran,  ///< This instance claimed it and ran the job.
  /// Another instance holds the claim: a majority of the nodes held one
  /// other instance's claim when this instance looked after being refused.
  claimed_elsewhere,
  previous_running,  ///< Claimed, but the previous run still holds the run lock: skipped.
  missed,            ///< This instance came too late (more than max_clock_skew).
  failed,            ///< The claim or the run lock failed (no quorum, ...): not run here.
  /// Attempts kept being refused while nobody held the claim (the votes
  /// split between instances claiming at the same moment) until this
  /// instance's window closed: not run here, and held by no other instance
  /// when it last looked (one whose window closes later may still take it).
  contended,
};

/// What a claim of one due time came to (async_claim_due; periodic_job
/// makes the same claims).
enum class claim_outcome {
  claimed,            ///< This instance holds the claim: it is to run the due time.
  claimed_elsewhere,  ///< Another instance held the claim on a majority of the nodes.
  /// Refused until the window closed, while nobody held the claim (split
  /// votes); see occurrence_outcome::contended.
  contended,
  missed,  ///< No due time within the window at the call: nothing was sent.
  failed,  ///< The nodes failed, or the claim was cancelled: see the error code.
};

/// The enumerator's name ("ran", "claimed_elsewhere", "previous_running",
/// "missed", "failed", "contended"), for logs and metric labels; "unknown"
/// for a value that is no enumerator.
std::string_view to_string(occurrence_outcome outcome) noexcept;
/// The enumerator's name ("claimed", "claimed_elsewhere", "contended",
/// "missed", "failed"); "unknown" for a value that is no enumerator.
std::string_view to_string(claim_outcome outcome) noexcept;

/// Options of a one-shot claim (async_claim_due).
struct due_claim_options {
  schedule when = schedule::every(std::chrono::minutes(1));  ///< The due times.
  /// The most the wall clocks (and the start times) of the instances may
  /// differ. A claim is made for the due time within this long of the
  /// caller's clock, before or after it (plus the request timeout after it,
  /// for a late start); it must be less than half the shortest gap between
  /// due times. 0 is allowed.
  milliseconds max_clock_skew{1000};
  /// The claim's lock options: `ttl` is kept as slack on top of the claim's
  /// lifetime (see docs/usage.md), `request_timeout` (or its default) sets
  /// each attempt's timeout and the retry spread, `stop` cancels the claim;
  /// retries and wait_timeout are ignored (see async_claim_due). `fenced`
  /// is refused: fence the run lock the job runs under instead.
  lock_options lock{};
  /// This instance reads its wall clock as system_clock + clock_offset.
  milliseconds clock_offset{0};
};

/// The result of a one-shot claim.
struct due_claim {
  /// The due time claimed or considered: when none is within the window,
  /// the one nearest the caller's clock.
  occurrence due;
  claim_outcome outcome = claim_outcome::failed;  ///< What the claim came to.
  /// When claimed: the claim on `<name>:due:<id>`. Keep it once the job has
  /// started (it must outlive every instance's window and expires by
  /// itself); release it if the job does not start, so that another
  /// instance still within its window may take the due time.
  lock claim;
  unsigned attempts = 0;  ///< Claim attempts made.
};

namespace detail {
void start_claim_due(client& owner, std::string name, due_claim_options options,
                     completion<error_code, due_claim> done);
}

/// Claims, once, the due time of `options.when` nearest the caller's clock,
/// as a periodic_job with the same client key prefix and name claims it:
/// a Redlock lock on `<name>:due:<milliseconds since the epoch>` that
/// every instance (periodic_job or caller of this function) tries for the
/// same due time and at most one obtains. The job itself is the caller's
/// business; to run it as periodic_job does, hold the run lock `<name>`
/// while it runs (async_run_exclusive), so runs of consecutive due times do
/// not overlap either.
///
/// A due time is considered when the caller's clock is within
/// max_clock_skew before it up to max_clock_skew plus the request timeout
/// after it (the window). Each attempt is tried once; an attempt refused
/// while nobody holds the claim (instances claiming at the same moment
/// split the votes), or failing for too few answers, is retried after a
/// random delay, uniform between zero and the request timeout, as long as
/// it can start within the window. After a refusal, what every node holds
/// is read (client::async_status) to tell a claim held by another instance
/// (a majority holds its token) from a split vote.
///
/// Handler signature: `void(redlock::error_code, redlock::due_claim)`.
///
/// Completion condition: an attempt won the claim; or a read found it held
/// elsewhere; or no further attempt could start within the window; or a
/// failure that retrying cannot mend; or cancellation.
///
/// Error codes: success for every outcome but claim_outcome::failed; for
/// that one, the last attempt's error (errc::quorum_unreachable,
/// errc::validity_expired, a configuration error such as
/// errc::authentication_failed), or boost::asio::error::operation_aborted
/// when cancelled or the client was closed.
///
/// Per-operation cancellation: options.lock.stop. An attempt in flight is
/// undone first (as async_acquire does), a wait between attempts ends at
/// once; the handler then gets operation_aborted. Closing the client ends
/// the claim at its next step with operation_aborted; the client must not
/// be destroyed before the handler has run unless the stop was requested
/// first.
///
/// Throws boost::system::system_error for an empty name or bad lock
/// options, std::invalid_argument for a max_clock_skew that is negative or
/// whose double plus the request timeout is not less than the shortest gap
/// between due times, or for a lock.reentrant_owner or lock.fenced.
///
/// The handler is never invoked from inside this function.
template <class CompletionToken>
auto async_claim_due(client& owner, std::string name, due_claim_options options,
                     CompletionToken&& token) {
  return boost::asio::async_initiate<CompletionToken, void(error_code, due_claim)>(
      [&owner](auto handler, std::string name, due_claim_options options) {
        detail::start_claim_due(owner, std::move(name), std::move(options),
                                detail::make_completion<error_code, due_claim>(
                                    std::move(handler), owner.get_executor()));
      },
      token, std::move(name), std::move(options));
}

/// One run of a periodic job, as periodic_job::async_wait_run gives it: the
/// due time, and the run lock, held and kept extended until finish() is
/// called or the run is destroyed (which finishes it as
/// boost::asio::error::operation_aborted), then released. Movable, not
/// copyable. finish() may be called from any thread; the client must
/// outlive the run's finish.
class job_run {
 public:
  /// No run.
  job_run() = default;
  /// Finishes an unfinished run as operation_aborted.
  ~job_run() = default;
  /// Takes `other`'s run; `other` has none afterwards.
  job_run(job_run&& other) noexcept;
  /// Finishes this one's run as operation_aborted, then takes `other`'s.
  job_run& operator=(job_run&& other) noexcept;
  job_run(const job_run&) = delete;
  job_run& operator=(const job_run&) = delete;

  /// A run not finished yet.
  bool running() const noexcept { return kept_ != nullptr; }
  /// The due time this run is for.
  const occurrence& due() const noexcept { return due_; }
  /// The kept run lock (see keeper: its stop_token(), async_wait_lost()).
  /// Only while running().
  keeper& kept() const noexcept { return *kept_; }
  /// The run's token (kept().stop_token()): stop_requested() turns true on
  /// time when the run lock must be given up; check it before each side
  /// effect. A default token once finished.
  lease_token stop_token() const noexcept;
  /// The run's fencing token (kept().held().fence()) with
  /// periodic_options::lock.fenced, larger than every earlier run's; 0
  /// otherwise, or once finished.
  std::uint64_t fence() const noexcept;
  /// The job is over: releases the run lock, and reports the due time as
  /// occurrence_outcome::ran with `ec` (see periodic_job::outcome_handler).
  /// Once; later calls do nothing.
  void finish(error_code ec = {});

 private:
  friend class detail::periodic_run;
  job_run(occurrence due, keeper& kept, work_done done) noexcept
      : due_(std::move(due)), kept_(&kept), done_(std::move(done)) {}

  occurrence due_;
  keeper* kept_ = nullptr;  ///< Lives as long as done_ is not called.
  work_done done_;
};

/// Runs a job at most once per due time across every instance that runs a
/// periodic_job with the same client key prefix, name and schedule.
///
/// For each due time, the instance claims `<name>:due:<id>` with a lock that
/// is not released once the job has started (see docs/usage.md for its TTL),
/// retrying within its window while the claim is refused but held by
/// nobody (split votes; see async_claim_due, which makes the same claims),
/// then runs the job under the run lock `<name>` with auto-extension, so
/// runs of consecutive due times never overlap either; the claimer waits
/// for the run lock up to max(lock.ttl, keep.ttl) + the request timeout, by when a crashed
/// run's lock has expired. A crashed run blocks nothing but its own due
/// time. A claim whose job could not start is released, so another instance
/// still within its window may take the due time if it has not tried yet
/// (one that found the claim held has given up on that due time).
///
/// The job is a function called for each run, or, for a job made without
/// one, each run is handed to async_wait_run() with any completion token,
/// e.g. in a coroutine:
///
///     redlock::periodic_job job(locks, "report", options);
///     job.start();
///     for (;;) {
///       auto run = co_await job.async_wait_run(boost::asio::use_awaitable);
///       // work for run.due() while !run.stop_token().stop_requested()
///       run.finish();
///     }
class periodic_job {
 public:
  /// Called with the due time, the kept run lock and the callback to call
  /// when the job is over; see async_run_exclusive for `kept` and `done`.
  /// With periodic_options::lock.fenced, kept.held().fence() is the run's
  /// fencing token.
  using job = std::function<void(const occurrence&, keeper& kept, work_done done)>;
  /// Told what became of each due time (for logs and metrics).
  using outcome_handler = std::function<void(const occurrence&, occurrence_outcome, error_code)>;

  /// Throws boost::system::system_error for an empty name or bad lock or
  /// keep options (errc::fenced_ttl_too_long for a fenced run lock whose TTL
  /// exceeds client_config::max_fenced_ttl), std::invalid_argument for a
  /// negative max_clock_skew or a lock.reentrant_owner. An empty `run`
  /// hands the runs to async_wait_run() instead.
  periodic_job(client& owner, std::string name, periodic_options options, job run,
               outcome_handler on_outcome = {});
  /// A job whose runs are handed out by async_wait_run(); throws as the
  /// constructor above does.
  periodic_job(client& owner, std::string name, periodic_options options);
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

  /// Waits for this instance's next run: a due time it claimed, with the
  /// run lock held and kept extended (see job_run). For a job made without
  /// a job function; start() it too.
  ///
  /// Handler signature: `void(redlock::error_code, redlock::job_run)`.
  ///
  /// Completion condition: a run is ready, or the job stopped. A run that
  /// finds no wait pending is kept, its run lock extended, until the next
  /// wait takes it (meanwhile this instance's next due times find the run
  /// lock held: occurrence_outcome::previous_running).
  ///
  /// Error codes: success with the run; boost::asio::error::operation_aborted,
  /// with no run, once the job was stopped or destroyed;
  /// boost::asio::error::operation_not_supported for a job made with a job
  /// function (its runs go there).
  ///
  /// Per-operation cancellation: none; stop() ends every wait. Any number
  /// of waits may be pending: each run goes to the one that waited longest.
  ///
  /// The handler is never invoked from inside this function.
  template <class CompletionToken>
  auto async_wait_run(CompletionToken&& token);

 private:
  void start_wait_run(detail::completion<error_code, job_run> done);

  client::executor_type executor_;
  std::shared_ptr<detail::periodic_run> run_;
};

}  // namespace redlock

#include <redlock/impl/periodic.hpp>
