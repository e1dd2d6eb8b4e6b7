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
  return now > periodic_window(due, skew, lag).closes;
}

claim_window periodic_window(wall_clock::time_point due, milliseconds skew,
                             milliseconds lag) noexcept {
  return {due, due + skew + lag};
}

claim_window one_shot_window(wall_clock::time_point due, milliseconds skew,
                             milliseconds lag) noexcept {
  return {due - skew, due + skew + lag};
}

std::optional<wall_clock::time_point> due_near(const schedule& when, wall_clock::time_point now,
                                               milliseconds skew, milliseconds lag) {
  // Candidates: due times in [now - skew - lag, now + skew].
  const auto first = first_due(when, now, skew + lag);
  if (first > now + skew) return std::nullopt;
  const auto second = when.next_after(first);
  if (second <= now + skew && second - now < now - first) return second;
  return first;
}

milliseconds claim_ttl(const claim_window& window, milliseconds skew, milliseconds lag,
                       milliseconds lock_ttl, double drift_factor) noexcept {
  const auto spread =
      std::chrono::duration<double, std::milli>(window.closes - window.opens + skew + lag);
  return std::chrono::ceil<milliseconds>(spread * (1.0 + drift_factor)) + lock_ttl;
}

milliseconds claim_lifetime(milliseconds ttl, milliseconds shortest_gap) noexcept {
  return std::min(std::max(ttl, shortest_gap), max_duration);
}

std::string due_id(wall_clock::time_point due) {
  return std::to_string(std::chrono::duration_cast<milliseconds>(due.time_since_epoch()).count());
}

std::string claim_resource(const std::string& name, wall_clock::time_point due) {
  return name + ":due:" + due_id(due);
}

}  // namespace redlock::detail
