// client::async_acquire: the I/O shell around acquire_fsm. It sends what
// the machine asks for, arms its one timer, and feeds back replies, timer
// expiries, undo completions, wake-ups and cancellation.
#pragma once

#include "detail/acquire_fsm.hpp"
#include "detail/deadline_queue.hpp"
#include "detail/lock_state.hpp"
#include "detail/operation.hpp"

#include <redlock/lock.hpp>

#include <stop_token>
#include <string>
#include <vector>

namespace redlock::detail {

class acquire_op final : public operation<acquire_op, error_code, redlock::lock>, private deadline {
 public:
  /// One resource, or several taken together (all or none on each node).
  acquire_op(std::shared_ptr<client_core> core, std::vector<std::string> resources,
             lock_options options, completion<error_code, redlock::lock> done);
  void client_closed() override;

 private:
  struct cancel_on_stop {
    std::weak_ptr<acquire_op> op;
    void operator()() const;
  };

  void run() override;
  void cancel() override;
  void execute(acquire_fsm::action next);
  void send_attempt(const acquire_fsm::action& next);
  /// A node's answer to attempt number `attempt`, sent at `sent`.
  void on_attempt_reply(std::uint64_t attempt, std::size_t node, clock::time_point sent,
                        error_code ec, const reply& r);
  /// Sends the attempt's fences to every node (acquire_fsm's write_back).
  void write_back(const acquire_fsm::action& next);
  /// The checks of run() that need the client's configuration.
  error_code validate_fencing(const lock_options& options) const;
  void undo(undo_plan plan);
  /// The machine's one timer, as a deadline on the client's queue.
  void arm_timer(clock::time_point at, std::uint64_t timer_id);
  void on_deadline() override;
  /// Until when a lock of this client holds one of our keys against us, for
  /// a pausing waiter (acquire_fsm::on_timer); min() if none is known.
  clock::time_point held_here_until(clock::time_point now);
  void wait_for_release();
  void wait_for_key(std::size_t k);
  void stop_waiting();
  void finish(error_code ec);
  /// The first resource, for the observer.
  std::string_view resource_name() const noexcept;

  /// What the attempts need of the caller's lock_options; the rest went
  /// into the machine's rules. Kept small: an operation is allocated per
  /// call, and past 1 KB glibc's allocator takes its slow path.
  struct attempt_settings {
    std::chrono::milliseconds ttl{};
    std::chrono::milliseconds lock_delay{};
    std::chrono::milliseconds request_timeout{};  ///< As given: zero derives it.
    bool fenced = false;
  };

  std::vector<std::string> resources_;
  held_keys keys_;
  attempt_settings settings_;
  std::stop_token stop_token_;
  error_code invalid_;  ///< What is wrong with the request, found when it was made.
  acquire_fsm fsm_;
  std::uint64_t timer_id_ = 0;  ///< The machine's id of the armed timer.
  std::string token_;
  error_code last_failure_{};  ///< Why the last attempt failed, for the observer.
  clock::time_point attempt_start_{};
  /// Registrations with the wakeup hub, one per key (0: none); empty if
  /// not waiting.
  std::vector<wakeup_hub::waiter_id> waiters_;
  std::uint64_t ticket_ = 0;  ///< Place in the hub's line, kept from the first wait on.
  std::uint64_t releases_here_at_attempt_ = 0;  ///< The hub's count when the attempt began.
  /// The key whose release woke us last (validate() bounds the keys: the
  /// narrow type keeps the operation within 1 KB, see attempt_settings).
  std::uint32_t woken_by_ = 0;
  bool waiting_at_attempt_ = false;  ///< Registered when the attempt began.
  /// Only with a stop token that can be stopped (rare: kept out of line).
  std::unique_ptr<std::stop_callback<cancel_on_stop>> stop_;
  /// The lock handed out, so that refusals arriving after the quorum still
  /// say which nodes never held it.
  std::shared_ptr<lock_state> granted_;
};

}  // namespace redlock::detail
