// One timer per client for every kept lock: each keeper asks to be woken
// within a window, and keepers whose windows are open when the timer fires
// run together, corked, so their extensions leave in one write per node.
#pragma once

#include "detail/timer.hpp"

#include <redlock/clock.hpp>

#include <functional>
#include <map>
#include <memory>

namespace redlock::detail {

class node_pool;

/// A keeper, as the schedule sees it.
class scheduled_keeper {
 public:
  /// On the strand, at some time within the window asked for; the keeper
  /// is no longer scheduled.
  virtual void on_due(clock::time_point now) = 0;

 protected:
  ~scheduled_keeper() = default;

 private:
  friend class keep_schedule;
  using slot = std::multimap<clock::time_point, scheduled_keeper*>::iterator;
  slot slot_{};
  clock::time_point wake_from_{};
  bool scheduled_ = false;
};

class keep_schedule {
 public:
  /// `pool`: corked while a batch of due keepers extends.
  keep_schedule(strand_type strand, node_pool& pool);

  /// Wakes `keeper` once at a time in [from, at] (moving it if it was
  /// scheduled); `from` <= `at`.
  void schedule(scheduled_keeper& keeper, clock::time_point from, clock::time_point at);
  void unschedule(scheduled_keeper& keeper) noexcept;
  /// The client closed: the timer stops and nothing is scheduled again, so
  /// the executor's run() can return.
  void close() noexcept;
  /// How many keepers are waiting (for tests).
  std::size_t size() const noexcept { return waiting_.size(); }

 private:
  void arm(clock::time_point at);
  void fire();

  timer timer_;
  node_pool& pool_;
  std::multimap<clock::time_point, scheduled_keeper*> waiting_;  ///< By latest wake time.
  clock::duration longest_window_{};
  clock::time_point armed_for_ = clock::time_point::max();
  bool closed_ = false;
  /// Lets a timer handler that outlives the schedule see that it is gone.
  std::shared_ptr<keep_schedule*> alive_ = std::make_shared<keep_schedule*>(this);
};

}  // namespace redlock::detail
