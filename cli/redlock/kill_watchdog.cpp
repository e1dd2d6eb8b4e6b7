#include "kill_watchdog.hpp"

#include <algorithm>
#include <csignal>

namespace redlock::cli {

kill_watchdog::kill_watchdog(lock held, pid_t group, std::chrono::milliseconds margin)
    : held_(std::move(held)), group_(group), margin_(margin), thread_([this] { watch(); }) {}

kill_watchdog::~kill_watchdog() {
  disarm();
  if (thread_.joinable()) thread_.join();
}

void kill_watchdog::disarm() {
  {
    const std::lock_guard guard(mutex_);
    disarmed_ = true;
  }
  wake_.notify_all();
}

void kill_watchdog::watch() {
  std::unique_lock guard(mutex_);
  while (!disarmed_) {
    const auto kill_at = held_.validity_deadline() - margin_;
    const auto left = kill_at - redlock::clock::now();
    if (left <= redlock::clock::duration::zero()) {
      // The group id is not reused while it has members; with none, this fails.
      ::kill(-group_, SIGKILL);
      return;
    }
    // Re-read often: an extension moves the deadline later, a loss found
    // by the nodes cuts it to now.
    wake_.wait_for(guard, std::min<redlock::clock::duration>(left, std::chrono::milliseconds{20}));
  }
}

}  // namespace redlock::cli
