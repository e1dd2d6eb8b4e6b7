// Reentrant locks (lock_options::reentrant_owner): the same owner id may
// acquire a lock it holds; each acquisition is a token field of a hash on
// the nodes, so the hold count is kept there, under quorum, and each
// release or undo removes only its own hold.
#include "test_env.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

namespace redlock::itest {
namespace {

lock_options owned_by(std::string owner, milliseconds ttl = 10s) {
  auto options = once(ttl);
  options.reentrant_owner = std::move(owner);
  return options;
}

// The acquisition tokens node `a` holds for `key`, or -1 when the key is not
// a reentrant lock of `owner` there.
long long holds_on(test::admin_client& a, const std::string& key, const std::string& owner) {
  const auto kind = a.command({"TYPE", key});
  if (kind.text == "none") return 0;
  if (kind.text != "hash" || a.command({"HGET", key, "owner"}).text != owner) return -1;
  const auto fields = a.command({"HKEYS", key});
  return std::count_if(fields.elements.begin(), fields.elements.end(), [](const auto& field) {
    return field.text != "owner" && field.text != "released";
  });
}

}  // namespace
}  // namespace redlock::itest

TEST_CASE("the same owner re-enters its lock and others are refused until the last release",
          "[integration][reentrant]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client other(e.io.get_executor(), e.config);
  const auto key = e.key("account:7");

  auto outer = acquire(e.io, locks, "account:7", owned_by("worker-1"));
  REQUIRE_FALSE(outer.ec);
  CHECK(outer.held.reentrant_owner() == "worker-1");
  auto inner = acquire(e.io, other, "account:7", owned_by("worker-1"));  // any client, same owner
  INFO(describe_nodes(inner.held));
  REQUIRE_FALSE(inner.ec);
  CHECK(inner.held.token() != outer.held.token());
  for (auto& a : e.admin)
    CHECK(poll_until(e.io, [&] { return holds_on(*a, key, "worker-1") == 2; }));

  // Another owner, and a plain lock (ours or any Redlock client's), are refused.
  CHECK(acquire(e.io, other, "account:7", owned_by("worker-2")).ec == errc::not_acquired);
  CHECK(acquire(e.io, other, "account:7", once()).ec == errc::not_acquired);
  CHECK_FALSE(foreign_set_nx(*e.admin[0], key, "x"));

  // The inner release leaves the outer hold; the outer one frees the resource.
  const auto first = release(e.io, other, inner.held);
  CHECK_FALSE(first.ec);
  CHECK(first.removed >= 3);
  for (auto& a : e.admin)
    CHECK(poll_until(e.io, [&] { return holds_on(*a, key, "worker-1") == 1; }));
  CHECK(outer.held.valid());
  CHECK(acquire(e.io, other, "account:7", owned_by("worker-2")).ec == errc::not_acquired);

  // Extending one acquisition extends the key; a shorter extend never
  // shortens it.
  auto extended = extend(e.io, locks, outer.held, 30s);
  REQUIRE_FALSE(extended.ec);
  CHECK(poll_until(e.io, [&] { return e.admin[4]->pttl(key) > 20000; }));
  const auto shorter = extend(e.io, locks, outer.held, 2s);
  REQUIRE_FALSE(shorter.ec);
  for (std::size_t i = 0; i < 5; ++i) {
    // Where the short extend has run, the key kept its longer expiry.
    if (shorter.held.nodes()[i].state == status::acquired) CHECK(e.admin[i]->pttl(key) > 20000);
  }

  CHECK(release(e.io, locks, outer.held).removed >= 3);
  CHECK(e.key_nowhere(key));
  auto next = acquire(e.io, other, "account:7", owned_by("worker-2"));
  CHECK_FALSE(next.ec);
}

