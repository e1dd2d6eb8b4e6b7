// When a kept lock is extended and when its lost-lock signal fires, driven
// with a fake clock: no sockets.
#include "detail/keep_fsm.hpp"
#include "machine_printing.hpp"

#include "detail/quorum_fsm.hpp"

#include <redlock/detail/asio.hpp>

#include <catch2/catch.hpp>

// Named, so that a unity build can merge this file with the other tests.
namespace keep_fsm_test {

using namespace std::chrono_literals;
using redlock::clock;
using redlock::errc;
using redlock::keep_options;
using redlock::detail::keep_action;
using redlock::detail::keep_fsm;
using redlock::detail::keep_rules;
using kind = keep_action::kind;

namespace {

const clock::time_point t0{std::chrono::seconds(1000)};
constexpr auto ttl = 1000ms;
// ttl * 0.01 + 2 ms
constexpr auto drift = 12ms;
constexpr auto validity = ttl - drift;

keep_rules rules_of(const keep_options& options = {}) {
  return redlock::detail::keep_rules_of(options, ttl, 0.01, t0);
}

/// The lock as acquired at t0.
clock::time_point acquired_deadline() { return t0 + validity; }

/// Lands an extension started at `sent` with the rules' TTL.
void land(keep_fsm& fsm, clock::time_point sent, clock::time_point now) {
  fsm.on_extended(now, {}, sent + ttl - drift);
}

}  // namespace

TEST_CASE("keep rules: defaults fill in from the lock", "[unit][keep]") {
  const auto rules = rules_of();
  CHECK(rules.ttl == ttl);
  CHECK(rules.lost_margin == 100ms);
  CHECK(rules.retry_delay == 50ms);
  CHECK(rules.hold_end == clock::time_point::max());
  keep_options capped;
  capped.max_hold = 5s;
  capped.ttl = 2s;
  capped.lost_margin = 30ms;
  const auto custom = rules_of(capped);
  CHECK(custom.hold_end == t0 + 5s);
  CHECK(custom.ttl == 2s);
  CHECK(custom.lost_margin == 30ms);
}

TEST_CASE("keep: extends when a third of the validity is left, a little early at most",
          "[unit][keep]") {
  keep_fsm fsm(rules_of(), acquired_deadline());
  const auto planned =
      acquired_deadline() - std::chrono::duration_cast<clock::duration>(validity / 3.0);
  auto first = fsm.resume(t0);
  REQUIRE(first.what == kind::wait);
  CHECK(first.wake_at == planned);
  CHECK(first.wake_from < planned);
  CHECK(first.wake_from >= planned - validity / 10);
  // Before the window opens: still waiting.
  CHECK(fsm.resume(first.wake_from - 1ms).what == kind::wait);
  auto extend = fsm.resume(first.wake_from);
  REQUIRE(extend.what == kind::extend);
  CHECK(extend.ttl == ttl);
  CHECK(fsm.extending());
  // While it is in flight, only the signal's time is watched.
  auto in_flight = fsm.resume(first.wake_from + 1ms);
  REQUIRE(in_flight.what == kind::wait);
  CHECK(in_flight.wake_at == acquired_deadline() - 100ms);
  land(fsm, first.wake_from, first.wake_from + 5ms);
  CHECK(fsm.extensions() == 1);
  auto next = fsm.resume(first.wake_from + 5ms);
  REQUIRE(next.what == kind::wait);
  CHECK(next.wake_at == first.wake_from + ttl - drift -
                            std::chrono::duration_cast<clock::duration>(validity / 3.0));
}

TEST_CASE("keep: a lock kept through many TTLs never reaches its signal time", "[unit][keep]") {
  keep_fsm fsm(rules_of(), acquired_deadline());
  auto now = t0;
  for (int i = 0; i < 50; ++i) {
    auto action = fsm.resume(now);
    REQUIRE(action.what == kind::wait);
    now = action.wake_at;
    REQUIRE(fsm.resume(now).what == kind::extend);
    land(fsm, now, now + 20ms);
    now += 20ms;
    CHECK(now < fsm.signal_at());
  }
  CHECK(fsm.extensions() == 50);
  CHECK(now > t0 + 30s);
}

TEST_CASE(
    "keep: a failed extension is retried while time is left, then the signal fires "
    "lost_margin before the validity ends",
    "[unit][keep]") {
  keep_fsm fsm(rules_of(), acquired_deadline());
  auto now = fsm.resume(t0).wake_at;
  REQUIRE(fsm.resume(now).what == kind::extend);
  fsm.on_extended(now + 50ms, errc::quorum_unreachable, acquired_deadline());
  now += 50ms;
  auto retry = fsm.resume(now);
  REQUIRE(retry.what == kind::wait);
  CHECK(retry.wake_from == now + 50ms);
  CHECK(retry.wake_at == now + 50ms);
  int attempts = 1;
  for (;;) {
    auto action = fsm.resume(now);
    if (action.what == kind::signal) {
      CHECK(action.reason == errc::lock_expiring);
      break;
    }
    if (action.what == kind::extend) {
      ++attempts;
      fsm.on_extended(now, errc::node_timeout, acquired_deadline());
      continue;
    }
    REQUIRE(action.what == kind::wait);
    CHECK(action.wake_at <= acquired_deadline() - 100ms);
    now = action.wake_at;
  }
  CHECK(attempts > 3);
  // Exactly at deadline - margin, never later.
  CHECK(now == acquired_deadline() - 100ms);
  CHECK(fsm.resume(now + 1s).what == kind::finished);
}

TEST_CASE("keep: an extension still in flight at the signal time does not delay the signal",
          "[unit][keep]") {
  keep_fsm fsm(rules_of(), acquired_deadline());
  auto now = fsm.resume(t0).wake_at;
  REQUIRE(fsm.resume(now).what == kind::extend);
  CHECK(fsm.resume(acquired_deadline() - 101ms).what == kind::wait);
  auto signal = fsm.resume(acquired_deadline() - 100ms);
  REQUIRE(signal.what == kind::signal);
  CHECK(signal.reason == errc::lock_expiring);
  // Landing afterwards changes nothing: the signal fired once.
  land(fsm, now, acquired_deadline() - 50ms);
  CHECK(fsm.resume(acquired_deadline() - 50ms).what == kind::finished);
}

TEST_CASE("keep: an extension that finds the lock lost signals lock_lost at once", "[unit][keep]") {
  keep_fsm fsm(rules_of(), acquired_deadline());
  auto now = fsm.resume(t0).wake_at;
  REQUIRE(fsm.resume(now).what == kind::extend);
  fsm.on_extended(now + 3ms, errc::lock_lost, now + 3ms);
  auto signal = fsm.resume(now + 3ms);
  REQUIRE(signal.what == kind::signal);
  CHECK(signal.reason == errc::lock_lost);
  CHECK(fsm.resume(now + 4ms).what == kind::finished);
}

TEST_CASE("keep: the handle's state is seen before each event", "[unit][keep]") {
  SECTION("released through another copy") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    fsm.observe(t0, acquired_deadline(), false, true);
    auto signal = fsm.resume(t0 + 1ms);
    REQUIRE(signal.what == kind::signal);
    CHECK(signal.reason == errc::lock_released);
  }
  SECTION("found lost by another extend") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    fsm.observe(t0 + 1ms, t0 + 1ms, true, false);
    CHECK(fsm.resume(t0 + 1ms).reason == errc::lock_lost);
  }
  SECTION("extended by hand: the plan follows the later validity") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    const auto later = acquired_deadline() + 400ms;
    fsm.observe(t0, later, false, false);
    auto action = fsm.resume(t0 + 1ms);
    REQUIRE(action.what == kind::wait);
    CHECK(action.wake_at == later - std::chrono::duration_cast<clock::duration>(validity / 3.0));
  }
  SECTION("past its validity already") {
    keep_fsm fsm(rules_of(), t0 - 1ms);
    CHECK(fsm.resume(t0).reason == errc::lock_expiring);
  }
}

