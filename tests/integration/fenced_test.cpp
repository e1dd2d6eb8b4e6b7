// Fenced acquires (lock_options::fenced, docs/fencing.md) against real
// nodes: the fences, the write-back when the nodes disagree, and a node
// that lost its fencing state.
#include "test_env.hpp"

#include <string>

using namespace redlock::itest;
using redlock::errc;

namespace redlock::itest {
namespace {

constexpr std::string_view state_key = "redlock:fencing";

// Short, so that a node's re-seed (after max_fenced_ttl and a request
// timeout) comes quickly.
void fence_quickly(client_config& config) { config.max_fenced_ttl = 400ms; }

lock_options fenced(milliseconds ttl = 400ms) {
  auto options = once(ttl);
  options.fenced = true;
  return options;
}

// Retries until the nodes are re-seeded (fresh nodes have no fencing state).
lock_options fenced_waiting(milliseconds ttl = 400ms) {
  auto options = fenced(ttl);
  options.retry = retry_policy::fixed(50ms, 0, 0.0);
  options.wait_timeout = 5s;
  return options;
}

std::uint64_t counter_on(test::admin_client& a, const std::string& key) {
  const auto text = a.command({"HGET", std::string(state_key), "c:" + key}).text;
  return text.empty() ? 0 : std::stoull(text);
}

bool valid_on(test::admin_client& a) {
  return a.command({"HEXISTS", std::string(state_key), "valid"}).integer == 1;
}

}  // namespace
}  // namespace redlock::itest

TEST_CASE("fenced acquires get increasing fences, which extensions keep",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  // Fresh nodes have no fencing state: the first acquire waits for them.
  auto first = acquire(e.io, locks, "job", fenced_waiting());
  INFO(describe_nodes(first.held));
  REQUIRE_FALSE(first.ec);
  CHECK(first.held.fenced());
  CHECK(first.held.fence() >= 1);
  REQUIRE(first.held.fences() == std::vector<std::uint64_t>{first.held.fence()});
  for (auto& a : e.admin) CHECK(poll_until(e.io, [&] { return valid_on(*a); }));

  auto extended = extend(e.io, locks, first.held, 400ms);
  REQUIRE_FALSE(extended.ec);
  CHECK(extended.held.fence() == first.held.fence());
  REQUIRE_FALSE(release(e.io, locks, first.held).ec);

  std::uint64_t last = first.held.fence();
  for (int i = 0; i < 3; ++i) {
    auto next = acquire(e.io, locks, "job", fenced());
    REQUIRE_FALSE(next.ec);
    CHECK(next.held.fence() > last);
    last = next.held.fence();
    REQUIRE_FALSE(release(e.io, locks, next.held).ec);
  }
  // A plain lock has no fence, and leaves the counters alone.
  auto plain = acquire(e.io, locks, "job", once());
  REQUIRE_FALSE(plain.ec);
  CHECK_FALSE(plain.held.fenced());
  CHECK(plain.held.fence() == 0);
  CHECK(plain.held.fences().empty());
  REQUIRE_FALSE(release(e.io, locks, plain.held).ec);
  for (auto& a : e.admin) CHECK(counter_on(*a, e.key("job")) <= last);
}

TEST_CASE("fences that differ are written back to a majority before the acquire completes",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  REQUIRE_FALSE(release(e.io, locks, acquire(e.io, locks, "stock", fenced_waiting()).held).ec);
  const auto key = e.key("stock");
  // Each node's counter differs, as after failed attempts on a minority.
  for (std::size_t i = 0; i < 3; ++i) {
    e.admin[i]->command({"HSET", std::string(state_key), "c:" + key, std::to_string(10 * (i + 1))});
  }
  auto got = acquire(e.io, locks, "stock", fenced());
  REQUIRE_FALSE(got.ec);
  const auto fence = got.held.fence();
  CHECK((fence == 21 || fence == 31));
  // Whichever two nodes made the quorum, a majority holds the fence now,
  // when the acquire has completed (only one node answered it).
  std::size_t holding = 0;
  for (auto& a : e.admin) holding += counter_on(*a, key) >= fence ? 1 : 0;
  CHECK(holding >= 2);
  // So the next acquire, whatever its quorum, gets a larger fence.
  REQUIRE_FALSE(release(e.io, locks, got.held).ec);
  auto next = acquire(e.io, locks, "stock", fenced());
  REQUIRE_FALSE(next.ec);
  CHECK(next.held.fence() > fence);
}

