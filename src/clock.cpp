#include <redlock/clock.hpp>

#include <ctime>

namespace redlock {

clock::time_point clock::now() noexcept {
  timespec ts{};
#ifdef CLOCK_BOOTTIME
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
#else
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
  return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

}  // namespace redlock
