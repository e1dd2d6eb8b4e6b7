// The clock every lock deadline is measured with.
#pragma once

#include <chrono>

namespace redlock {

/// A monotonic clock that keeps counting while the process or the whole
/// machine is suspended (CLOCK_BOOTTIME on Linux). A lock's validity runs
/// out in Redis during a suspend, so ours must too; steady_clock would stop.
/// Never wall-clock time, which can jump.
struct clock {
  using duration = std::chrono::nanoseconds;          ///< Nanoseconds.
  using rep = duration::rep;                          ///< As std::chrono requires.
  using period = duration::period;                    ///< As std::chrono requires.
  using time_point = std::chrono::time_point<clock>;  ///< A point on this clock.
  static constexpr bool is_steady = true;             ///< It never goes back.

  /// CLOCK_BOOTTIME now.
  static time_point now() noexcept;
};

}  // namespace redlock
