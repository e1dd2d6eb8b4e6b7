// What work done under a lock checks before each side effect.
#pragma once

#include <memory>
#include <stop_token>
#include <utility>

namespace redlock {

namespace detail {

/// Reads on time, from any thread, whether a lease's lost-lock signal is
/// due; once true, true for ever.
class lease_clock {
 public:
  virtual bool due() const noexcept = 0;

 protected:
  ~lease_clock() = default;
};

struct lease_access;

}  // namespace detail

/// A stop token for work done under a lock (keeper::stop_token(), a
/// leader's term, the scoped forms).
///
/// stop_requested() is true once the lost-lock signal has fired **or its
/// time has passed**, and once the keeping has ended (released, stopped or
/// destroyed keeper; a leader's step-down). It reads the clock itself
/// (redlock::clock), so a thread that resumes after a process pause
/// (SIGSTOP, a long GC or page-fault stall) or while the client's executor
/// is held up sees the loss before the executor has run the signal. Once
/// true it never turns false. Check it before each side effect. (A virtual
/// machine whose clock stops while it is paused cannot see that pause; see
/// docs/safety.md on clocks.)
///
/// It converts to a `std::stop_token` (get_stop_token()) for
/// `std::stop_callback` and APIs that take one: that token is requested
/// when the signal is *delivered* on the client's executor, which may be
/// later than its time; its stop_requested() alone is not the check.
///
/// Copies are cheap (two shared pointers) and thread-safe to read. A
/// default-made token never stops.
class lease_token {
 public:
  lease_token() noexcept = default;

  /// The signal fired, or its time has passed: stop acting under the lock.
  [[nodiscard]] bool stop_requested() const noexcept {
    return delivered_.stop_requested() || (clock_ && clock_->due());
  }
  /// The token can ever be stopped (it belongs to a lock).
  [[nodiscard]] bool stop_possible() const noexcept {
    return clock_ != nullptr || delivered_.stop_possible();
  }
  /// The standard token, requested when the signal is delivered (see above).
  [[nodiscard]] std::stop_token get_stop_token() const noexcept { return delivered_; }
  /// As get_stop_token(): for std::stop_callback and std::stop_token APIs.
  operator std::stop_token() const noexcept { return delivered_; }  // NOLINT: implicit on purpose

 private:
  friend struct detail::lease_access;
  lease_token(std::stop_token delivered, std::shared_ptr<const detail::lease_clock> clock) noexcept
      : delivered_(std::move(delivered)), clock_(std::move(clock)) {}

  std::stop_token delivered_;
  std::shared_ptr<const detail::lease_clock> clock_;
};

namespace detail {

/// The library's door to lease_token's private constructor.
struct lease_access {
  static lease_token make(std::stop_token delivered, std::shared_ptr<const lease_clock> clock) {
    return lease_token(std::move(delivered), std::move(clock));
  }
  /// `lease`'s clock with another delivered token (a leader's term).
  static lease_token rebind(const lease_token& lease, std::stop_token delivered) {
    return lease_token(std::move(delivered), lease.clock_);
  }
};

}  // namespace detail

}  // namespace redlock
