// When `redlock exec` warns CMD of a loss and when it kills it, so that CMD's
// process group is dead before the lock's validity ends: pure arithmetic on
// the options, unit-tested without a clock.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <variant>

namespace redlock::cli {

struct exec_timing {
  /// SIGTERM to SIGKILL.
  std::chrono::milliseconds grace{};
  /// SIGKILL comes at least this long before the validity ends (a tenth of
  /// the validity, at least 20 ms): room for the timer's lateness and the
  /// kill itself.
  std::chrono::milliseconds kill_margin{};
  /// keep_options::lost_margin: the signal (SIGTERM) fires this long before
  /// the validity ends, so that grace + kill_margin fit before it.
  std::chrono::milliseconds lost_margin{};
  /// keep_options::extend_at: extensions start early enough to land before
  /// the signal's time.
  double extend_at = 1.0 / 3;
};

/// The default --grace: 5 s, or a quarter of the TTL when less.
std::chrono::milliseconds default_grace(std::chrono::milliseconds ttl, double drift_factor);

/// The timing for `--ttl ttl` and `--grace grace` (default_grace when
/// unset), or the usage error (naming both values) when the grace cannot
/// fit in the TTL.
std::variant<exec_timing, std::string> plan_exec_timing(
    std::chrono::milliseconds ttl, std::optional<std::chrono::milliseconds> grace,
    double drift_factor);

}  // namespace redlock::cli
