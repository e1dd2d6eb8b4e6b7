#include "detail/keep_fsm.hpp"

#include <redlock/detail/asio.hpp>

#include "detail/quorum_fsm.hpp"

#include <algorithm>

namespace redlock::detail {

clock::duration default_lost_margin(std::chrono::milliseconds ttl, double extend_at,
                                    double drift_factor) {
  // A tenth of the TTL, but at most half the time an extension has to land.
  const auto validity = ttl - drift_allowance(ttl, drift_factor);
  return std::min<clock::duration>(
      ttl / 10, std::chrono::duration_cast<clock::duration>(extend_at * validity / 2));
}

keep_rules keep_rules_of(const keep_options& options, std::chrono::milliseconds lock_ttl,
                         double drift_factor, clock::time_point start) {
  keep_rules rules;
  rules.ttl = options.ttl.count() == 0 ? lock_ttl : options.ttl;
  rules.drift_factor = drift_factor;
  rules.extend_at = options.extend_at;
  const auto shorter = lock_ttl > drift_allowance(lock_ttl, drift_factor)
                           ? std::min(rules.ttl, lock_ttl)
                           : rules.ttl;
  rules.lost_margin = options.lost_margin.count() == 0
                          ? default_lost_margin(shorter, options.extend_at, drift_factor)
                          : clock::duration(options.lost_margin);
  // A cap beyond the clock's range is no cap (and must not overflow).
  if (options.max_hold.count() > 0 &&
      options.max_hold <
          std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - start)) {
    rules.hold_end = start + options.max_hold;
  }
  rules.max_extensions = options.max_extensions;
  rules.retry_delay =
      std::clamp(rules.ttl / 20, std::chrono::milliseconds{1}, std::chrono::milliseconds{500});
  return rules;
}

keep_fsm::keep_fsm(keep_rules rules, clock::time_point deadline)
    : rules_(rules), deadline_(deadline) {}

clock::time_point keep_fsm::signal_at() const noexcept {
  return std::min(deadline_ - rules_.lost_margin, rules_.hold_end);
}

errc keep_fsm::late_reason() const noexcept {
  return capped_ || signal_at() == rules_.hold_end ? errc::hold_limit_reached : errc::lock_expiring;
}

void keep_fsm::lose(errc reason) noexcept {
  if (!reason_) reason_ = reason;
}

void keep_fsm::move_deadline(clock::time_point now, clock::time_point deadline) noexcept {
  // Readers of lost() may already have seen the signal's time pass: a later
  // deadline now would take back what they were told.
  if (now >= signal_at()) return lose(late_reason());
  deadline_ = deadline;
}

void keep_fsm::observe(clock::time_point now, clock::time_point deadline, bool found_lost,
                       bool released) {
  if (finished_) return;
  move_deadline(now, deadline);
  if (found_lost) lose(errc::lock_lost);
  if (released) lose(errc::lock_released);
}

void keep_fsm::on_extended(clock::time_point now, error_code ec, clock::time_point deadline) {
  in_flight_ = false;
  if (finished_) return;
  move_deadline(now, deadline);
  if (!ec) {
    ++extensions_;
    return;
  }
  if (ec == errc::lock_lost) return lose(errc::lock_lost);
  if (ec == errc::lock_released) return lose(errc::lock_released);
  if (ec == errc::lock_expired) return lose(errc::lock_expiring);
  if (ec == boost::asio::error::operation_aborted) return lose(errc::connection_closed);
  // No quorum yet (slow or unreachable nodes, or too late): the old validity
  // holds, so try again while it lasts.
  retry_at_ = now + rules_.retry_delay;
}

keep_action keep_fsm::resume(clock::time_point now, bool may_extend) {
  keep_action action;
  if (finished_) return action;
  if (reason_) {
    finished_ = true;
    action.what = keep_action::kind::signal;
    action.reason = *reason_;
    return action;
  }
  const auto lost_at = signal_at();
  if (now >= lost_at) {
    lose(late_reason());
    return resume(now, may_extend);
  }
  if (!in_flight_ && !capped_) {
    const auto validity = rules_.ttl - drift_allowance(rules_.ttl, rules_.drift_factor);
    const auto planned =
        deadline_ - std::chrono::duration_cast<clock::duration>(rules_.extend_at * validity);
    // A planned extension may run a little early, so that extensions of
    // several locks due at about the same time leave in one write per node.
    const auto lead =
        std::chrono::duration_cast<clock::duration>((1.0 - rules_.extend_at) * validity / 10);
    const auto extend_at = retry_at_.value_or(planned);
    const auto extend_from = retry_at_ ? *retry_at_ : planned - lead;
    if (now < extend_from) {
      action.what = keep_action::kind::wait;
      action.wake_from = std::min(extend_from, lost_at);
      action.wake_at = std::min(extend_at, lost_at);
      return action;
    }
    // Never past max_hold: the last extensions are shortened to end there.
    const auto room = std::chrono::floor<std::chrono::milliseconds>(rules_.hold_end - now);
    const auto ttl = std::min(rules_.ttl, room);
    // Near max_hold an extension gains little; stop once it would gain less
    // than half of what a planned one does.
    const auto least_gain =
        std::chrono::duration_cast<clock::duration>((1.0 - rules_.extend_at) * validity / 2);
    const bool worth_it =
        ttl.count() > 0 && ttl > drift_allowance(ttl, rules_.drift_factor) &&
        now + ttl - drift_allowance(ttl, rules_.drift_factor) > deadline_ + least_gain;
    if (rules_.max_extensions != 0 && extensions_ >= rules_.max_extensions) {
      capped_ = true;
    } else if (!worth_it) {
      capped_ = true;
    } else if (!may_extend) {
      // Due, but other extensions fill the client: wait for room, and for
      // the signal's time at the latest.
      action.what = keep_action::kind::wait;
      action.wake_from = lost_at;
      action.wake_at = lost_at;
      action.wants_room = true;
      return action;
    } else {
      in_flight_ = true;
      retry_at_.reset();
      action.what = keep_action::kind::extend;
      action.ttl = ttl;
      return action;
    }
  }
  action.what = keep_action::kind::wait;
  action.wake_from = lost_at;
  action.wake_at = lost_at;
  return action;
}

}  // namespace redlock::detail
