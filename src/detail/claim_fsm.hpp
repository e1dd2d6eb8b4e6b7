// The steps of claiming one due time: when to attempt, when to look at who
// holds the claim, when to retry and when to give up. No I/O and no clock
// reads: callers feed it results and the current time (tests: a fake clock).
#pragma once

#include <redlock/error.hpp>
#include <redlock/periodic.hpp>
#include <redlock/status.hpp>

namespace redlock::detail {

class claim_fsm {
 public:
  /// What the claimer does next.
  struct step {
    enum class action {
      attempt,      ///< Try to acquire the claim once.
      read_status,  ///< Read what every node holds for the claim.
      wait,         ///< Wait until `at`, then call on_wake.
      finish,       ///< Done: `outcome` (and `error` for failed).
    };
    action what = action::finish;
    wall_clock::time_point at{};  ///< wait: when, on the claimer's clock.
    claim_outcome outcome = claim_outcome::failed;
    error_code error{};
  };

  /// `closes`: the last time (the claimer's clock) an attempt may start.
  /// Retries start after a delay uniform in [0, retry_spread].
  claim_fsm(wall_clock::time_point closes, milliseconds retry_spread) noexcept;

  /// The first step at `now`: an attempt, or missed when the window has
  /// closed already.
  step start(wall_clock::time_point now);
  /// An attempt ended with `ec`. `unit_random` in [0, 1) picks the delay.
  step on_attempt(error_code ec, wall_clock::time_point now, double unit_random);
  /// The read after a refusal ended.
  step on_status(error_code ec, const resource_status& status, wall_clock::time_point now,
                 double unit_random);
  /// The wait is over.
  step on_wake(wall_clock::time_point now);

  unsigned attempts() const noexcept { return attempts_; }

 private:
  step attempt();
  step retry_or_finish(wall_clock::time_point now, double unit_random);
  step give_up() const;

  wall_clock::time_point closes_;
  milliseconds retry_spread_;
  /// Why the last attempt failed, as reported if the window closes:
  /// not_acquired (with nobody holding the claim) becomes contended.
  error_code last_error_{};
  unsigned attempts_ = 0;
};

/// Errors after which another attempt may succeed: too few answers, or a
/// majority answering too late.
bool retryable_claim_error(error_code ec) noexcept;

}  // namespace redlock::detail
