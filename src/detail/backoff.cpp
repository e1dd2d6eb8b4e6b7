#include "detail/backoff.hpp"

#include <algorithm>
#include <cmath>

namespace redlock::detail {

clock::duration jittered(clock::duration nominal, double jitter, double unit_random) noexcept {
  const double factor = 1.0 + jitter * (2.0 * unit_random - 1.0);
  const auto scaled =
      static_cast<clock::rep>(std::llround(static_cast<double>(nominal.count()) * factor));
  return clock::duration(std::max<clock::rep>(scaled, 0));
}

clock::duration capped_exponential(clock::duration base, clock::duration cap,
                                   unsigned failures) noexcept {
  auto delay = base;
  for (unsigned i = 1; i < failures && delay < cap; ++i) delay *= 2;
  return std::min(delay, cap);
}

clock::duration retry_delay(const retry_policy& policy, unsigned failures,
                            double unit_random) noexcept {
  const clock::duration base = policy.base_delay;
  const auto nominal = policy.mode == retry_policy::backoff::fixed
                           ? base
                           : capped_exponential(base, policy.max_delay, failures);
  return jittered(nominal, policy.jitter, unit_random);
}

clock::duration reconnect_delay(const reconnect_policy& policy, unsigned failures,
                                double unit_random) noexcept {
  return jittered(capped_exponential(policy.initial_delay, policy.max_delay, failures),
                  policy.jitter, unit_random);
}

std::optional<clock::time_point> next_attempt_at(const retry_policy& policy, unsigned attempts_made,
                                                 clock::time_point now,
                                                 clock::time_point wait_deadline,
                                                 double unit_random) noexcept {
  const auto limit = policy.max_attempts.value_or(retry_policy::default_max_attempts);
  if (limit != 0 && attempts_made >= limit) return std::nullopt;
  const auto at = now + retry_delay(policy, attempts_made, unit_random);
  if (at >= wait_deadline) return std::nullopt;
  return at;
}

}  // namespace redlock::detail
