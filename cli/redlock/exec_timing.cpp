#include "exec_timing.hpp"

#include "args/duration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace redlock::cli {

using std::chrono::milliseconds;

namespace {

/// The lock's validity right after an acquire or extension with `ttl`
/// (client_config::drift_factor: drift = ttl * factor + 2 ms).
milliseconds validity_of(milliseconds ttl, double drift_factor) {
  const auto drift = milliseconds(static_cast<long long>(
                         std::ceil(static_cast<double>(ttl.count()) * drift_factor))) +
                     milliseconds{2};
  return ttl - drift;
}

/// The signal, grace included, may take at most this share of the validity:
/// the rest is for the extensions that keep the lock.
constexpr double max_share = 0.8;
/// The least share of the validity between the start of the extensions and
/// the signal's time, for retries.
constexpr double extension_room = 0.1;
constexpr milliseconds min_kill_margin{20};

}  // namespace

milliseconds default_grace(milliseconds ttl, double /*drift_factor*/) {
  return std::clamp(ttl / 4, milliseconds{0}, milliseconds{5000});
}

std::variant<exec_timing, std::string> plan_exec_timing(milliseconds ttl,
                                                        std::optional<milliseconds> grace,
                                                        double drift_factor) {
  const auto validity = validity_of(ttl, drift_factor);
  if (validity <= milliseconds{0}) {
    return fmt::format("--ttl {} leaves no validity after the drift allowance",
                       args::format_duration(ttl));
  }
  exec_timing timing;
  // At least 20 ms: ordinary scheduling delays must not push SIGKILL past
  // the validity of a short TTL.
  timing.kill_margin = std::max(validity / 10, min_kill_margin);
  const auto most =
      std::chrono::duration_cast<milliseconds>(max_share * validity) - timing.kill_margin;
  if (most < milliseconds{0}) {
    return fmt::format(
        "--ttl {} is too short for exec: CMD could not be killed {} before the lock's validity "
        "ends",
        args::format_duration(ttl), args::format_duration(min_kill_margin));
  }
  timing.grace = grace.value_or(std::min(default_grace(ttl, drift_factor), most));
  if (timing.grace < milliseconds{0} || timing.grace > most) {
    return fmt::format(
        "--grace {} does not fit in --ttl {}: CMD must be dead before the lock's validity ends, "
        "so the grace can be at most {} with this TTL (raise --ttl or lower --grace)",
        args::format_duration(timing.grace), args::format_duration(ttl),
        args::format_duration(std::max(most, milliseconds{0})));
  }
  timing.lost_margin = timing.grace + timing.kill_margin;
  const double share =
      static_cast<double>(timing.lost_margin.count()) / static_cast<double>(validity.count());
  timing.extend_at = std::max(1.0 / 3, share + extension_room);
  return timing;
}

}  // namespace redlock::cli
