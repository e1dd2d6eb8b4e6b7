// One timer per client for every kept lock: each keeper asks to be woken
// within a window, and keepers whose windows are open when the timer fires
// run together, corked, so their extensions leave in one write per node
// (plain single-key locks in one script call per node for many locks). At
// most max_in_flight extensions run at once: a keeper that finds no room
// waits in line (first come, first served) while still being woken at its
// latest time, so its lost-lock signal is never held up by other locks'
// extensions. A client keeping 100,000 locks sends them in rounds that each
// finish well within a request timeout, rather than in one burst that
// outlasts it.
#pragma once

#include "detail/extension_batch.hpp"
#include "detail/timer.hpp"

#include <redlock/clock.hpp>

#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>

#include <memory>

namespace redlock::detail {

class node_pool;

/// A keeper, as the schedule sees it. Its place in the schedule lives in
/// it, so scheduling allocates nothing (one kept lock is one schedule entry,
/// again after every extension).
class scheduled_keeper {
 public:
  /// On the strand, at some time within the window asked for, or once
  /// there is room after wait_for_room(); the keeper is no longer scheduled
  /// nor in line.
  virtual void on_due(clock::time_point now) = 0;

 protected:
  ~scheduled_keeper() = default;

 private:
  friend class keep_schedule;
  boost::intrusive::set_member_hook<> hook_;
  boost::intrusive::list_member_hook<> line_hook_;
  clock::time_point wake_at_{};
  clock::time_point wake_from_{};
};

/// The nodes' shortest round trip for a batch call lately: the least seen in
/// the current window of `window`, or the previous one if that was less
/// (zero before any). A longer route is taken up within two windows.
class shortest_round_trip {
 public:
  static constexpr clock::duration window = std::chrono::seconds(10);
  void observe(clock::duration round_trip, clock::time_point now) noexcept;
  clock::duration estimate() const noexcept;

 private:
  clock::time_point window_end_ = clock::time_point::min();
  clock::duration current_ = clock::duration::max();
  clock::duration previous_ = clock::duration::max();
};

/// Extensions a client may have in flight: `base` for each 10 ms (started)
/// of the nodes' shortest round trip, at least `base` and at most 32 times
/// it. Local nodes answer a round within milliseconds, so a round never
/// outlasts a request timeout; distant ones get as many extensions per
/// round trip as local ones get per 10 ms.
std::size_t in_flight_limit(std::size_t base, clock::duration shortest) noexcept;

class keep_schedule {
 public:
  /// Extensions running at once with local nodes (see in_flight_limit).
  /// Each costs the client about 5 microseconds (its five answers included)
  /// and each node 2 to 3: a full round is a few milliseconds of work.
  static constexpr std::size_t default_max_in_flight = 1024;

  /// `pool`: corked while a batch of due keepers extends. `max_in_flight`:
  /// the base of in_flight_limit.
  keep_schedule(strand_type strand, node_pool& pool,
                std::size_t max_in_flight = default_max_in_flight);

  /// Wakes `keeper` once at a time in [from, at] (moving it if it was
  /// scheduled); `from` <= `at`.
  void schedule(scheduled_keeper& keeper, clock::time_point from, clock::time_point at);
  /// Takes `keeper` off the schedule and out of the line.
  void unschedule(scheduled_keeper& keeper) noexcept;
  /// Whether an extension may start now (fewer than max_in_flight run).
  bool has_room() const noexcept { return in_flight_ < limit(); }
  /// `keeper` (just scheduled for its latest time) wants to extend but
  /// found no room: it is woken, in line order, once there is room, or at
  /// its scheduled time, whichever comes first.
  void wait_for_room(scheduled_keeper& keeper);
  /// A keeper sends an extension / its extension completed. The line moves
  /// once half of max_in_flight have ended.
  void extension_started() noexcept { ++in_flight_; }
  void extension_ended();
  /// While due keepers run (inside on_due): the batch their extensions join,
  /// flushed when they all have run; null otherwise.
  extension_batch* open_batch() noexcept { return firing_ ? &batch_ : nullptr; }
  /// The client closed: the timer stops and nothing is scheduled again, so
  /// the executor's run() can return.
  void close() noexcept;
  /// How many keepers are scheduled / in line for room (for tests).
  std::size_t size() const noexcept { return waiting_.size(); }
  std::size_t in_line() const noexcept { return line_.size(); }
  /// Extensions running (for tests).
  std::size_t in_flight() const noexcept { return in_flight_; }
  /// How many may run at once now.
  std::size_t limit() const noexcept { return in_flight_limit(max_in_flight_, trips_.estimate()); }

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
  using room_line = boost::intrusive::list<
      scheduled_keeper,
      boost::intrusive::member_hook<scheduled_keeper, boost::intrusive::list_member_hook<>,
                                    &scheduled_keeper::line_hook_>>;

  void arm(clock::time_point at);
  void fire();

  timer timer_;
  node_pool& pool_;
  extension_batch batch_;
  const std::size_t max_in_flight_;
  std::size_t in_flight_ = 0;
  shortest_round_trip trips_;
  bool firing_ = false;
  waiting_set waiting_;  ///< By latest wake time.
  room_line line_;       ///< Keepers waiting for room, first come first.
  clock::duration longest_window_{};
  clock::time_point armed_for_ = clock::time_point::max();
  bool closed_ = false;
  /// Lets a timer handler that outlives the schedule see that it is gone.
  std::shared_ptr<keep_schedule*> alive_ = std::make_shared<keep_schedule*>(this);
};

}  // namespace redlock::detail