TEST_CASE("a node that lost its fencing state is left out until re-seeded from the others",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  auto first = acquire(e.io, locks, "leader", fenced_waiting());
  REQUIRE_FALSE(first.ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return valid_on(*a); }));
  REQUIRE_FALSE(release(e.io, locks, first.held).ec);
  const auto key = e.key("leader");
  // Node 0 forgets everything (as a restart without persistence would).
  e.admin[0]->command({"FLUSHALL"});

  auto answers = acquire(e.io, locks, "leader", fenced());
  REQUIRE_FALSE(answers.ec);
  CHECK(answers.held.fence() > first.held.fence());
  REQUIRE_FALSE(release(e.io, locks, answers.held).ec);
  // Node 0 said its state was lost, recorded the loss, and took no part.
  CHECK(poll_until(e.io, [&] {
    return !e.admin[0]->command({"HGET", std::string(state_key), "lost"}).text.empty();
  }));
  CHECK_FALSE(valid_on(*e.admin[0]));
  CHECK(counter_on(*e.admin[0], key) == 0);

  // After the wait, a fenced acquire that meets the loss re-seeds it with
  // the largest counter of the others.
  wait_on_timer(e.io, 500ms);
  bool reseeded = poll_until(
      e.io,
      [&] {
        auto again = acquire(e.io, locks, "leader", fenced());
        if (!again.ec) release(e.io, locks, again.held);
        return valid_on(*e.admin[0]);
      },
      3000ms);
  REQUIRE(reseeded);
  const auto floor =
      std::stoull(e.admin[0]->command({"HGET", std::string(state_key), "floor"}).text);
  CHECK(floor >= answers.held.fence());
  // With node 2 gone, node 0's answers count again, and stay above.
  e.nodes.node(2).stop();
  auto later = acquire(e.io, locks, "leader", fenced());
  INFO(describe_nodes(later.held));
  REQUIRE_FALSE(later.ec);
  CHECK(later.held.fence() > answers.held.fence());
  CHECK(later.held.nodes()[0].state == redlock::node_outcome::status::acquired);
}

TEST_CASE("a restart seen on reconnecting makes the node's fencing state lost",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  REQUIRE_FALSE(release(e.io, locks, acquire(e.io, locks, "r", fenced_waiting()).held).ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return valid_on(*a); }));
  // As if the state came from an older process's snapshot: another run id.
  e.admin[1]->command({"HSET", std::string(state_key), "seen", "an-earlier-process"});
  e.admin[1]->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  CHECK(poll_until(e.io, [&] {
    auto got = acquire(e.io, locks, "r", fenced());
    if (!got.ec) release(e.io, locks, got.held);
    return !valid_on(*e.admin[1]);
  }));
}

TEST_CASE("several resources get one fence each, and a re-entry never lowers its hold's fence",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  REQUIRE_FALSE(release(e.io, locks, acquire(e.io, locks, "a", fenced_waiting()).held).ec);

  auto both = run_op<redlock::error_code, redlock::lock>(e.io, [&](auto handler) {
    locks.async_acquire_all({"a", "b"}, fenced(), handler);
  });
  REQUIRE_FALSE(std::get<0>(both));
  const auto fences = std::get<1>(both).fences();
  REQUIRE(fences.size() == 2);
  CHECK(fences[0] >= 2);
  CHECK(fences[1] >= 1);
  REQUIRE_FALSE(release(e.io, locks, std::get<1>(both)).ec);
  auto a = acquire(e.io, locks, "a", fenced());
  REQUIRE_FALSE(a.ec);
  CHECK(a.held.fence() > fences[0]);
  REQUIRE_FALSE(release(e.io, locks, a.held).ec);

  auto owned = fenced();
  owned.reentrant_owner = "worker-1";
  auto outer = acquire(e.io, locks, "c", owned);
  REQUIRE_FALSE(outer.ec);
  auto inner = acquire(e.io, locks, "c", owned);
  REQUIRE_FALSE(inner.ec);
  // The same fence when the nodes' records of the hold agree; a larger one
  // when a node outside the outer acquire's quorum issued a larger fence for
  // it (say a node seeded later, with a floor from resource "a"), and the
  // re-entry's quorum includes that node (docs/fencing.md).
  CHECK(inner.held.fence() >= outer.held.fence());
  auto innermost = acquire(e.io, locks, "c", owned);
  REQUIRE_FALSE(innermost.ec);
  CHECK(innermost.held.fence() >= inner.held.fence());
  REQUIRE_FALSE(release(e.io, locks, innermost.held).ec);
  REQUIRE_FALSE(release(e.io, locks, inner.held).ec);
  REQUIRE_FALSE(release(e.io, locks, outer.held).ec);
  auto again = acquire(e.io, locks, "c", owned);
  REQUIRE_FALSE(again.ec);
  CHECK(again.held.fence() > innermost.held.fence());
}

