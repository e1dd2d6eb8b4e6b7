#include "detail/deadline_queue.hpp"

#include <utility>
#include <vector>

namespace redlock::detail {

deadline_queue::deadline_queue(strand_type strand) : timer_(std::move(strand)) {}

void deadline_queue::arm(deadline& d, clock::time_point at, std::shared_ptr<void> owner) {
  if (d.armed()) armed_.erase(armed_.iterator_to(d));
  ++d.changes_;
  d.at_ = at;
  d.owner_ = std::move(owner);
  armed_.insert(d);
  // A later deadline is found when the timer wakes for an earlier one.
  if (at < waiting_for_) rearm();
}

std::shared_ptr<void> deadline_queue::disarm(deadline& d) noexcept {
  ++d.changes_;
  if (!d.armed()) return std::move(d.owner_);
  armed_.erase(armed_.iterator_to(d));
  // Lazily: the timer wakes once for nothing, unless the client closed and
  // its run() is waiting for the last timer to go.
  if (closed_ && armed_.empty()) {
    waiting_for_ = clock::time_point::max();
    ++wait_;
    timer_.cancel();
  }
  return std::move(d.owner_);
}

void deadline_queue::close() noexcept {
  closed_ = true;
  if (armed_.empty() && timer_waiting()) {
    waiting_for_ = clock::time_point::max();
    ++wait_;
    timer_.cancel();
  }
}

void deadline_queue::abandon() noexcept {
  std::vector<std::shared_ptr<void>> owners;
  owners.reserve(armed_.size());
  while (!armed_.empty()) {
    auto& d = *armed_.begin();
    armed_.erase(armed_.begin());
    owners.push_back(std::move(d.owner_));
  }
  // Destroyed last: an owner may own the deadline just unlinked.
}

void deadline_queue::rearm() {
  if (armed_.empty()) {
    waiting_for_ = clock::time_point::max();
    return;
  }
  const auto at = armed_.begin()->at_;
  if (at == waiting_for_) return;
  waiting_for_ = at;
  const auto wait = ++wait_;
  timer_.expires_at(at);  // cancels the wait for a later time
  timer_.async_wait([this, owner = owner_, wait](error_code ec) {
    if (ec) return;
    // Held for the call: the queue lives as long as its owner.
    const auto held = owner.lock();
    if (!held) return;
    fire(wait);
  });
}

void deadline_queue::fire(std::uint64_t wait) {
  // A handler queued before its timer was re-armed still runs with success.
  if (wait != wait_) return;
  waiting_for_ = clock::time_point::max();
  const auto now = clock::now();
  // Taken out first: one that runs may arm or disarm the others (and a
  // deadline armed meanwhile for no later than now waits for the next wake).
  struct due {
    deadline* what;
    std::uint64_t changes;
    std::shared_ptr<void> owner;
  };
  std::vector<due> expired;
  while (!armed_.empty() && armed_.begin()->at_ <= now) {
    auto& d = *armed_.begin();
    armed_.erase(armed_.begin());
    expired.push_back({&d, d.changes_, std::move(d.owner_)});
  }
  std::size_t next = 0;
  try {
    for (; next < expired.size(); ++next) {
      auto& [what, changes, owner] = expired[next];
      // Armed again or disarmed by one that ran before it: not due any more.
      if (what->changes_ == changes) what->on_deadline();
    }
  } catch (...) {
    // A completion handler threw out of run(): the deadlines not yet run
    // stay armed (due, so on the next wake), and the timer waits again.
    for (++next; next < expired.size(); ++next) {
      auto& [what, changes, owner] = expired[next];
      if (what->changes_ != changes || what->armed()) continue;
      what->owner_ = std::move(owner);
      armed_.insert(*what);
    }
    rearm();
    throw;
  }
  rearm();
}

}  // namespace redlock::detail
