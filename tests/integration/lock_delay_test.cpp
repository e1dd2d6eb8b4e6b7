// Lock-delay (lock_options::lock_delay): a lock that lapses without a
// release stays taken for that much longer; a release frees it at once.
#include "test_env.hpp"

#include <redlock/keeper.hpp>

#include <string>
#include <utility>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
using redlock::keeper;

namespace {

/// Single attempts with a TTL of `ttl` and the lock-delay `delay`.
redlock::lock_options delayed(milliseconds ttl, milliseconds delay) {
  auto options = once(ttl);
  options.lock_delay = delay;
  return options;
}

/// Checks that `key`'s PTTL on every node is in (low, high].
void check_pttl(env& e, const std::string& key, long long low, long long high) {
  for (std::size_t i = 0; i < e.admin.size(); ++i) {
    const auto pttl = e.admin[i]->pttl(key);
    INFO("node " << i << ": PTTL " << pttl);
    CHECK(pttl > low);
    CHECK(pttl <= high);
  }
}

/// The node's clock (TIME) in ms.
long long node_now_ms(redlock::test::admin_client& a) {
  const auto time = a.command({"TIME"});
  return std::stoll(time.elements.at(0).text) * 1000 + std::stoll(time.elements.at(1).text) / 1000;
}

/// True when, on every node, `key` still exists and the reentrant hold
/// `token` has passed its own expiry by the node's clock.
bool hold_lapsed_everywhere(env& e, const std::string& key, const std::string& token) {
  for (auto& a : e.admin) {
    const auto field = a->command({"HGET", key, token});
    if (field.text.empty() || std::stoll(field.text) > node_now_ms(*a)) return false;
  }
  return true;
}

/// Fresh nodes have no fencing state: the first fenced acquire waits out
/// max_fenced_ttl while they are seeded. Done here, before any timing.
void seed_fencing(env& e, redlock::client& locks) {
  auto options = once(e.config.max_fenced_ttl);
  options.fenced = true;
  options.retry = redlock::retry_policy::fixed(50ms, 0, 0.0);
  options.wait_timeout = 10s;
  auto seeded = acquire(e.io, locks, "fence-seed", options);
  REQUIRE_FALSE(seeded.ec);
  CHECK(e.release_everywhere(locks, seeded.held).removed >= 2);
  // Every node, not only a quorum: the tests count on every node's keys.
  REQUIRE(poll_until(
      e.io,
      [&] {
        for (auto& a : e.admin) {
          if (a->command({"HEXISTS", "redlock:fencing", "valid"}).integer != 1) {
            auto again = acquire(e.io, locks, "fence-seed", options);
            if (!again.ec) (void)release(e.io, locks, again.held);
            return false;
          }
        }
        return true;
      },
      10s, 50ms));
}

/// A reentrant hold of `owner` with TTL 300 ms and lock-delay 600 ms (fenced
/// if asked) lapses unreleased: its owner must not re-enter it within the
/// delay, and gets it (the keys gone) once the delay has passed. Returns
/// the lapsed acquisition and the new one.
std::pair<redlock::lock, redlock::lock> lapse_and_reenter(env& e, redlock::client& locks,
                                                          bool fenced) {
  const auto key = e.key("job");
  auto options = delayed(300ms, 600ms);
  options.reentrant_owner = "owner-a";
  options.fenced = fenced;
  if (fenced) seed_fencing(e, locks);

  // The keys live 900 ms from the script, which ran after `sent`.
  const auto sent = steady::now();
  auto got = acquire(e.io, locks, "job", options);
  REQUIRE_FALSE(got.ec);
  REQUIRE(poll_until(e.io, [&] { return e.nodes_holding(key) == 3; }));
  check_pttl(e, key, 600, 900);

  // Neither released nor extended: wait out its validity (a short TTL)...
  wait_on_timer(e.io, got.held.remaining_validity() + 5ms);
  REQUIRE_FALSE(got.held.valid());
  // ...and the hold's own expiry on every node, which is its TTL alone.
  CHECK(poll_until(
      e.io, [&] { return hold_lapsed_everywhere(e, key, got.held.token()); }, 200ms, 1ms));

  // Within the delay (the keys still there) nobody gets it, its owner
  // included: a re-entry would hold with the lapsed hold's fence, which its
  // paused holder may still be using.
  if (steady::now() < sent + 700ms) {
    CHECK(e.nodes_holding(key) == 3);
    auto early = acquire(e.io, locks, "job", options);
    INFO(describe_nodes(early.held));
    CHECK(early.ec == errc::not_acquired);
    if (!early.ec && fenced) CHECK(early.held.fence() > got.held.fence());
    auto other = options;
    other.reentrant_owner = "owner-b";
    CHECK(acquire(e.io, locks, "job", other).ec == errc::not_acquired);
  } else {
    WARN("too slow to try within the delay: the refusal was not checked");
  }

  // A waiting acquire of the same owner gets it once the delay has passed.
  auto waiter = options;
  waiter.retry = redlock::retry_policy::fixed(20ms, 500, 0.0);
  waiter.wait_timeout = 5s;
  auto late = acquire(e.io, locks, "job", waiter);
  const auto granted_after = steady::now() - sent;
  INFO(describe_nodes(late.held));
  REQUIRE_FALSE(late.ec);
  CHECK(granted_after >= 890ms);  // 900 ms from a script run after `sent`
  CHECK(granted_after < 900ms + 2s);
  return {std::move(got.held), std::move(late.held)};
}

}  // namespace