TEST_CASE("fenced acquires refuse a TTL above max_fenced_ttl and the state's key",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  e.config.key_prefix = "";
  redlock::client locks(e.io.get_executor(), e.config);
  CHECK(acquire(e.io, locks, "x", fenced(401ms)).ec == errc::fenced_ttl_too_long);
  CHECK(acquire(e.io, locks, "redlock:fencing", once()).ec == errc::reserved_key);
  CHECK(acquire(e.io, locks, "redlock:fencing", fenced()).ec == errc::reserved_key);
}

// Review finding: a reentrant re-entry answers the fence stored in its hash
// even when a larger fence was issued on that node since (written back by
// another owner's acquire, which completed while this owner's hold survived
// only on a minority). Reached without any crash:
//   - owner O holds "res" (fence f); its hold lapses on nodes 1 and 2 but
//     lives on node 0 (its last extension reached only node 0);
//   - failed attempts pumped node 2's counter (to 20);
//   - B acquires: node 0 refuses (O's hash), nodes 1 and 2 grant f+1 and 21,
//     T = 21 is written back to nodes 0 and 2 (node 1's write-back is lost),
//     B completes with 21 and releases;
//   - O re-enters (node 2 down): node 0 answers its stored f, node 1 issues
//     f+2: O gets f+2 < 21 although B completed before O began (P broken).
TEST_CASE("a re-entry after another owner's fence gets a larger fence (review)",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  REQUIRE_FALSE(release(e.io, locks, acquire(e.io, locks, "res", fenced_waiting()).held).ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return valid_on(*a); }));
  const auto key = e.key("res");

  auto owned = fenced();
  owned.reentrant_owner = "owner-O";
  auto first = acquire(e.io, locks, "res", owned);
  REQUIRE_FALSE(first.ec);
  const auto f = first.held.fence();
  // O's hold lapses on nodes 1 and 2 and lives on (much longer) on node 0.
  e.admin[1]->command({"DEL", key});
  e.admin[2]->command({"DEL", key});
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  e.admin[0]->command({"HSET", key, first.held.token(), std::to_string(now_ms + 60000)});
  e.admin[0]->command({"PEXPIRE", key, "60000"});
  // Failed attempts on a minority pumped node 2.
  e.admin[2]->command({"HSET", std::string(state_key), "c:" + key, "20"});

  auto b = acquire(e.io, locks, "res", fenced());
  INFO(describe_nodes(b.held));
  REQUIRE_FALSE(b.ec);
  const auto fb = b.held.fence();
  CHECK(fb == 21);
  // Node 1's write-back never arrived: its counter is what it issued to B.
  e.admin[1]->command({"HSET", std::string(state_key), "c:" + key, std::to_string(f + 1)});
  REQUIRE_FALSE(release(e.io, locks, b.held).ec);

  e.nodes.node(2).stop();
  auto again = acquire(e.io, locks, "res", owned);
  INFO(describe_nodes(again.held));
  REQUIRE_FALSE(again.ec);
  CHECK(again.held.fence() > fb);
}