TEST_CASE(
    "a plain lock's key refuses a reentrant acquire, and plain extend and release find a "
    "reentrant hash not theirs",
    "[integration][reentrant]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("mixed");

  auto plain = acquire(e.io, locks, "mixed", once());
  REQUIRE_FALSE(plain.ec);
  REQUIRE(e.key_everywhere(key, plain.held.token()));
  CHECK(acquire(e.io, locks, "mixed", owned_by("w")).ec == errc::not_acquired);
  // Refused at a quorum: its script must have run on every node before the
  // hash below replaces our key (there it would be granted, a hold of w).
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return script_calls(*a) >= 1; }));

  // Our plain key lapsed and a reentrant owner took the resource on every
  // node: the plain scripts read a hash, which is simply not ours (not a
  // server error).
  for (auto& a : e.admin) {
    a->command({"DEL", key});
    a->command({"HSET", key, "owner", "w", "sometoken", "1"});
  }
  auto extended = extend(e.io, locks, plain.held, 10s);
  INFO(describe_nodes(extended.held));
  CHECK(extended.ec == errc::lock_lost);
  CHECK(release(e.io, locks, plain.held).ec == errc::lock_lost);
  for (auto& a : e.admin) CHECK(holds_on(*a, key, "w") == 1);
}

// A failed attempt is undone where it may have landed. With a counter
// instead of per-acquisition fields, the undo could not tell whether its
// increment had landed, and would take the outer hold with it.
TEST_CASE("undoing a failed reentrant attempt removes only that attempt's hold",
          "[integration][reentrant]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("nested");

  auto outer = acquire(e.io, locks, "nested", owned_by("w", 20s));
  REQUIRE_FALSE(outer.ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return holds_on(*a, key, "w") == 1; }));

  // Three nodes frozen: the attempt reaches two, times out, and is undone
  // everywhere (the frozen nodes run its script and then the undo).
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).pause();
  auto inner = acquire(e.io, locks, "nested", owned_by("w", 20s));
  CHECK(inner.ec == errc::quorum_unreachable);
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).resume();

  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(poll_until(
        e.io,
        [&] {
          return holds_on(*e.admin[i], key, "w") == 1 &&
                 e.admin[i]->command({"HEXISTS", key, outer.held.token()}).integer == 1;
        },
        8s));
  }
  CHECK(e.release_everywhere(locks, outer.held).removed >= 3);
}

// A node restarted without persistence forgets the key. The owner's next
// acquisition is granted there afresh, so the nodes disagree on the count:
// the restarted node holds only the new acquisition. Each release removes
// its own token field, so the lock stays held on a quorum until the last
// acquisition held on a quorum is released.
TEST_CASE("reentrant holds under quorum with a node restarted between acquisitions",
          "[integration][reentrant]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client other(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("counted");

  auto first = acquire(e.io, locks, "counted", owned_by("w"));
  REQUIRE_FALSE(first.ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return holds_on(*a, key, "w") == 1; }));

  e.nodes.node(0).restart();
  e.admin[0]->reconnect();
  REQUIRE(holds_on(*e.admin[0], key, "w") == 0);

  // The client reconnects to node 0 with backoff: acquire again until the
  // second acquisition landed there too (each try is one more hold).
  redlock::lock second;
  const auto deadline = steady::now() + 10s;
  while (second.empty() || second.nodes()[0].state != status::acquired) {
    REQUIRE(steady::now() < deadline);
    if (!second.empty()) REQUIRE(release(e.io, locks, second).removed >= 2);
    auto got = acquire(e.io, locks, "counted", owned_by("w"));
    REQUIRE_FALSE(got.ec);
    second = got.held;
  }
  CHECK(holds_on(*e.admin[0], key, "w") == 1);
  CHECK(poll_until(e.io, [&] { return holds_on(*e.admin[1], key, "w") == 2; }));
  CHECK(poll_until(e.io, [&] { return holds_on(*e.admin[2], key, "w") == 2; }));
  // Another owner is refused: every node holds something of w.
  CHECK(acquire(e.io, other, "counted", owned_by("v")).ec == errc::not_acquired);

  // The first acquisition is released on the two nodes that knew it; node 0
  // answers that it never held it. Still a quorum: released.
  const auto released_first = release(e.io, locks, first.held);
  CHECK_FALSE(released_first.ec);
  CHECK(released_first.removed == 2);
  for (auto& a : e.admin) CHECK(poll_until(e.io, [&] { return holds_on(*a, key, "w") == 1; }));
  CHECK(second.valid());
  CHECK(acquire(e.io, other, "counted", owned_by("v")).ec == errc::not_acquired);

  const auto released_second = release(e.io, locks, second);
  CHECK_FALSE(released_second.ec);
  CHECK(e.key_nowhere(key));
  CHECK_FALSE(acquire(e.io, other, "counted", owned_by("v")).ec);
}

