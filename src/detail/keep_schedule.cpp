#include "detail/keep_schedule.hpp"

#include "detail/node_pool.hpp"

#include <algorithm>
#include <vector>

namespace redlock::detail {

keep_schedule::keep_schedule(strand_type strand, node_pool& pool, std::size_t max_in_flight)
    : timer_(std::move(strand)),
      pool_(pool),
      max_in_flight_(std::max<std::size_t>(max_in_flight, 1)) {}

void keep_schedule::schedule(scheduled_keeper& keeper, clock::time_point from,
                             clock::time_point at) {
  unschedule(keeper);
  if (closed_) return;
  keeper.wake_at_ = at;
  keeper.wake_from_ = std::min(from, at);
  waiting_.insert(keeper);
  longest_window_ = std::max(longest_window_, at - keeper.wake_from_);
  if (at < armed_for_) arm(at);
}

void keep_schedule::unschedule(scheduled_keeper& keeper) noexcept {
  if (!keeper.hook_.is_linked()) return;
  waiting_.erase(waiting_.iterator_to(keeper));
  // Otherwise the timer may stay armed for it: firing with nobody due costs
  // a wake-up. With nobody left it must not keep the executor busy.
  if (waiting_.empty() && armed_for_ != clock::time_point::max()) {
    armed_for_ = clock::time_point::max();
    timer_.cancel();
  }
}

void keep_schedule::extension_ended() {
  if (in_flight_ > 0) --in_flight_;
  if (!paused_ || closed_ || in_flight_ > max_in_flight_ / 2) return;
  paused_ = false;
  // Through the timer, not from here: this runs inside an extension's
  // completion.
  if (!waiting_.empty() && waiting_.begin()->wake_at_ < armed_for_) arm(waiting_.begin()->wake_at_);
}

void keep_schedule::close() noexcept {
  closed_ = true;
  waiting_.clear();
  armed_for_ = clock::time_point::max();
  timer_.cancel();
}

void keep_schedule::arm(clock::time_point at) {
  armed_for_ = at;
  timer_.expires_at(at);  // cancels the wait for a later time
  timer_.async_wait([alive = std::weak_ptr<keep_schedule*>(alive_), at](error_code ec) {
    if (ec) return;
    auto self = alive.lock();
    if (!self || (*self)->armed_for_ != at) return;
    (*self)->fire();
  });
}

void keep_schedule::fire() {
  armed_for_ = clock::time_point::max();
  const auto now = clock::now();
  const auto room = in_flight_ < max_in_flight_ ? max_in_flight_ - in_flight_ : 0;
  std::vector<scheduled_keeper*> due;
  // Only keepers whose latest time is within the longest window of now can
  // have their window open; the earliest latest times go first.
  for (auto it = waiting_.begin();
       it != waiting_.end() && it->wake_at_ <= now + longest_window_ && due.size() < room;) {
    auto* keeper = &*it;
    if (keeper->wake_from_ <= now) {
      it = waiting_.erase(it);
      due.push_back(keeper);
    } else {
      ++it;
    }
  }
  {
    // Keepers may schedule themselves again (or others leave) meanwhile.
    const corked together(pool_);
    firing_ = true;
    for (auto* keeper : due) keeper->on_due(now);
    firing_ = false;
    batch_.flush(pool_, timer_.get_executor());
  }
  // Full: the next round starts when half of these have ended. (Keepers
  // that ran without extending leave room, and the timer goes on.)
  if (in_flight_ > max_in_flight_ / 2 && !closed_) {
    paused_ = true;
    return;
  }
  if (!waiting_.empty() && waiting_.begin()->wake_at_ < armed_for_) arm(waiting_.begin()->wake_at_);
}

}  // namespace redlock::detail
