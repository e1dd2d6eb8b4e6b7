// One timer per client for every kept lock: each keeper asks to be woken
// within a window, and keepers whose windows are open when the timer fires
// run together, corked, so their extensions leave in one write per node
// (plain single-key locks in one script call per node for many locks). At
// most max_in_flight extensions run at once, the earliest due first: a
// client keeping 100,000 locks sends them in rounds that each finish well
// within a request timeout, rather than in one burst that outlasts it.
#pragma once

#include "detail/extension_batch.hpp"
#include "detail/timer.hpp"

#include <redlock/clock.hpp>

#include <boost/intrusive/set.hpp>

#include <memory>

namespace redlock::detail {

class node_pool;

/// A keeper, as the schedule sees it. Its place in the schedule lives in
/// it, so scheduling allocates nothing (one kept lock is one schedule entry,
/// again after every extension).
class scheduled_keeper {
 public:
  /// On the strand, at some time within the window asked for; the keeper
  /// is no longer scheduled.
  virtual void on_due(clock::time_point now) = 0;

 protected:
  ~scheduled_keeper() = default;

 private:
  friend class keep_schedule;
  boost::intrusive::set_member_hook<> hook_;
  clock::time_point wake_at_{};
  clock::time_point wake_from_{};
};

class keep_schedule {
 public:
  /// Extensions running at once, at most (see the top of this file). Each
  /// costs the client a few microseconds per node and the node a few key
  /// reads: a full round is a few milliseconds of work.
  static constexpr std::size_t default_max_in_flight = 1024;

  /// `pool`: corked while a batch of due keepers extends.
  keep_schedule(strand_type strand, node_pool& pool,
                std::size_t max_in_flight = default_max_in_flight);

  /// Wakes `keeper` once at a time in [from, at] (moving it if it was
  /// scheduled); `from` <= `at`.
  void schedule(scheduled_keeper& keeper, clock::time_point from, clock::time_point at);
  void unschedule(scheduled_keeper& keeper) noexcept;
  /// A keeper sends an extension / its extension completed. Due keepers
  /// wait while max_in_flight run, and resume once half of them are done.
  void extension_started() noexcept { ++in_flight_; }
  void extension_ended();
  /// While due keepers run (inside on_due): the batch their extensions join,
  /// flushed when they all have run; null otherwise.
  extension_batch* open_batch() noexcept { return firing_ ? &batch_ : nullptr; }
  /// The client closed: the timer stops and nothing is scheduled again, so
  /// the executor's run() can return.
  void close() noexcept;
  /// How many keepers are waiting (for tests).
  std::size_t size() const noexcept { return waiting_.size(); }
  /// Extensions running (for tests).
  std::size_t in_flight() const noexcept { return in_flight_; }

 private:
  struct by_wake_at {
    bool operator()(const scheduled_keeper& a, const scheduled_keeper& b) const noexcept {
      return a.wake_at_ < b.wake_at_;
    }
  };
  using waiting_set = boost::intrusive::multiset<
      scheduled_keeper,
      boost::intrusive::member_hook<scheduled_keeper, boost::intrusive::set_member_hook<>,
                                    &scheduled_keeper::hook_>,
      boost::intrusive::compare<by_wake_at>>;

  void arm(clock::time_point at);
  void fire();

  timer timer_;
  node_pool& pool_;
  extension_batch batch_;
  const std::size_t max_in_flight_;
  std::size_t in_flight_ = 0;
  bool firing_ = false;
  /// Due keepers wait for extensions to end (the timer is not armed).
  bool paused_ = false;
  waiting_set waiting_;  ///< By latest wake time.
  clock::duration longest_window_{};
  clock::time_point armed_for_ = clock::time_point::max();
  bool closed_ = false;
  /// Lets a timer handler that outlives the schedule see that it is gone.
  std::shared_ptr<keep_schedule*> alive_ = std::make_shared<keep_schedule*>(this);
};

}  // namespace redlock::detail