TEST_CASE("a reentrant set of resources: re-entered as a whole and refused to other owners",
          "[integration][reentrant][multi]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  auto acquire_set = [&](std::string owner) {
    return acquire_all(e.io, locks, {"m1", "m2"}, owned_by(std::move(owner)));
  };
  auto outer = acquire_set("w");
  REQUIRE_FALSE(outer.ec);
  auto inner = acquire_set("w");
  REQUIRE_FALSE(inner.ec);
  CHECK(acquire_set("v").ec == errc::not_acquired);
  CHECK(acquire(e.io, locks, "m2", owned_by("v")).ec == errc::not_acquired);
  CHECK(release(e.io, locks, inner.held).removed >= 3);
  CHECK(release(e.io, locks, outer.held).removed >= 3);
  CHECK(e.key_nowhere(e.key("m1")));
  CHECK(e.key_nowhere(e.key("m2")));
}

// Review: a release is sent again after a reconnect only until the key would
// have expired with the handle's own TTL. When a token field had no expiry
// of its own, it outlived that (the owner's other holds kept the key), so an
// undelivered release left a hold nobody could remove. Each field now
// carries its own expiry on the node's clock.
TEST_CASE("a reentrant hold whose release never arrived ends with its own TTL",
          "[integration][reentrant]") {
  env e;
  auto proxies = proxy_nodes(e, {0, 1, 2});
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client other(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  warm_up(e.io, other);
  const auto key = e.key("stale");

  auto outer = acquire(e.io, locks, "stale", owned_by("w", 1s));
  REQUIRE_FALSE(outer.ec);
  auto inner = acquire(e.io, locks, "stale", owned_by("w", 20s));
  REQUIRE_FALSE(inner.ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return holds_on(*a, key, "w") == 2; }));

  // The outer release reaches only nodes 3 and 4 until it is given up.
  for (auto& p : proxies) p->partition(redlock::test::fault_proxy::partition_mode::drop);
  release(e.io, locks, outer.held);
  // This one is about the outer hold's TTL running out.
  wait_on_timer(e.io, 3s);
  for (auto& p : proxies) p->partition(redlock::test::fault_proxy::partition_mode::none);

  // The last hold is released cleanly: the expired outer one is no hold.
  CHECK_FALSE(release(e.io, locks, inner.held).ec);
  CHECK(e.key_nowhere(key));
  CHECK_FALSE(acquire(e.io, other, "stale", owned_by("v")).ec);
}

// Review: only a release that deletes the key announced it, and the undo of
// a failed attempt announced nothing. With reentrant locks the undo can
// remove the last hold: the owner's release ran while the failed attempt's
// field still kept the key.
TEST_CASE("a reentrant resource freed by an undo is announced to waiters",
          "[integration][reentrant]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client waiter(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  warm_up(e.io, waiter);
  const auto key = e.key("quiet");

  auto outer = acquire(e.io, locks, "quiet", owned_by("w", 20s));
  REQUIRE_FALSE(outer.ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return holds_on(*a, key, "w") == 1; }));

  // Another owner waits; its retry would come after its wait deadline.
  auto options = waiting(10s);
  options.wait_timeout = 8s;
  options.reentrant_owner = "v";
  auto waited = make_pending();
  waiter.async_acquire("quiet", options, store_in(waited));
  REQUIRE(e.someone_waits_for(key));

  // An inner attempt of w that cannot reach a quorum (three nodes frozen),
  // and the outer release queued behind it on every connection.
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).pause();
  auto inner = make_pending();
  locks.async_acquire("quiet", owned_by("w", 8s), store_in(inner));
  release(e.io, locks, outer.held);
  run_until(e.io, [&] { return inner->has_value(); });
  CHECK((*inner)->ec == errc::quorum_unreachable);
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).resume();
  const auto resumed_at = steady::now();

  run_until(e.io, [&] { return waited->has_value(); });
  INFO("the waiter completed "
       << std::chrono::duration_cast<milliseconds>(steady::now() - resumed_at).count()
       << " ms after the nodes resumed");
  CHECK_FALSE((*waited)->ec);
  CHECK(steady::now() - resumed_at < 4s);
  if (!(*waited)->ec) CHECK(e.release_everywhere(waiter, (*waited)->held).removed >= 3);
}