// Review finding (review21): the restart check is a script that writes, and
// a node refuses a script's first write while it cannot persist (MISCONF)
// or has too few replicas (NOREPLICAS, min-replicas-to-write). The
// connection took that error as "checked" and went on, so once the node
// accepts writes again, fenced commands run against a state restored from
// an older snapshot that nobody marked lost:
//   - A gets fence 10 from nodes 0 and 1 (node 2 paused; it issues 4 later);
//   - node 1 restarts from an older snapshot (counter 2, `seen` of an
//     earlier process) while its replica is not back: the check of every
//     new connection is answered NOREPLICAS and does nothing;
//   - the replica is back; node 0 is paused (a minority down; nodes 0 and 2
//     kept their state, so F holds);
//   - B, begun after A completed, gets 3 from node 1 and 5 from node 2,
//     writes 5 back to both and completes with 5 < 10 (P broken).
TEST_CASE("a restart check refused by a write error does not let fenced commands run (review)",
          "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  REQUIRE_FALSE(release(e.io, locks, acquire(e.io, locks, "acct", fenced_waiting()).held).ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return valid_on(*a); }));
  const auto key = e.key("acct");
  e.admin[0]->command({"HSET", std::string(state_key), "c:" + key, "9"});
  e.admin[1]->command({"HSET", std::string(state_key), "c:" + key, "9"});
  e.admin[2]->command({"HSET", std::string(state_key), "c:" + key, "3"});

  e.nodes.node(2).pause();
  auto a = acquire(e.io, locks, "acct", fenced());
  INFO(describe_nodes(a.held));
  REQUIRE_FALSE(a.ec);
  REQUIRE(a.held.fence() == 10);
  REQUIRE_FALSE(release(e.io, locks, a.held).ec);
  e.nodes.node(2).resume();
  // Node 2 ran A's late acquire (issuing 4) and then its release.
  REQUIRE(poll_until(
      e.io, [&] { return counter_on(*e.admin[2], key) == 4 && e.admin[2]->pttl(key) == -2; }));

  // Node 1 restarts from an older snapshot while its replica is away.
  e.admin[1]->command({"HSET", std::string(state_key), "c:" + key, "2", "seen", "an-earlier-run"});
  e.admin[1]->command({"CONFIG", "SET", "min-replicas-to-write", "1"});
  e.admin[1]->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  // The client's new connection ran the check, which was refused.
  REQUIRE(poll_until(e.io, [&] {
    return e.admin[1]->command({"INFO", "errorstats"}).text.find("errorstat_NOREPLICAS") !=
           std::string::npos;
  }));
  e.admin[1]->command({"CONFIG", "SET", "min-replicas-to-write", "0"});
  // The client's connection to node 1 is up again (a plain lock gets it).
  REQUIRE(poll_until(e.io, [&] {
    auto probe = acquire(e.io, locks, "probe", once(2s));
    if (probe.ec) return false;
    release(e.io, locks, probe.held);
    return probe.held.nodes()[1].state == redlock::node_outcome::status::acquired;
  }));

  e.nodes.node(0).pause();
  auto b = acquire(e.io, locks, "acct", fenced());
  e.nodes.node(0).resume();
  INFO(describe_nodes(b.held));
  if (!b.ec) CHECK(b.held.fence() > a.held.fence());
  // The check runs once the node takes writes again: the old state is lost.
  CHECK(poll_until(e.io, [&] {
    auto got = acquire(e.io, locks, "acct", fenced());
    if (!got.ec) release(e.io, locks, got.held);
    return !valid_on(*e.admin[1]);
  }));
}

// Review finding (review21): the scripts count fences in Lua numbers
// (doubles), so past 2^53 - 1 a counter no longer grows: 2^53 + 1 rounds to
// 2^53, and two acquires one after the other get the same fence (P broken);
// and fenced_set_script() refuses any fence above 2^53 - 1 anyway. The
// nodes must refuse to issue such fences rather than hand them out.
TEST_CASE("fences stop at 2^53 - 1 instead of repeating (review)", "[integration][fencing]") {
  env e(3);
  fence_quickly(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  REQUIRE_FALSE(release(e.io, locks, acquire(e.io, locks, "big", fenced_waiting()).held).ec);
  for (auto& a : e.admin) REQUIRE(poll_until(e.io, [&] { return valid_on(*a); }));
  const auto key = e.key("big");
  const std::string near = std::to_string(redlock::max_script_fence - 1);
  for (auto& a : e.admin) {
    a->command({"HSET", std::string(state_key), "c:" + key, near, "max", near});
  }
  std::uint64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    auto got = acquire(e.io, locks, "big", fenced());
    INFO("acquire " << i << ": " << describe_nodes(got.held));
    if (i == 0) {
      REQUIRE_FALSE(got.ec);
      CHECK(got.held.fence() == redlock::max_script_fence);
    }
    if (!got.ec) {
      CHECK(got.held.fence() > last);
      CHECK(got.held.fence() <= redlock::max_script_fence);
      last = got.held.fence();
      REQUIRE_FALSE(release(e.io, locks, got.held).ec);
    }
  }
}