TEST_CASE("keep: once the signal's time has come, nothing that lands later takes it back",
          "[unit][keep]") {
  const auto signal_time = acquired_deadline() - 100ms;
  SECTION("an extension that lands after the signal's time") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    auto sent = fsm.resume(t0).wake_at;
    REQUIRE(fsm.resume(sent).what == kind::extend);
    // Readers of lost() saw the time pass while the strand was held up;
    // the extension's reply is handled first when it runs again.
    land(fsm, sent, signal_time + 5ms);
    auto signal = fsm.resume(signal_time + 5ms);
    REQUIRE(signal.what == kind::signal);
    CHECK(signal.reason == errc::lock_expiring);
  }
  SECTION("an extension through another copy seen after the signal's time") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    fsm.observe(signal_time, acquired_deadline() + 500ms, false, false);
    CHECK(fsm.resume(signal_time).reason == errc::lock_expiring);
  }
  SECTION("the time seen to pass by another thread, then a later deadline") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    auto sent = fsm.resume(t0).wake_at;
    REQUIRE(fsm.resume(sent).what == kind::extend);
    land(fsm, sent, sent + 1ms);
    // The owner saw the old signal time pass before it published the new one.
    fsm.due_seen();
    CHECK(fsm.resume(sent + 2ms).reason == errc::lock_expiring);
  }
  SECTION("an extension that lands just before the signal's time still counts") {
    keep_fsm fsm(rules_of(), acquired_deadline());
    auto sent = fsm.resume(t0).wake_at;
    REQUIRE(fsm.resume(sent).what == kind::extend);
    land(fsm, sent, signal_time - 1ms);
    CHECK(fsm.resume(signal_time).what == kind::wait);
    CHECK(fsm.signal_at() == sent + ttl - drift - 100ms);
  }
}

