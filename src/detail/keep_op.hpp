// A keeper's work on the client's strand: extends the lock as keep_fsm
// says, through extend_op, and gives the lost-lock signal.
#pragma once

#include "detail/client_core.hpp"
#include "detail/keep_fsm.hpp"
#include "detail/keep_schedule.hpp"
#include "detail/lock_state.hpp"

#include <redlock/detail/completion.hpp>
#include <redlock/lease_token.hpp>

#include <atomic>
#include <limits>
#include <memory>
#include <stop_token>
#include <vector>

namespace redlock::detail {

/// What a keeper shares with the work's tokens: atomics only, so a token
/// may outlive the keeper, its client and the client's io_context.
struct lease_state final : lease_clock {
  /// A reader saw the signal's time pass (stored in signal_at_ns in place
  /// of the time): the strand must fire the signal, whatever lands later.
  static constexpr clock::rep seen_marker = std::numeric_limits<clock::rep>::min();

  /// The signal fired, or its time has passed (claimed for ever, see
  /// keep_op::publish_signal_time).
  bool lost() const noexcept;
  /// lost(), or the keeping was stopped (the lease is over either way).
  bool due() const noexcept override;

  std::atomic<bool> signalled{false};
  std::atomic<bool> stopped{false};
  /// When the signal is due if nothing lands first, or seen_marker. Only
  /// the keeper's strand stores times; readers only swap its last one for
  /// the marker.
  mutable std::atomic<clock::rep> signal_at_ns{clock::time_point::max().time_since_epoch().count()};
  std::atomic<errc> late_reason{errc::lock_expiring};
};

class keep_op final : public registered_operation,
                      public scheduled_keeper,
                      public std::enable_shared_from_this<keep_op> {
 public:
  /// `held` and `options` are valid (checked by the keeper).
  keep_op(std::shared_ptr<client_core> core, redlock::lock held, const keep_options& options);
  /// Unfinished only when its callbacks were dropped (teardown): leaves no
  /// pointer to it in the core's watchers or the keep schedule.
  ~keep_op();
  keep_op(const keep_op&) = delete;
  keep_op& operator=(const keep_op&) = delete;

  /// Starts keeping (posted onto the strand).
  void launch();
  /// Thread-safe: stop keeping, without a signal (the owner releases or the
  /// work is over). Takes effect before anything posted after it.
  void request_stop();
  /// Thread-safe: `done` gets the reason once the signal fires, or
  /// operation_aborted once keeping stops without one.
  void wait_lost(completion<error_code> done);

  // Thread-safe reads.
  const redlock::lock& held() const noexcept { return held_; }
  /// Also true once the signal's time has passed while the strand could
  /// not run (a busy executor): the work must not trust the lock then.
  /// Never turns false again once true.
  bool lost() const noexcept { return lease_->lost(); }
  error_code reason() const noexcept;
  /// For the work's tokens.
  std::shared_ptr<const lease_state> lease() const noexcept { return lease_; }
  std::stop_token stop_token() const noexcept { return stop_source_.get_token(); }
  unsigned extensions() const noexcept { return extensions_.load(std::memory_order_relaxed); }
  const std::shared_ptr<client_core>& core() const noexcept { return core_; }

  void client_closed() override;
  void on_due(clock::time_point now) override;
  void lock_changed() override;

 private:
  void step();
  void send_extension(milliseconds ttl);
  void signal(error_code reason);
  void finish();
  /// Publishes the signal's time for readers; false when a reader had
  /// already claimed the previous one (the signal must fire now).
  bool publish_signal_time(clock::time_point at, errc reason) noexcept;
  void take_sightings() noexcept;

  std::shared_ptr<client_core> core_;
  redlock::lock held_;
  std::function<void(error_code)> on_lost_;
  keep_fsm fsm_;
  std::stop_source stop_source_;
  std::vector<completion<error_code>> waiters_;
  error_code reason_;  ///< Written before lease_->signalled.
  std::shared_ptr<lease_state> lease_ = std::make_shared<lease_state>();
  clock::rep published_{};  ///< The strand's last store to lease_->signal_at_ns.
  std::atomic<unsigned> extensions_{0};
  bool enrolled_ = false;
  bool done_ = false;
};

}  // namespace redlock::detail
