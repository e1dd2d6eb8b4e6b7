// Delays between lock attempts and between reconnects: pure functions of the
// policy, the count of failures and a random number, so tests need no clock.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/config.hpp>

#include <optional>

namespace redlock::detail {

/// `nominal` scaled by a factor in [1 - jitter, 1 + jitter] picked by
/// `unit_random` in [0, 1).
clock::duration jittered(clock::duration nominal, double jitter, double unit_random) noexcept;

/// base * 2^(failures-1), capped; failures >= 1.
clock::duration capped_exponential(clock::duration base, clock::duration cap,
                                   unsigned failures) noexcept;

/// The pause after `failures` failed lock attempts.
clock::duration retry_delay(const retry_policy& policy, unsigned failures,
                            double unit_random) noexcept;

/// The pause before reconnect number `failures` (>= 1).
clock::duration reconnect_delay(const reconnect_policy& policy, unsigned failures,
                                double unit_random) noexcept;

/// When the next lock attempt may start after `attempts_made` failed ones,
/// or nothing if the policy's attempts or the caller's deadline are used up.
/// An unset max_attempts counts as retry_policy::default_max_attempts (the
/// acquire settles it first: see effective_max_attempts).
std::optional<clock::time_point> next_attempt_at(const retry_policy& policy, unsigned attempts_made,
                                                 clock::time_point now,
                                                 clock::time_point wait_deadline,
                                                 double unit_random) noexcept;

}  // namespace redlock::detail