TEST_CASE("a reentrant hold that lapses unreleased is refused to its own owner for the delay",
          "[integration][lock-delay][reentrant]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto [lapsed, late] = lapse_and_reenter(e, locks, false);
  CHECK(late.token() != lapsed.token());
  CHECK(e.release_everywhere(locks, late).removed >= 2);
}

TEST_CASE("a fenced reentrant hold that lapsed is not re-entered with its fence within the delay",
          "[integration][lock-delay][reentrant][fencing]") {
  env e(3);
  e.config.max_fenced_ttl = 1s;  // seeded quickly
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto [lapsed, late] = lapse_and_reenter(e, locks, true);
  REQUIRE(lapsed.fenced());
  REQUIRE(late.fenced());
  // A new hold, with a new fence.
  CHECK(late.fence() > lapsed.fence());
  CHECK(e.release_everywhere(locks, late).removed >= 2);
}

TEST_CASE("a reentrant lock with a lock-delay: the release of its last hold frees it at once",
          "[integration][lock-delay][reentrant]") {
  env e(3);
  e.config.max_fenced_ttl = 2s;  // seeded quickly
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client rival(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  warm_up(e.io, rival);
  const auto key = e.key("job");
  auto options = delayed(2s, 5s);
  options.reentrant_owner = "owner-a";
  options.fenced = GENERATE(false, true);
  INFO("fenced " << options.fenced);
  if (options.fenced) seed_fencing(e, locks);

  auto outer = acquire(e.io, locks, "job", options);
  REQUIRE_FALSE(outer.ec);
  auto inner = acquire(e.io, locks, "job", options);
  REQUIRE_FALSE(inner.ec);
  REQUIRE(poll_until(e.io, [&] { return e.nodes_holding(key) == 3; }));

  // The inner release leaves the outer hold: still held, for hold + delay.
  REQUIRE_FALSE(release(e.io, locks, inner.held).ec);
  CHECK(acquire(e.io, rival, "job", once(2s)).ec == errc::not_acquired);
  REQUIRE(poll_until(e.io, [&] {
    for (auto& a : e.admin) {
      if (a->command({"HEXISTS", key, inner.held.token()}).integer != 0) return false;
    }
    return true;
  }));
  check_pttl(e, key, 5000, 7000);

  // The last release deletes the keys: another owner gets it at once.
  CHECK(e.release_everywhere(locks, outer.held).removed >= 2);
  auto next = acquire(e.io, rival, "job", once(2s));
  INFO(describe_nodes(next.held));
  CHECK_FALSE(next.ec);
  CHECK(e.release_everywhere(rival, next.held).removed >= 2);
}

TEST_CASE("a lock that lapses unreleased is refused to others for its lock-delay, then granted",
          "[integration][lock-delay]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client rival(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  warm_up(e.io, rival);
  const auto key = e.key("job");

  // TTL 300 ms, delay 400 ms: the keys live 700 ms from their SET, which
  // came after `sent`.
  const auto sent = steady::now();
  auto got = acquire(e.io, locks, "job", delayed(300ms, 400ms));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  check_pttl(e, key, 400, 700);
  // The validity still counts from the TTL alone.
  CHECK(got.held.validity_deadline() <= redlock::clock::now() + 300ms);

  // Not released: let the validity pass (time passing is the point here).
  wait_on_timer(e.io, got.held.remaining_validity() + 5ms);
  REQUIRE_FALSE(got.held.valid());
  // Past the validity, the keys still hold our token everywhere...
  REQUIRE(e.nodes_holding(key, got.held.token()) == 3);
  // ...but an extend of the lapsed lock fails all the same.
  CHECK(extend(e.io, locks, got.held, 300ms).ec == errc::lock_expired);
  // Nobody else gets it within the delay. The attempt must start well
  // before the keys expire (700 ms after `sent` at the earliest) to prove it.
  if (steady::now() < sent + 500ms) {
    auto early = acquire(e.io, rival, "job", once(300ms));
    INFO(describe_nodes(early.held));
    CHECK(early.ec == errc::not_acquired);
  } else {
    WARN("too slow to try within the delay: the refusal was not checked");
  }

  // A waiting rival gets it once the delay has passed, not before.
  auto waiter = once(300ms);
  waiter.retry = redlock::retry_policy::fixed(20ms, 500, 0.0);
  waiter.wait_timeout = 5s;
  auto late = acquire(e.io, rival, "job", waiter);
  const auto granted_after = steady::now() - sent;
  INFO(describe_nodes(late.held));
  REQUIRE_FALSE(late.ec);
  CHECK(granted_after >= 690ms);  // 700 ms from a SET sent after `sent`
  CHECK(granted_after < 700ms + 2s);
  CHECK(e.release_everywhere(rival, late.held).removed >= 2);
}

TEST_CASE(
    "a delayed lock: keys live TTL + delay (plain, reentrant, adopted), and a release frees it",
    "[integration][lock-delay]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client rival(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  warm_up(e.io, rival);
  const auto key = e.key("job");

  SECTION("plain, extended through an adopted handle") {
    auto got = acquire(e.io, locks, "job", delayed(5s, 5s));
    REQUIRE_FALSE(got.ec);
    REQUIRE(e.key_everywhere(key, got.held.token()));
    check_pttl(e, key, 9000, 10000);
    // An adopted handle adds the delay it is told of to its extensions.
    auto adopted = locks.adopt("job", got.held.token(), delayed(5s, 20s));
    auto extended = extend(e.io, locks, adopted, 5s);
    REQUIRE_FALSE(extended.ec);
    CHECK(extended.held.validity_deadline() <= redlock::clock::now() + 5s);
    CHECK(poll_until(e.io, [&] {
      for (auto& a : e.admin) {
        if (a->pttl(key) <= 20000) return false;
      }
      return true;
    }));
    check_pttl(e, key, 20000, 25000);
    // A clean release frees it at once, delay or not.
    CHECK(e.release_everywhere(locks, got.held).removed >= 2);
  }
  SECTION("reentrant: the key lives TTL + delay, each hold's expiry field the TTL alone") {
    auto options = delayed(5s, 5s);
    options.reentrant_owner = "owner-a";
    auto got = acquire(e.io, locks, "job", options);
    REQUIRE_FALSE(got.ec);
    REQUIRE(poll_until(e.io, [&] { return e.nodes_holding(key) == 3; }));
    check_pttl(e, key, 9000, 10000);
    for (auto& a : e.admin) {
      const auto field = a->command({"HGET", key, got.held.token()});
      INFO("field " << field.text);
      const auto left = std::stoll(field.text) - node_now_ms(*a);
      CHECK(left > 4000);
      CHECK(left <= 5000);
    }
    CHECK(e.release_everywhere(locks, got.held).removed >= 2);
  }

  auto next = acquire(e.io, rival, "job", once(5s));
  INFO(describe_nodes(next.held));
  CHECK_FALSE(next.ec);
  CHECK(e.release_everywhere(rival, next.held).removed >= 2);
}

TEST_CASE("a keeper's extensions keep the keys at TTL + delay, the validity at the TTL",
          "[integration][lock-delay][keep]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("kept");

  auto got = acquire(e.io, locks, "kept", delayed(300ms, 400ms));
  REQUIRE_FALSE(got.ec);
  keeper kept(locks, got.held);
  // Without the delay an extension would set 300 ms; with it, 700 ms.
  for (unsigned n = 1; n <= 3; ++n) {
    REQUIRE(poll_until(
        e.io, [&] { return kept.extensions() >= n; }, 3s, 1ms));
    REQUIRE(poll_until(e.io, [&] {
      for (auto& a : e.admin) {
        if (a->pttl(key) <= 400) return false;
      }
      return true;
    }));
    check_pttl(e, key, 400, 700);
    CHECK(kept.held().validity_deadline() <= redlock::clock::now() + 300ms);
  }
  CHECK_FALSE(kept.lost());
  auto [ec, removed] = run_op<error_code, std::size_t>(
      e.io, [&](auto handler) { kept.async_release(std::move(handler)); });
  CHECK_FALSE(ec);
  CHECK(e.key_nowhere(key));
}

TEST_CASE("an invalid lock-delay is refused with invalid_lock_delay", "[integration][lock-delay]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  for (const auto bad : {-1ms, redlock::max_duration + 1ms}) {
    INFO("lock_delay " << bad.count() << " ms");
    CHECK(acquire(e.io, locks, "job", delayed(1s, bad)).ec == errc::invalid_lock_delay);
    CHECK(code_of([&] { (void)locks.adopt("job", "token", delayed(1s, bad)); }) ==
          errc::invalid_lock_delay);
  }
  CHECK(e.nodes_holding(e.key("job")) == 0);
  // The longest delay is allowed, with the longest TTL too.
  CHECK_FALSE(redlock::validate("job", delayed(redlock::max_duration, redlock::max_duration),
                                locks.config().drift_factor));
}