// Review: the undo of a reentrant attempt announced every key it freed, and
// the waiter that undid heard its own announcement. While the resource was
// held on a quorum but free on some node, each attempt landed there, was
// undone, announced, and woke the waiter again: thousands of scripts a
// second instead of one attempt per retry delay. A plain waiter (the
// control) backs off as configured.
TEST_CASE("a reentrant waiter is not woken by its own undo", "[integration][reentrant]") {
  const bool reentrant = GENERATE(false, true);
  INFO((reentrant ? "reentrant" : "plain (control)"));
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("busy");
  // Another owner's hold on nodes 0 and 1 only (node 2 missed its acquire).
  for (std::size_t i : {0, 1}) {
    if (reentrant) {
      e.admin[i]->command({"HSET", key, "owner", "P", "tokP", "99999999999999"});
      e.admin[i]->command({"PEXPIRE", key, "60000"});
    } else {
      REQUIRE(foreign_set_nx(*e.admin[i], key, "tokP"));
    }
  }

  auto options = waiting(250ms);
  options.retry.max_attempts = 0;  // only the wait deadline ends it
  options.wait_timeout = 1500ms;
  if (reentrant) options.reentrant_owner = "Q";
  e.admin[2]->command({"CONFIG", "RESETSTAT"});
  auto got = acquire(e.io, locks, "busy", options);
  CHECK(got.ec == errc::not_acquired);
  const auto scripts = command_calls(*e.admin[2], "set") + script_calls(*e.admin[2]);
  INFO(scripts << " attempts and undos on node 2");
  // About 1500/250 + 1 attempts, each with its undo.
  CHECK(scripts <= 30);
}

// Review: the scripts read a field that is no timestamp as expired, so a
// hold written by the previous version ('1') was pruned and another owner
// took the resource while that hold's key was live.
TEST_CASE("a reentrant hold written by the previous version is live while its key is",
          "[integration][reentrant]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("upgraded");
  for (auto& a : e.admin) {
    a->command({"HSET", key, "owner", "old", "tokOLD", "1"});
    a->command({"PEXPIRE", key, "30000"});
  }
  CHECK(acquire(e.io, locks, "upgraded", owned_by("new")).ec == errc::not_acquired);
  for (auto& a : e.admin) CHECK(a->command({"HEXISTS", key, "tokOLD"}).integer == 1);
}

// Review: the reentrant extend lengthened the key only to its own TTL, so on
// a key without a TTL it set the key's expiry below another live hold.
TEST_CASE("a reentrant extend never sets the key below another live hold",
          "[integration][reentrant]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("persisted");
  auto longer = acquire(e.io, locks, "persisted", owned_by("w", 60s));
  REQUIRE_FALSE(longer.ec);
  auto shorter = acquire(e.io, locks, "persisted", owned_by("w", 1s));
  REQUIRE_FALSE(shorter.ec);
  for (auto& a : e.admin) {
    REQUIRE(poll_until(e.io, [&] { return holds_on(*a, key, "w") == 2; }));
    a->command({"PERSIST", key});
  }
  auto extended = extend(e.io, locks, shorter.held, 1s);
  REQUIRE_FALSE(extended.ec);
  for (std::size_t i = 0; i < 3; ++i) {
    // Where the extend ran, the key still outlives the 60 s hold's validity.
    if (extended.held.nodes()[i].state == status::acquired) {
      CHECK(e.admin[i]->pttl(key) > 50000);
    }
  }
}
