// The last line of `redlock exec`'s bound: a thread of its own that sends
// SIGKILL to CMD's process group a margin before the lock's validity ends,
// whatever the io thread is doing (blocked writing to a full stderr pipe,
// starved, or late to deliver the lost-lock signal).
#pragma once

#include <redlock/lock.hpp>

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace redlock::cli {

class kill_watchdog {
 public:
  /// Watches `held` (whose validity moves with each extension and is cut
  /// short when the lock is found lost) for the process group `group`.
  kill_watchdog(lock held, pid_t group, std::chrono::milliseconds margin);
  /// Stops watching (joins the thread).
  ~kill_watchdog();
  kill_watchdog(const kill_watchdog&) = delete;
  kill_watchdog& operator=(const kill_watchdog&) = delete;

  /// Stops watching: the group is gone, or the lock was released with CMD
  /// ended. Idempotent.
  void disarm();

 private:
  void watch();

  lock held_;
  pid_t group_;
  std::chrono::milliseconds margin_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  std::thread thread_;
};

}  // namespace redlock::cli
