// When a kept lock is extended and when its lost-lock signal fires, as a
// state machine without I/O or clock reads: the keeper feeds it the time,
// the lock's current validity and extension results, and does what it
// returns. Tests drive it with a fake clock.
#pragma once

#include <redlock/clock.hpp>
#include <redlock/config.hpp>
#include <redlock/error.hpp>

#include <chrono>
#include <optional>

namespace redlock::detail {

struct keep_rules {
  std::chrono::milliseconds ttl{};  ///< Of each extension.
  double drift_factor = 0.01;
  double extend_at = 1.0 / 3;  ///< Fraction of the validity left when extending.
  clock::duration lost_margin{};
  /// The lock is not held past this (max_hold); max() = no cap.
  clock::time_point hold_end = clock::time_point::max();
  unsigned max_extensions = 0;  ///< 0 = no cap.
  clock::duration retry_delay{};
};

/// lost_margin's default: a tenth of the TTL, at most half of extend_at of
/// the validity.
clock::duration default_lost_margin(std::chrono::milliseconds ttl, double extend_at,
                                    double drift_factor);

/// The rules for these options (defaults filled in) on a lock of TTL
/// `lock_ttl`, kept from `start`. The default lost_margin is that of the
/// shorter of the two TTLs: a margin made for a longer extension TTL would
/// fire the signal before the lock's own validity had room for one.
keep_rules keep_rules_of(const keep_options& options, std::chrono::milliseconds lock_ttl,
                         double drift_factor, clock::time_point start);

struct keep_action {
  enum class kind {
    wait,      ///< Call resume() again at any time in [wake_from, wake_at].
    extend,    ///< Send an extension with `ttl`, report it with on_extended(), resume().
    signal,    ///< Fire the lost-lock signal with `reason` (once); nothing follows.
    finished,  ///< Stopped or signalled: nothing to do, ever.
  };
  kind what = kind::finished;
  clock::time_point wake_from{};
  clock::time_point wake_at{};
  std::chrono::milliseconds ttl{};
  error_code reason{};
  /// wait: an extension is due but resume() was told there was no room;
  /// resume again once there is (or at wake_at, the signal's time).
  bool wants_room = false;
};

class keep_fsm {
 public:
  keep_fsm(keep_rules rules, clock::time_point deadline);

  /// The next thing to do at `now`. `may_extend`: an extension may start
  /// now (the client's keepers have room for one).
  keep_action resume(clock::time_point now, bool may_extend = true);
  /// The extension asked for ended with `ec`; the lock's validity is now
  /// `deadline` (as the handle reads it). Once the signal's time has come,
  /// no later deadline moves it: the signal fires.
  void on_extended(clock::time_point now, error_code ec, clock::time_point deadline);
  /// What the handle says at `now`, before each event: its validity (moved
  /// by any extend of the same lock), whether an extend or release found it
  /// lost, and whether a release began. As for on_extended, a deadline
  /// seen after the signal's time has come does not move it.
  void observe(clock::time_point now, clock::time_point deadline, bool found_lost, bool released);
  /// The signal's time was seen to pass elsewhere (a reader of lost() on
  /// another thread): it fires with late_reason(), whatever lands later.
  void due_seen() noexcept { lose(late_reason()); }
  /// The owner ended the keeping (release, work done): finished, no signal.
  void stop() noexcept { finished_ = true; }
  /// The client closed: signal connection_closed.
  void closed() noexcept { lose(errc::connection_closed); }

  unsigned extensions() const noexcept { return extensions_; }
  bool extending() const noexcept { return in_flight_; }
  /// When the lost-lock signal fires if nothing lands before.
  clock::time_point signal_at() const noexcept;
  /// The reason the signal would give at signal_at().
  errc late_reason() const noexcept;

 private:
  void lose(errc reason) noexcept;
  /// Takes a new validity unless the signal's time has come by `now`.
  void move_deadline(clock::time_point now, clock::time_point deadline) noexcept;

  keep_rules rules_;
  clock::time_point deadline_;
  std::optional<clock::time_point> retry_at_;
  std::optional<errc> reason_;  ///< Set once the loss is known; fired by resume().
  unsigned extensions_ = 0;
  bool in_flight_ = false;
  bool capped_ = false;  ///< No further extension will be made.
  bool finished_ = false;
};

}  // namespace redlock::detail
