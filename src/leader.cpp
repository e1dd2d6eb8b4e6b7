#include <redlock/keeper.hpp>
#include <redlock/leader.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <mutex>
#include <vector>

namespace redlock {
namespace detail {

/// How a term ended, shared by the copies of its leader_term; any thread.
struct term_record {
  std::mutex mutex;
  bool ended = false;
  error_code reason;
  std::vector<completion<error_code>> waiters;

  /// The term is over: tells every waiter, now and later. Called from a
  /// handler of the campaign's strand, never from an initiating function.
  void end(error_code why) {
    std::vector<completion<error_code>> told;
    {
      const std::lock_guard guard(mutex);
      if (ended) return;
      ended = true;
      reason = why;
      told = std::exchange(waiters, {});
    }
    for (auto& done : told) done(why);
  }

  /// Completes `done` once the term is over; posted to `executor` when it
  /// is already (never from inside the initiating function).
  void wait(completion<error_code> done, const client::executor_type& executor) {
    std::unique_lock guard(mutex);
    if (!ended) {
      waiters.push_back(std::move(done));
      return;
    }
    const auto why = reason;
    guard.unlock();
    boost::asio::post(executor, [done = std::move(done), why]() mutable { done(why); });
  }
};

/// The election's state, on a strand of the client's executor.
class campaign : public std::enable_shared_from_this<campaign> {
 public:
  campaign(client& owner, std::string resource, campaign_options options,
           leader_election::elected_handler on_elected, leader_election::lost_handler on_lost)
      : owner_(owner),
        resource_(std::move(resource)),
        options_(std::move(options)),
        on_elected_(std::move(on_elected)),
        on_lost_(std::move(on_lost)),
        strand_(boost::asio::make_strand(owner.get_executor())),
        retry_timer_(strand_) {
    // Until acquired or stepped down.
    options_.lock = waiting_up_to(std::move(options_.lock), wait_forever);
    options_.keep.on_lost = nullptr;
  }

  void start() {
    boost::asio::post(strand_, [self = shared_from_this()] {
      if (self->phase_ == phase::idle && !self->stopping_) self->attempt();
    });
  }

  void step_down(completion<error_code> done) {
    boost::asio::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
      self->stopping_ = true;
      self->step_down_waiters_.push_back(std::move(done));
      switch (self->phase_) {
        case phase::idle:
        case phase::stopped:
          return self->finish({});
        case phase::campaigning:
          self->attempt_stop_.request_stop();  // on_acquired finishes
          return;
        case phase::waiting:
          self->retry_timer_.cancel();
          return self->finish({});
        case phase::leading:
          return self->end_term();
        case phase::releasing:
          return;  // the release's handler finishes
      }
    });
  }

  /// No user callback starts after this (the election is gone).
  void detach() noexcept { detached_.store(true); }