TEST_CASE("keep: an extension TTL longer than the lock's leaves the lock's own margin",
          "[unit][keep]") {
  keep_options longer;
  longer.ttl = 30s;
  const auto rules = rules_of(longer);
  // The lock's 1 s TTL sets the margin, not the 30 s extensions.
  CHECK(rules.lost_margin == 100ms);
  keep_fsm fsm(rules, acquired_deadline());
  // Extends at once (a third of a 30 s validity is more than the lock has),
  // and the signal waits for the lock's own validity minus its margin.
  auto first = fsm.resume(t0);
  REQUIRE(first.what == kind::extend);
  CHECK(first.ttl == 30s);
  CHECK(fsm.signal_at() == acquired_deadline() - 100ms);
  fsm.on_extended(t0 + 2ms, {}, t0 + 30s - 302ms);
  CHECK(fsm.signal_at() == t0 + 30s - 302ms - 100ms);
}

TEST_CASE("keep: stopping ends it without a signal, closing signals connection_closed",
          "[unit][keep]") {
  keep_fsm stopped(rules_of(), acquired_deadline());
  stopped.stop();
  stopped.observe(t0, acquired_deadline(), true, true);
  CHECK(stopped.resume(acquired_deadline()).what == kind::finished);

  keep_fsm closed(rules_of(), acquired_deadline());
  closed.closed();
  CHECK(closed.resume(t0).reason == errc::connection_closed);

  // An extension aborted because the client closed counts the same.
  keep_fsm aborted(rules_of(), acquired_deadline());
  auto now = aborted.resume(t0).wake_at;
  REQUIRE(aborted.resume(now).what == kind::extend);
  aborted.on_extended(now, boost::asio::error::operation_aborted, acquired_deadline());
  CHECK(aborted.resume(now).reason == errc::connection_closed);
}

