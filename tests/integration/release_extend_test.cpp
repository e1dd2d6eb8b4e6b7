// Extending and releasing: what changes on the nodes, and the errors when
// the lock has expired, was lost, was taken over, or too few nodes answer.
#include "test_env.hpp"

#include <string>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

TEST_CASE("extend moves the validity deadline and the nodes' TTL forward", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("long-job");

  auto got = acquire(e.io, locks, "long-job", once(2s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));

  const auto before = redlock::clock::now();
  const auto old_deadline = got.held.validity_deadline();
  auto extended = extend(e.io, locks, got.held, 20s);
  INFO(describe_nodes(extended.held));
  REQUIRE_FALSE(extended.ec);
  CHECK(extended.held.validity_deadline() > old_deadline);
  // Copies are one acquisition: the old handle sees the new validity too.
  CHECK(got.held.validity_deadline() == extended.held.validity_deadline());
  CHECK(extended.held.validity_deadline() > before + 19s);  // 20 s minus drift and elapsed
  CHECK(extended.held.validity_deadline() <= redlock::clock::now() + 20s);
  CHECK(extended.held.token() == got.held.token());
  CHECK(extended.held.resource() == "long-job");
  CHECK(extended.held.ttl() == 20s);
  CHECK(count_nodes(extended.held, status::acquired) >= locks.quorum());

  // The extension may still be on its way to the nodes beyond the quorum.
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    long long pttl = 0;
    CHECK(poll_until(e.io, [&] { return (pttl = e.admin[i]->pttl(key)) > 2000; }));
    CHECK(pttl > 19000);
    CHECK(pttl <= 20000);
  }
  CHECK(e.release_everywhere(locks, extended.held).removed >= 3);
}

TEST_CASE("extending an expired lock fails with lock_expired and leaves the nodes untouched",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("short");

  auto got = acquire(e.io, locks, "short", once(50ms, 20ms));
  REQUIRE_FALSE(got.ec);

  // This one is about time passing, so a timer it is.
  wait_on_timer(e.io, got.held.remaining_validity() + 10ms);
  REQUIRE_FALSE(got.held.valid());

  // A probe: the key holds our very token again, with a long TTL. An extend
  // that reached a node would cut its TTL down to 5 s.
  for (auto& admin : e.admin) {
    REQUIRE(admin->command({"SET", key, got.held.token(), "PX", "60000"}).text == "OK");
    admin->command({"CONFIG", "RESETSTAT"});
  }

  auto extended = extend(e.io, locks, got.held, 5s);
  CHECK(extended.ec == errc::lock_expired);
  // Still the same acquisition, so it can be released.
  CHECK(extended.held.token() == got.held.token());
  CHECK_FALSE(extended.held.valid());

  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(e.admin[i]->pttl(key) > 50000);
    CHECK(command_calls(*e.admin[i], "evalsha") == 0);
    CHECK(command_calls(*e.admin[i], "eval") == 0);
  }
}

TEST_CASE("extend with an invalid TTL fails with invalid_ttl", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  auto got = acquire(e.io, locks, "r", once());
  REQUIRE_FALSE(got.ec);
  CHECK(extend(e.io, locks, got.held, 0ms).ec == errc::invalid_ttl);
  CHECK(extend(e.io, locks, got.held, 2ms).ec == errc::ttl_within_drift);
  CHECK(e.release_everywhere(locks, got.held).removed >= 3);
}

TEST_CASE("extend after the key was deleted on 3 of 5 nodes fails with lock_lost",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("lost");

  auto got = acquire(e.io, locks, "lost", once());
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  for (std::size_t i : {0, 1, 2}) REQUIRE(e.admin[i]->command({"DEL", key}).integer == 1);

  auto extended = extend(e.io, locks, got.held, 10s);
  INFO(describe_nodes(extended.held));
  CHECK(extended.ec == errc::lock_lost);
  // The same acquisition, no longer valid anywhere, and releasable.
  CHECK(extended.held.token() == got.held.token());
  CHECK_FALSE(extended.held.valid());
  CHECK_FALSE(got.held.valid());
  for (std::size_t i : {0, 1, 2}) {
    CHECK(extended.held.nodes().at(i).state == status::held_elsewhere);
    CHECK_FALSE(e.admin[i]->exists(key));  // extend never creates a key
  }
}

TEST_CASE(
    "unlock after a foreign token took over the key everywhere fails with lock_lost and "
    "removes nothing",
    "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("taken-over");

  auto got = acquire(e.io, locks, "taken-over", once());
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  for (auto& admin : e.admin) {
    REQUIRE(admin->command({"SET", key, "othertoken", "PX", "60000"}).text == "OK");
  }

  const auto released = release(e.io, locks, got.held);
  // The caller learns that its critical section may have run without the lock.
  CHECK(released.ec == errc::lock_lost);
  CHECK(released.removed == 0);
  CHECK(got.held.released());
  CHECK_FALSE(got.held.valid());
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(e.admin[i]->get(key) == "othertoken");
    CHECK(e.admin[i]->pttl(key) > 50000);
  }
}

TEST_CASE("unlock counts the nodes it removed the key from and needs a quorum to answer",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("counted");

  auto got = acquire(e.io, locks, "counted", once());
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));

  SECTION("2 of 5 stopped: removed == 3, success") {
    e.nodes.node(0).stop();
    e.nodes.node(4).stop();
    const auto released = release(e.io, locks, got.held);
    CHECK_FALSE(released.ec);
    CHECK(released.removed == 3);
    for (std::size_t i : {1, 2, 3}) CHECK_FALSE(e.admin[i]->exists(key));
  }

  SECTION("3 of 5 stopped: quorum_unreachable") {
    for (std::size_t i : {0, 2, 4}) e.nodes.node(i).stop();
    const auto released = release(e.io, locks, got.held);
    CHECK(released.ec == errc::quorum_unreachable);
    CHECK(released.removed == 2);
    for (std::size_t i : {1, 3}) CHECK_FALSE(e.admin[i]->exists(key));
  }
}