  /// Completes `done` with the current term, or the next one won, or
  /// operation_aborted once the campaign is over.
  void wait_elected(completion<error_code, leader_term> done) {
    boost::asio::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
      if (self->over()) return done(boost::asio::error::operation_aborted, leader_term{});
      if (self->phase_ == phase::leading && !self->kept_.lost()) {
        return done({}, self->current_);
      }
      self->elected_waiters_.push_back(std::move(done));
    });
  }

  /// Leading, and the term's lost-lock signal has not come due (true to
  /// the time even while the strand is held up).
  bool leading_now() const {
    if (!leading.load()) return false;
    const std::lock_guard guard(kept_mutex_);
    return !kept_.lost();
  }

  std::atomic<bool> leading{false};
  std::atomic<unsigned> terms{0};

 private:
  enum class phase { idle, campaigning, waiting, leading, releasing, stopped };

  /// No term will be won any more: stepping down, or stopped.
  bool over() const { return stopping_ || phase_ == phase::stopped; }

  /// The campaign is over: the waits for a term end.
  void stop_campaign() {
    phase_ = phase::stopped;
    for (auto& done : std::exchange(elected_waiters_, {})) {
      done(boost::asio::error::operation_aborted, leader_term{});
    }
  }

  void attempt() {
    if (stopping_ || detached_.load()) return finish({});
    phase_ = phase::campaigning;
    attempt_stop_ = std::stop_source{};
    auto options = options_.lock;
    options.stop = attempt_stop_.get_token();
    async_acquire_kept(
        owner_, {resource_}, std::move(options), options_.keep,
        boost::asio::bind_executor(
            strand_, [self = shared_from_this()](error_code ec, lock held, keeper kept) {
              self->on_acquired(ec, std::move(held), std::move(kept));
            }));
  }

  void on_acquired(error_code ec, lock held, keeper kept) {
    if (stopping_) {
      if (ec) return finish({});
      // Won just as the step-down began: give it back.
      phase_ = phase::releasing;
      set_kept(std::move(kept));
      return release_term();
    }
    if (ec == boost::asio::error::operation_aborted) return stop_campaign();  // the client closed
    // Too few nodes answered, or an error: try again after a pause.
    if (ec) return pause_then_attempt();
    phase_ = phase::leading;
    set_kept(std::move(kept));
    term_ = std::stop_source{};
    const unsigned term = terms.fetch_add(1) + 1;
    leading.store(true);
    current_.held = held;
    current_.token = lease_access::rebind(kept_.stop_token(), term_.get_token());
    current_.number = term;
    current_.record_ = std::make_shared<term_record>();
    kept_.async_wait_lost(boost::asio::bind_executor(
        strand_,
        [self = shared_from_this(), term](error_code reason) { self->on_signal(term, reason); }));
    if (!detached_ && on_elected_) on_elected_(held, current_.token);
    for (auto& done : std::exchange(elected_waiters_, {})) done({}, current_);
  }

  void on_signal(unsigned term, error_code reason) {
    // operation_aborted: the keeping was stopped by our own release.
    if (reason == boost::asio::error::operation_aborted) return;
    if (phase_ != phase::leading || term != terms.load()) return;
    leading.store(false);
    term_.request_stop();
    if (!detached_ && on_lost_) on_lost_(reason);
    end_record(reason);
    if (reason == errc::connection_closed) return stop_campaign();
    phase_ = phase::releasing;
    term_lost_ = true;
    // The signal came lost_margin before the validity ends so that the
    // term's work can stop while the lock still holds: releasing now would
    // elect a follower while that work may still be finishing. Let the
    // validity run out first, then clean up and campaign again.
    const auto left = kept_.held().remaining_validity();
    retry_timer_.expires_after(left);
    retry_timer_.async_wait([self = shared_from_this()](error_code) { self->release_term(); });
  }

  void end_term() {
    leading.store(false);
    term_.request_stop();
    end_record(boost::asio::error::operation_aborted);  // stepped down
    phase_ = phase::releasing;
    release_term();
  }

  void release_term() {
    kept_.async_release(boost::asio::bind_executor(
        strand_, [self = shared_from_this()](error_code ec, std::size_t) {
          self->set_kept(keeper{});
          // The release of a term already lost (and reported through
          // on_lost) is no step-down's error.
          if (self->stopping_)
            return self->finish(std::exchange(self->term_lost_, false) ? error_code{} : ec);
          if (!std::exchange(self->term_lost_, false)) return self->attempt();
          // A leader that just lost its term waits a retry delay before
          // campaigning again, so the followers woken by this release get
          // their turn first.
          self->pause_then_attempt();
        }));
  }

  void pause_then_attempt() {
    phase_ = phase::waiting;
    retry_timer_.expires_after(options_.lock.retry.base_delay);
    retry_timer_.async_wait([self = shared_from_this()](error_code waited) {
      if (waited || self->phase_ != phase::waiting) return;
      self->attempt();
    });
  }

  /// Tells the waits for the current term's end why it ended.
  void end_record(error_code why) {
    if (auto record = std::exchange(current_.record_, nullptr)) record->end(why);
  }

  void set_kept(keeper next) {
    const std::lock_guard guard(kept_mutex_);
    kept_ = std::move(next);
  }

  void finish(error_code ec) {
    stop_campaign();
    for (auto& done : std::exchange(step_down_waiters_, {})) done(ec);
  }

  client& owner_;
  std::string resource_;
  campaign_options options_;
  leader_election::elected_handler on_elected_;
  leader_election::lost_handler on_lost_;
  boost::asio::strand<client::executor_type> strand_;
  boost::asio::steady_timer retry_timer_;
  std::stop_source attempt_stop_;
  std::stop_source term_;
  mutable std::mutex kept_mutex_;  ///< kept_ is replaced on the strand, read by leading_now().
  keeper kept_;
  phase phase_ = phase::idle;
  bool stopping_ = false;
  bool term_lost_ = false;  ///< The term being released ended by the lost-lock signal.
  std::atomic<bool> detached_{false};
  std::vector<completion<error_code>> step_down_waiters_;
  leader_term current_;  ///< The term being led (its record until it ends).
  std::vector<completion<error_code, leader_term>> elected_waiters_;
};

}  // namespace detail

leader_election::leader_election(client& owner, std::string resource, campaign_options options,
                                 elected_handler on_elected, lost_handler on_lost)
    : executor_(owner.get_executor()) {
  const auto drift = owner.config().drift_factor;
  error_code invalid = validate(resource, options.lock, drift);
  if (!invalid) invalid = validate(options.keep, options.lock.ttl, drift);
  // Refused by every attempt otherwise: the campaign would retry for ever.
  if (!invalid && options.lock.fenced && options.lock.ttl > owner.config().max_fenced_ttl) {
    invalid = errc::fenced_ttl_too_long;
  }
  if (invalid) throw boost::system::system_error(invalid, "redlock: leader_election");
  campaign_ = std::make_shared<detail::campaign>(owner, std::move(resource), std::move(options),
                                                 std::move(on_elected), std::move(on_lost));
}

leader_election::leader_election(client& owner, std::string resource, campaign_options options)
    : leader_election(owner, std::move(resource), std::move(options), nullptr, nullptr) {}

leader_election::~leader_election() {
  campaign_->detach();
  step_down(detail::make_completion<error_code>([](error_code) {}, executor_));
}

void leader_election::campaign() { campaign_->start(); }

bool leader_election::leading() const noexcept { return campaign_->leading_now(); }

unsigned leader_election::terms() const noexcept { return campaign_->terms.load(); }

void leader_election::step_down(detail::completion<error_code> done) {
  campaign_->step_down(std::move(done));
}

void leader_election::start_wait_elected(detail::completion<error_code, leader_term> done) {
  campaign_->wait_elected(std::move(done));
}

void leader_election::start_wait_term_end(const leader_term& term,
                                          detail::completion<error_code> done) {
  term.record_->wait(std::move(done), executor_);
}

}  // namespace redlock
