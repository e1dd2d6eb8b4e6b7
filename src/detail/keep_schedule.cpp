#include "detail/keep_schedule.hpp"

#include "detail/node_pool.hpp"

#include <algorithm>
#include <vector>

namespace redlock::detail {

void shortest_round_trip::observe(clock::duration round_trip, clock::time_point now) noexcept {
  if (now >= window_end_) {
    previous_ = current_;
    current_ = clock::duration::max();
    window_end_ = now + window;
  }
  current_ = std::min(current_, round_trip);
}

clock::duration shortest_round_trip::estimate() const noexcept {
  const auto least = std::min(current_, previous_);
  return least == clock::duration::max() ? clock::duration::zero() : least;
}

std::size_t in_flight_limit(std::size_t base, clock::duration shortest) noexcept {
  constexpr clock::duration step = std::chrono::milliseconds(10);
  const auto steps = std::clamp<clock::rep>((shortest + step - clock::duration(1)) / step, 1, 32);
  return base * static_cast<std::size_t>(steps);
}

keep_schedule::keep_schedule(strand_type strand, node_pool& pool, std::size_t max_in_flight)
    : timer_(std::move(strand)),
      pool_(pool),
      max_in_flight_(std::max<std::size_t>(max_in_flight, 1)) {
  batch_.report_round_trips([alive = std::weak_ptr<keep_schedule*>(alive_)](clock::duration d) {
    if (auto self = alive.lock()) (*self)->trips_.observe(d, clock::now());
  });
}

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
  if (keeper.line_hook_.is_linked()) line_.erase(line_.iterator_to(keeper));
  if (!keeper.hook_.is_linked()) return;
  waiting_.erase(waiting_.iterator_to(keeper));
  // Otherwise the timer may stay armed for it: firing with nobody due costs
  // a wake-up. With nobody left it must not keep the executor busy.
  if (waiting_.empty() && line_.empty() && armed_for_ != clock::time_point::max()) {
    armed_for_ = clock::time_point::max();
    timer_.cancel();
  }
}

void keep_schedule::wait_for_room(scheduled_keeper& keeper) {
  if (closed_ || keeper.line_hook_.is_linked()) return;
  line_.push_back(keeper);
  // Room may have come back already (keepers that ran without extending).
  if (has_room() && !firing_) arm(clock::now());
}

void keep_schedule::extension_ended() {
  if (in_flight_ > 0) --in_flight_;
  if (closed_ || line_.empty() || in_flight_ > limit() / 2) return;
  // Through the timer, not from here: this runs inside an extension's
  // completion.
  const auto now = clock::now();
  if (now < armed_for_) arm(now);
}

void keep_schedule::close() noexcept {
  closed_ = true;
  line_.clear();
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
  std::vector<scheduled_keeper*> due;
  // First the line, as far as there is room: they were due before.
  const auto room = has_room() ? limit() - in_flight_ : 0;
  while (!line_.empty() && due.size() < room) {
    auto& keeper = line_.front();
    line_.pop_front();
    if (keeper.hook_.is_linked()) waiting_.erase(waiting_.iterator_to(keeper));
    due.push_back(&keeper);
  }
  const auto from_line = due.size();
  // Then every keeper whose window is open, room or not: one that wants to
  // extend and finds none joins the line, and its signal never waits. Only
  // keepers whose latest time is within the longest window of now can have
  // their window open.
  for (auto it = waiting_.begin(); it != waiting_.end() && it->wake_at_ <= now + longest_window_;) {
    auto* keeper = &*it;
    if (keeper->wake_from_ <= now) {
      it = waiting_.erase(it);
      if (keeper->line_hook_.is_linked()) line_.erase(line_.iterator_to(*keeper));
      due.push_back(keeper);
    } else {
      ++it;
    }
  }
  {
    // Keepers may schedule themselves again (or others leave) meanwhile.
    const corked together(pool_);
    firing_ = true;
    std::size_t next = 0;
    try {
      for (; next < due.size(); ++next) due[next]->on_due(now);
    } catch (...) {
      // A completion handler threw out of run(): the keepers not yet run go
      // back on the schedule, to run on the next wake, and the extensions
      // that joined the batch go out. Otherwise they would never extend,
      // nor signal.
      const auto line_front = line_.begin();
      for (++next; next < due.size(); ++next) {
        auto& keeper = *due[next];
        if (!keeper.hook_.is_linked()) waiting_.insert(keeper);
        // Those from the line take their places in it again, first.
        if (next < from_line && !keeper.line_hook_.is_linked()) line_.insert(line_front, keeper);
      }
      firing_ = false;
      batch_.flush(pool_, timer_.get_executor());
      if (!closed_) arm(now);
      throw;
    }
    firing_ = false;
    batch_.flush(pool_, timer_.get_executor());
  }
  if (closed_) return;
  // Room left and someone in line (keepers that ran without extending):
  // again at once. Otherwise the line waits for extensions to end.
  if (!line_.empty() && in_flight_ <= limit() / 2) return arm(now);
  if (!waiting_.empty() && waiting_.begin()->wake_at_ < armed_for_) arm(waiting_.begin()->wake_at_);
}

}  // namespace redlock::detail
