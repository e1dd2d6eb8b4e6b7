#include <redlock/periodic.hpp>

#include "detail/claim_op.hpp"
#include "detail/due_plan.hpp"

#include <fmt/format.h>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/system_timer.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <deque>
#include <stdexcept>
#include <stop_token>

namespace redlock {
namespace detail {

/// A periodic job's schedule loop, on a strand of the client's executor.
class periodic_run : public std::enable_shared_from_this<periodic_run> {
 public:
  periodic_run(client& owner, std::string name, periodic_options options, periodic_job::job job,
               periodic_job::outcome_handler on_outcome)
      : owner_(owner),
        name_(std::move(name)),
        options_(std::move(options)),
        job_(std::move(job)),
        on_outcome_(std::move(on_outcome)),
        strand_(boost::asio::make_strand(owner.get_executor())),
        timer_(strand_) {
    lag_ = effective_request_timeout(options_.lock);
    // Each attempt is tried once; the claim op retries within the window.
    claim_options_ = options_.lock;
    claim_options_.retry = retry_policy::try_once();
    claim_options_.wait_timeout = milliseconds::zero();
    claim_options_.request_timeout = lag_;
    claim_options_.stop = stopping_.get_token();
    // A claim's key is new for every due time, so its fence would say
    // nothing; the run lock carries the run's fence (when fenced).
    claim_options_.fenced = false;
    // The run lock may still be held by the previous run: wait for it (woken
    // by its release) until a crashed holder's lock has surely expired.
    run_options_ = options_.lock;
    run_options_.retry = retry_policy{};
    // A crashed run's key lives as long as its last extension's TTL.
    run_options_ = waiting_up_to(std::move(run_options_),
                                 std::max(options_.lock.ttl, options_.keep.ttl) + lag_);
  }

  void start() {
    boost::asio::post(strand_, [self = shared_from_this()] {
      if (self->started_ || self->stopped_.load()) return;
      self->started_ = true;
      self->next_ =
          first_due(self->options_.when, self->local_now(), self->options_.max_clock_skew);
      self->wait();
    });
  }

  void stop() {
    stopped_.store(true);
    stopping_.request_stop();  // a claim in progress ends without touching the client
    boost::asio::post(strand_, [self = shared_from_this()] {
      self->timer_.cancel();
      // A run nobody took ends (its run lock is released); the waits end.
      self->ready_.clear();
      for (auto& done : std::exchange(self->run_waiters_, {})) {
        done(boost::asio::error::operation_aborted, job_run{});
      }
    });
  }

  /// Completes `done` with the next run (async_wait_run).
  void wait_run(completion<error_code, job_run> done) {
    boost::asio::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
      if (self->job_) return done(boost::asio::error::operation_not_supported, job_run{});
      if (self->stopped_.load()) return done(boost::asio::error::operation_aborted, job_run{});
      if (!self->ready_.empty()) {
        auto run = std::move(self->ready_.front());
        self->ready_.pop_front();
        return done({}, std::move(run));
      }
      self->run_waiters_.push_back(std::move(done));
    });
  }

 private:
  wall_clock::time_point local_now() const { return wall_clock::now() + options_.clock_offset; }

