#include <redlock/periodic.hpp>

#include "detail/due_plan.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/system_timer.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <stdexcept>

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
    // One attempt each: a due time's window is short, and the run lock is
    // held by the previous run or free.
    options_.lock.retry = retry_policy::try_once();
    options_.lock.wait_timeout = milliseconds::zero();
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
    boost::asio::post(strand_, [self = shared_from_this()] { self->timer_.cancel(); });
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
    if (missed(due.due, now, skew)) {
      report(due, occurrence_outcome::missed, {});
      // After a long pause (a suspended machine), one report, not one per
      // due time slept through.
      if (missed(next_, now, skew)) next_ = first_due(options_.when, now, skew);
      return wait();
    }
    claim(due);
    wait();
  }

  void claim(const occurrence& due) {
    auto options = options_.lock;
    options.ttl = claim_ttl(options_.max_clock_skew, options_.lock.ttl);
    options.request_timeout = effective_request_timeout(options_.lock);
    // Never released: the claim must outlive every instance's window.
    owner_.async_acquire(name_ + ":due:" + due.id, options,
                         boost::asio::bind_executor(strand_, [self = shared_from_this(), due](
                                                                 error_code ec, const lock&) {
                           if (self->stopped_.load()) return;
                           if (ec == errc::not_acquired) {
                             return self->report(due, occurrence_outcome::claimed_elsewhere, {});
                           }
                           if (ec) return self->report(due, occurrence_outcome::failed, ec);
                           self->run(due);
                         }));
  }

  void run(const occurrence& due) {
    async_run_exclusive(
        owner_, name_, options_.lock, options_.keep,
        [self = shared_from_this(), due](keeper& kept, work_done done) {
          self->job_(due, kept, std::move(done));
        },
        boost::asio::bind_executor(strand_, [self = shared_from_this(), due](error_code ec) {
          if (ec == errc::not_acquired) {
            return self->report(due, occurrence_outcome::previous_running, {});
          }
          self->report(due, occurrence_outcome::ran, ec);
        }));
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
  wall_clock::time_point next_{};
  bool started_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace detail

periodic_job::periodic_job(client& owner, std::string name, periodic_options options, job run,
                           outcome_handler on_outcome) {
  const auto drift = owner.config().drift_factor;
  error_code invalid = validate(name, options.lock, drift);
  if (!invalid) invalid = validate(options.keep, options.lock.ttl, drift);
  if (invalid) throw boost::system::system_error(invalid, "redlock: periodic_job");
  if (options.max_clock_skew.count() < 0) {
    throw std::invalid_argument("redlock: periodic_job: max_clock_skew is negative");
  }
  run_ = std::make_shared<detail::periodic_run>(owner, std::move(name), std::move(options),
                                                std::move(run), std::move(on_outcome));
}

periodic_job::~periodic_job() { stop(); }

void periodic_job::start() { run_->start(); }

void periodic_job::stop() { run_->stop(); }

}  // namespace redlock
