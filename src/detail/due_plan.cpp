#include "detail/due_plan.hpp"

#include <string>

namespace redlock::detail {

wall_clock::time_point first_due(const schedule& when, wall_clock::time_point now,
                                 milliseconds skew) {
  // next_after is strict: one tick earlier includes a due time exactly
  // `skew` ago.
  return when.next_after(now - skew - wall_clock::duration(1));
}

bool missed(wall_clock::time_point due, wall_clock::time_point now, milliseconds skew,
            milliseconds lag) noexcept {
  return now > due + skew + lag;
}

milliseconds claim_ttl(milliseconds skew, milliseconds lag, milliseconds lock_ttl,
                       double drift_factor) noexcept {
  const auto spread = std::chrono::duration<double, std::milli>(2 * (skew + lag));
  return std::chrono::ceil<milliseconds>(spread * (1.0 + drift_factor)) + lock_ttl;
}

std::string due_id(wall_clock::time_point due) {
  return std::to_string(std::chrono::duration_cast<milliseconds>(due.time_since_epoch()).count());
}

}  // namespace redlock::detail