  void wait() {
    timer_.expires_at(next_ - options_.clock_offset);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->stopped_.load()) return;
      self->on_due();
    });
  }

  void on_due() {
    const auto skew = options_.max_clock_skew;
    const occurrence due{next_, due_id(next_)};
    const auto now = local_now();
    next_ = options_.when.next_after(due.due);
    if (missed(due.due, now, skew, lag_)) {
      report(due, occurrence_outcome::missed, {});
      // After a long pause (a suspended machine), one report, not one per
      // due time slept through.
      if (missed(next_, now, skew, lag_)) next_ = first_due(options_.when, now, skew);
      return wait();
    }
    claim(due);
    wait();
  }

  void claim(const occurrence& due) {
    claim_request request;
    request.resource = claim_resource(name_, due.due);
    request.due = due;
    request.window = periodic_window(due.due, options_.max_clock_skew, lag_);
    request.clock_offset = options_.clock_offset;
    request.lock = claim_options_;
    // Never released once the job has started: the claim must outlive every
    // instance's window.
    request.lock.ttl = claim_lifetime(claim_ttl(request.window, options_.max_clock_skew, lag_,
                                                options_.lock.ttl, owner_.config().drift_factor),
                                      options_.when.shortest_gap());
    start_claim(owner_, std::move(request),
                make_completion<error_code, due_claim>(
                    boost::asio::bind_executor(
                        strand_,
                        [self = shared_from_this()](error_code ec, due_claim result) {
                          // Stopped: the client may be gone, so it is not
                          // touched again (an unused claim expires with its TTL).
                          if (self->stopped_.load()) return;
                          self->claimed(result, ec);
                        }),
                    owner_.get_executor()));
  }

  void claimed(const due_claim& result, error_code ec) {
    switch (result.outcome) {
      case claim_outcome::claimed:
        return run(result.due, result.claim);
      case claim_outcome::claimed_elsewhere:
        return report(result.due, occurrence_outcome::claimed_elsewhere, {});
      case claim_outcome::contended:
        return report(result.due, occurrence_outcome::contended, {});
      case claim_outcome::missed:
        return report(result.due, occurrence_outcome::missed, {});
      case claim_outcome::failed:
        return report(result.due, occurrence_outcome::failed, ec);
    }
  }

  /// Nothing ran: another instance still in its window may take the due time.
  void give_back(const lock& claimed) {
    owner_.async_release(claimed, [](error_code, std::size_t) {});
  }

  void run(const occurrence& due, const lock& claimed) {
    auto started = std::make_shared<bool>(false);
    async_run_exclusive(
        owner_, name_, run_options_, options_.keep,
        [self = shared_from_this(), due, started](keeper& kept, work_done done) {
          if (self->stopped_.load()) return done(boost::asio::error::operation_aborted);
          *started = true;
          if (self->job_) return self->job_(due, kept, std::move(done));
          self->hand_over(job_run(due, kept, std::move(done)));
        },
        boost::asio::bind_executor(
            strand_, [self = shared_from_this(), due, claimed, started](error_code ec) {
              if (*started) return self->report(due, occurrence_outcome::ran, ec);
              if (self->stopped_.load()) return;
              // The job never started: the due time is not used up.
              self->give_back(claimed);
              if (ec == errc::not_acquired) {
                return self->report(due, occurrence_outcome::previous_running, {});
              }
              self->report(due, occurrence_outcome::failed, ec);
            }));
  }

  /// A run for async_wait_run: to the longest waiting wait, or kept until
  /// one comes.
  void hand_over(job_run run) {
    boost::asio::post(strand_, [self = shared_from_this(), run = std::move(run)]() mutable {
      if (self->stopped_.load()) return;  // dropping it ends the run
      if (self->run_waiters_.empty()) {
        self->ready_.push_back(std::move(run));
        return;
      }
      auto done = std::move(self->run_waiters_.front());
      self->run_waiters_.pop_front();
      done({}, std::move(run));
    });
  }

  void report(const occurrence& due, occurrence_outcome outcome, error_code ec) {
    if (on_outcome_ && !stopped_.load()) on_outcome_(due, outcome, ec);
  }

  client& owner_;
  std::string name_;
  periodic_options options_;
  periodic_job::job job_;
  periodic_job::outcome_handler on_outcome_;
  boost::asio::strand<client::executor_type> strand_;
  boost::asio::basic_waitable_timer<wall_clock, boost::asio::wait_traits<wall_clock>,
                                    boost::asio::strand<client::executor_type>>
      timer_;
  lock_options claim_options_;  ///< All but the TTL, which depends on the window.
  lock_options run_options_;
  milliseconds lag_{};
  wall_clock::time_point next_{};
  bool started_ = false;
  std::atomic<bool> stopped_{false};
  std::stop_source stopping_;
  std::deque<job_run> ready_;  ///< Runs no wait has taken yet (async_wait_run).
  std::deque<completion<error_code, job_run>> run_waiters_;
};

/// A claim or run lock re-entered by another instance sharing the owner id
/// would let a due time run twice (or consecutive runs overlap).
void refuse_reentrant(const lock_options& lock, const char* what) {
  if (!lock.reentrant_owner.empty()) {
    throw std::invalid_argument(fmt::format(
        "redlock: {}: lock.reentrant_owner must be empty (a re-entered claim or run lock could "
        "run a due time twice)",
        what));
  }
}

