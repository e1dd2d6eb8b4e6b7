// The clock every lock deadline is measured with.
#pragma once

#include <chrono>

namespace redlock {

/// A monotonic clock that keeps counting while the process or the whole
/// machine is suspended (CLOCK_BOOTTIME on Linux). A lock's validity runs
/// out in Redis during a suspend, so ours must too; steady_clock would stop.
/// Never wall-clock time, which can jump.
struct clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<clock>;
  static constexpr bool is_steady = true;

  static time_point now() noexcept;
};

}  // namespace redlock
