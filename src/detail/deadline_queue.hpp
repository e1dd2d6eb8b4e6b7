// One timer for the deadlines of many operations. An acquire or a release
// almost always ends long before its deadline; arming and cancelling a timer
// of its own cost each one two trips through Asio's timer queue and a
// handler run. Here a deadline is a link in an ordered set, and the one
// timer is armed for the earliest, lazily: a deadline that goes away leaves
// the timer as it is, to wake once for nothing.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/error.hpp>
#include "detail/timer.hpp"

#include <boost/intrusive/set.hpp>

#include <cstdint>
#include <memory>

namespace redlock::detail {

/// An operation's deadline, armed on a deadline_queue.
class deadline {
 public:
  deadline() = default;
  deadline(const deadline&) = delete;
  deadline& operator=(const deadline&) = delete;

  bool armed() const noexcept { return hook_.is_linked(); }

 protected:
  /// Disarmed first (the owner stays alive while it runs).
  virtual void on_deadline() = 0;
  ~deadline() = default;

 private:
  friend class deadline_queue;
  boost::intrusive::set_member_hook<> hook_;
  clock::time_point at_{};
  std::uint64_t changes_ = 0;  ///< Arms and disarms so far.
  /// Keeps the operation alive while it is armed.
  std::shared_ptr<void> owner_;
};

class deadline_queue {
 public:
  explicit deadline_queue(strand_type strand);

  /// Arms `d` for `at` (re-arms it if armed): d.on_deadline() runs on the
  /// strand once `at` has passed, unless disarm() or another arm() comes
  /// first. `owner` is kept until then.
  void arm(deadline& d, clock::time_point at, std::shared_ptr<void> owner);
  /// Disarms `d` (nothing if it was not armed) and returns its owner: the
  /// caller decides where the last reference may go.
  [[nodiscard]] std::shared_ptr<void> disarm(deadline& d) noexcept;
  /// What the timer's handler holds for its call (the client's core, which
  /// owns this queue and may otherwise go on another thread meanwhile);
  /// the handler does nothing once it is gone. Required before arm().
  void keep_alive_with(std::weak_ptr<void> owner) { owner_ = std::move(owner); }
  /// The client closed: once nothing is armed, the timer waits no more, so
  /// the executor's run() can return. Deadlines still work until then.
  void close() noexcept;
  /// The executor's context is going away: every owner is let go uncalled.
  void abandon() noexcept;
  /// Armed deadlines (for tests).
  std::size_t size() const noexcept { return armed_.size(); }
  /// Whether the timer is waiting (for tests).
  bool timer_waiting() const noexcept { return waiting_for_ != clock::time_point::max(); }

 private:
  struct by_time {
    bool operator()(const deadline& a, const deadline& b) const noexcept { return a.at_ < b.at_; }
  };
  using armed_set = boost::intrusive::multiset<
      deadline,
      boost::intrusive::member_hook<deadline, boost::intrusive::set_member_hook<>,
                                    &deadline::hook_>,
      boost::intrusive::compare<by_time>>;

  /// Makes the timer wait for the earliest deadline, if any.
  void rearm();
  void fire(std::uint64_t wait);

  timer timer_;
  armed_set armed_;
  /// When the timer's current wait ends; max(): not waiting.
  clock::time_point waiting_for_ = clock::time_point::max();
  std::uint64_t wait_ = 0;  ///< Number of the current wait: older ones are ignored.
  bool closed_ = false;
  std::weak_ptr<void> owner_;
};

}  // namespace redlock::detail