void start_claim_due(client& owner, std::string name, due_claim_options options,
                     completion<error_code, due_claim> done) {
  const error_code invalid = validate(name, options.lock, owner.config().drift_factor);
  if (invalid) throw boost::system::system_error(invalid, "redlock: async_claim_due");
  if (options.max_clock_skew.count() < 0) {
    throw std::invalid_argument("redlock: async_claim_due: max_clock_skew is negative");
  }
  refuse_reentrant(options.lock, "async_claim_due");
  if (options.lock.fenced) {
    throw std::invalid_argument(
        "redlock: async_claim_due: lock.fenced is not supported (each due time's claim is a key "
        "of its own, so its fence would always be the first); fence the run lock instead");
  }
  const auto lag = effective_request_timeout(options.lock);
  // An instance late within one due time's window must not find the next
  // one nearer.
  if (2 * options.max_clock_skew + lag >= options.when.shortest_gap()) {
    throw std::invalid_argument(fmt::format(
        "redlock: async_claim_due: twice max_clock_skew ({} ms) plus the request timeout ({} ms) "
        "is not less than the shortest gap between due times ({} ms)",
        options.max_clock_skew.count(), lag.count(), options.when.shortest_gap().count()));
  }
  const auto skew = options.max_clock_skew;
  const auto now = wall_clock::now() + options.clock_offset;
  const auto due = due_near(options.when, now, skew, lag);
  if (!due) {
    // Nothing to claim; never from inside the initiating function.
    due_claim result;
    result.due.due = options.when.next_after(now);
    result.due.id = due_id(result.due.due);
    result.outcome = claim_outcome::missed;
    return boost::asio::post(owner.get_executor(),
                             [done = std::move(done), result = std::move(result)]() mutable {
                               done({}, std::move(result));
                             });
  }
  claim_request request;
  request.resource = claim_resource(name, *due);
  request.due = {*due, due_id(*due)};
  request.window = one_shot_window(*due, skew, lag);
  request.clock_offset = options.clock_offset;
  request.lock = options.lock;
  request.lock.retry = retry_policy::try_once();
  request.lock.wait_timeout = milliseconds::zero();
  request.lock.request_timeout = lag;
  request.lock.ttl = claim_lifetime(
      claim_ttl(request.window, skew, lag, options.lock.ttl, owner.config().drift_factor),
      options.when.shortest_gap());
  start_claim(owner, std::move(request), std::move(done));
}

}  // namespace detail

job_run::job_run(job_run&& other) noexcept
    : due_(std::move(other.due_)),
      kept_(std::exchange(other.kept_, nullptr)),
      done_(std::move(other.done_)) {}

job_run& job_run::operator=(job_run&& other) noexcept {
  if (this == &other) return *this;
  done_ = std::move(other.done_);  // an unfinished run of this one ends as aborted
  due_ = std::move(other.due_);
  kept_ = std::exchange(other.kept_, nullptr);
  return *this;
}

lease_token job_run::stop_token() const noexcept {
  return kept_ != nullptr ? kept_->stop_token() : lease_token{};
}

std::uint64_t job_run::fence() const noexcept {
  return kept_ != nullptr ? kept_->held().fence() : 0;
}

void job_run::finish(error_code ec) {
  if (kept_ == nullptr) return;
  kept_ = nullptr;
  auto done = std::move(done_);
  done(ec);
}

periodic_job::periodic_job(client& owner, std::string name, periodic_options options)
    : periodic_job(owner, std::move(name), std::move(options), nullptr, {}) {}

periodic_job::periodic_job(client& owner, std::string name, periodic_options options, job run,
                           outcome_handler on_outcome)
    : executor_(owner.get_executor()) {
  const auto drift = owner.config().drift_factor;
  error_code invalid = validate(name, options.lock, drift);
  if (!invalid) invalid = validate(options.keep, options.lock.ttl, drift);
  if (invalid) throw boost::system::system_error(invalid, "redlock: periodic_job");
  if (options.max_clock_skew.count() < 0) {
    throw std::invalid_argument("redlock: periodic_job: max_clock_skew is negative");
  }
  detail::refuse_reentrant(options.lock, "periodic_job");
  if (options.lock.fenced && options.lock.ttl > owner.config().max_fenced_ttl) {
    throw boost::system::system_error(errc::fenced_ttl_too_long, "redlock: periodic_job");
  }
  run_ = std::make_shared<detail::periodic_run>(owner, std::move(name), std::move(options),
                                                std::move(run), std::move(on_outcome));
}

periodic_job::~periodic_job() { stop(); }

void periodic_job::start() { run_->start(); }

void periodic_job::stop() { run_->stop(); }

void periodic_job::start_wait_run(detail::completion<error_code, job_run> done) {
  run_->wait_run(std::move(done));
}

}  // namespace redlock