TEST_CASE("keep: max_extensions caps the extensions, then signals before the validity ends",
          "[unit][keep]") {
  keep_options options;
  options.max_extensions = 2;
  keep_fsm fsm(rules_of(options), acquired_deadline());
  auto now = t0;
  int sent = 0;
  for (;;) {
    auto action = fsm.resume(now);
    if (action.what == kind::signal) {
      CHECK(action.reason == errc::hold_limit_reached);
      break;
    }
    if (action.what == kind::extend) {
      ++sent;
      land(fsm, now, now);
      continue;
    }
    REQUIRE(action.what == kind::wait);
    now = action.wake_at;
  }
  CHECK(sent == 2);
  CHECK(fsm.extensions() == 2);
  CHECK(now == fsm.signal_at());
}

TEST_CASE("keep: max_hold shortens the last extensions and signals by then at the latest",
          "[unit][keep]") {
  keep_options options;
  options.max_hold = 2500ms;
  keep_fsm fsm(rules_of(options), acquired_deadline());
  auto now = t0;
  clock::time_point latest_deadline = acquired_deadline();
  int sent = 0;
  for (;;) {
    auto action = fsm.resume(now);
    if (action.what == kind::signal) {
      CHECK(action.reason == errc::hold_limit_reached);
      break;
    }
    if (action.what == kind::extend) {
      ++sent;
      REQUIRE(sent < 20);
      CHECK(now + action.ttl <= t0 + 2500ms);
      latest_deadline = now + action.ttl - redlock::detail::drift_allowance(action.ttl, 0.01);
      fsm.on_extended(now, {}, latest_deadline);
      continue;
    }
    REQUIRE(action.what == kind::wait);
    now = action.wake_at;
  }
  CHECK(now <= t0 + 2500ms);
  CHECK(now < latest_deadline);
  CHECK(sent >= 2);
}

TEST_CASE("keep options are checked", "[unit][keep][config]") {
  const auto check = [](const keep_options& options) {
    return redlock::validate(options, ttl, 0.01);
  };
  CHECK_FALSE(check({}));
  keep_options bad;
  bad.extend_at = 0.0;
  CHECK(check(bad) == errc::invalid_keep_options);
  bad.extend_at = 1.0;
  CHECK(check(bad) == errc::invalid_keep_options);
  keep_options margin;
  margin.lost_margin = 400ms;  // not below a third of the validity
  CHECK(check(margin) == errc::invalid_keep_options);
  margin.lost_margin = -1ms;
  CHECK(check(margin) == errc::invalid_keep_options);
  keep_options short_ttl;
  short_ttl.ttl = 2ms;  // within the drift allowance
  CHECK(check(short_ttl) == errc::invalid_keep_options);
  keep_options hold;
  hold.max_hold = -1ms;
  CHECK(check(hold) == errc::invalid_keep_options);
  CHECK(redlock::is_invalid_argument(errc::invalid_keep_options));
}

TEST_CASE("keep: a max_hold beyond the clock's range is no cap (no overflow)", "[unit][keep]") {
  keep_options options;
  options.max_hold = std::chrono::milliseconds::max();
  REQUIRE_FALSE(redlock::validate(options, ttl, 0.01));
  keep_fsm fsm(rules_of(options), acquired_deadline());
  CHECK(fsm.resume(t0).what == kind::wait);
  CHECK(fsm.signal_at() == acquired_deadline() - 100ms);
}

TEST_CASE("keep: the default lost_margin fits an early or late extend_at", "[unit][keep]") {
  keep_options late;
  late.extend_at = 0.05;  // a twentieth of the validity left: margin below that
  REQUIRE_FALSE(redlock::validate(late, ttl, 0.01));
  const auto rules = rules_of(late);
  CHECK(rules.lost_margin < std::chrono::duration_cast<clock::duration>(0.05 * validity));
  keep_options storm;
  storm.extend_at = 0.95;  // an extension every 5% of the TTL: refused
  CHECK(redlock::validate(storm, ttl, 0.01) == errc::invalid_keep_options);
}

}  // namespace keep_fsm_test
