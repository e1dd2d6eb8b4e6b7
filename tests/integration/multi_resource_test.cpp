// Several resources as one lock (async_acquire_all): all keys or none on
// each node, quorum and validity as for one, extended and released together,
// and exclusion against single-resource locks and overlapping sets.
#include "test_env.hpp"

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

TEST_CASE("acquire_all sets every key with one token on every node, and release removes them all",
          "[integration][multi]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  auto got = acquire_all(e.io, locks, {"stock:1", "stock:2", "stock:3"}, once(5s));
  INFO(describe_nodes(got.held));
  REQUIRE_FALSE(got.ec);
  CHECK(got.held.resources() == std::vector<std::string>{"stock:1", "stock:2", "stock:3"});
  CHECK(got.held.resource() == "stock:1");
  CHECK(got.held.reentrant_owner().empty());
  CHECK(count_nodes(got.held, status::acquired) >= 3);
  for (const auto* r : {"stock:1", "stock:2", "stock:3"}) {
    CHECK(e.key_everywhere(e.key(r), got.held.token()));
  }
  // Each is a plain key: another client's SET NX of any one is refused.
  CHECK_FALSE(foreign_set_nx(*e.admin[0], e.key("stock:2"), "other"));

  const auto released = release(e.io, locks, got.held);
  CHECK_FALSE(released.ec);
  CHECK(released.removed >= 3);
  for (const auto* r : {"stock:1", "stock:2", "stock:3"}) CHECK(e.key_nowhere(e.key(r)));
}

TEST_CASE("a set held in part is refused and nothing of it stays set", "[integration][multi]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  redlock::client other(e.io.get_executor(), e.config);

  // Another of our clients holds b alone.
  auto b = acquire(e.io, other, "b", once());
  REQUIRE_FALSE(b.ec);
  REQUIRE(e.key_everywhere(e.key("b"), b.held.token()));

  auto got = acquire_all(e.io, locks, {"a", "b", "c"}, once());
  INFO(describe_nodes(got.held));
  CHECK(got.ec == errc::not_acquired);
  CHECK(got.held.empty());
  CHECK(count_nodes(got.held, status::held_elsewhere) >= 3);  // decided at 3 refusals
  // All or none on each node: the script set neither a nor c anywhere.
  for (const auto& a : e.admin) {
    CHECK_FALSE(a->exists(e.key("a")));
    CHECK_FALSE(a->exists(e.key("c")));
  }

  // The other way round: a single-resource acquire of a key inside a held set.
  REQUIRE_FALSE(release(e.io, other, b.held).ec);
  auto set = acquire_all(e.io, locks, {"a", "b", "c"}, once());
  REQUIRE_FALSE(set.ec);
  // On every node, so that the other client's attempts below meet it there.
  REQUIRE(e.key_everywhere(e.key("c"), set.held.token()));
  CHECK(acquire(e.io, other, "c", once()).ec == errc::not_acquired);
  // An overlapping set is refused too.
  CHECK(acquire_all(e.io, other, {"c", "d"}, once()).ec == errc::not_acquired);
  CHECK_FALSE(e.admin[0]->exists(e.key("d")));
  CHECK(e.release_everywhere(locks, set.held).removed >= 3);
}

TEST_CASE("a set held on a minority is acquired on the rest and one held on a majority is undone",
          "[integration][multi]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);

  SECTION("minority") {
    for (std::size_t i : {0, 1}) REQUIRE(foreign_set_nx(*e.admin[i], e.key("y"), "other"));
    auto got = acquire_all(e.io, locks, {"x", "y"}, once());
    INFO(describe_nodes(got.held));
    REQUIRE_FALSE(got.ec);
    // Decided at three grants: the refusals may not have been read yet.
    CHECK(got.held.nodes()[0].state != status::acquired);
    CHECK(got.held.nodes()[1].state != status::acquired);
    for (std::size_t i = 0; i < 5; ++i) {
      INFO("node " << i);
      // Where y was taken, x was not set either.
      if (i < 2) {
        CHECK_FALSE(e.admin[i]->exists(e.key("x")));
        CHECK(e.admin[i]->get(e.key("y")) == "other");
      } else {
        CHECK(poll_until(e.io, [&] { return e.admin[i]->get(e.key("x")) == got.held.token(); }));
        CHECK(e.admin[i]->get(e.key("y")) == got.held.token());
      }
    }
    const auto released = release(e.io, locks, got.held);
    CHECK_FALSE(released.ec);
    CHECK(released.removed == 3);
  }
  SECTION("majority") {
    for (std::size_t i : {0, 1, 2}) REQUIRE(foreign_set_nx(*e.admin[i], e.key("y"), "other"));
    auto got = acquire_all(e.io, locks, {"x", "y"}, once());
    INFO(describe_nodes(got.held));
    CHECK(got.ec == errc::not_acquired);
    // The two nodes that granted had both keys set; the undo removed them.
    CHECK(e.key_nowhere(e.key("x")));
    for (std::size_t i : {3, 4}) {
      CHECK(poll_until(e.io, [&] { return !e.admin[i]->exists(e.key("y")); }));
    }
    for (std::size_t i : {0, 1, 2}) CHECK(e.admin[i]->get(e.key("y")) == "other");
  }
}

TEST_CASE("extend moves every key of a set and one key lost on a majority loses the lock",
          "[integration][multi]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  auto got = acquire_all(e.io, locks, {"p", "q"}, once(2s));
  REQUIRE_FALSE(got.ec);
  for (const auto* r : {"p", "q"}) REQUIRE(e.key_everywhere(e.key(r), got.held.token()));

  auto extended = extend(e.io, locks, got.held, 30s);
  REQUIRE_FALSE(extended.ec);
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    for (const auto* r : {"p", "q"}) {
      CHECK(poll_until(e.io, [&] { return e.admin[i]->pttl(e.key(r)) > 20000; }));
    }
  }

  // q vanishes from three nodes (expired, evicted, flushed): the set is no
  // longer held there, whatever p says.
  for (std::size_t i : {0, 1, 2}) e.admin[i]->command({"DEL", e.key("q")});
  auto again = extend(e.io, locks, got.held, 30s);
  INFO(describe_nodes(again.held));
  CHECK(again.ec == errc::lock_lost);
  CHECK_FALSE(got.held.valid());
  // Refused as a whole: p was not extended where q was missing either.
  const auto released = release(e.io, locks, got.held);
  CHECK(released.ec == errc::lock_lost);
  CHECK(e.key_nowhere(e.key("p")));
  CHECK(e.key_nowhere(e.key("q")));
}

TEST_CASE("acquire_all rejects bad lists without touching the nodes", "[integration][multi]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  CHECK(acquire_all(e.io, locks, {}, once()).ec == errc::no_resources);
  CHECK(acquire_all(e.io, locks, {"a", "b", "a"}, once()).ec == errc::duplicate_resource);
  CHECK(acquire_all(e.io, locks, {"a", ""}, once()).ec == errc::empty_resource);
  std::vector<std::string> huge;
  for (std::size_t i = 0; i <= redlock::max_resources; ++i) huge.push_back(std::to_string(i));
  CHECK(acquire_all(e.io, locks, huge, once()).ec == errc::too_many_resources);
  huge.pop_back();
  auto largest = acquire_all(e.io, locks, huge, once());
  CHECK_FALSE(largest.ec);
  CHECK(e.release_everywhere(locks, largest.held).removed >= 3);
  CHECK(redlock::is_invalid_argument(make_error_code(errc::duplicate_resource)));
  for (const auto& a : e.admin) CHECK(a->keys(e.config.key_prefix + "*").empty());
}

// Review: a set's waiter stood first in line on every key and used up the
// wake-up of a key its attempt could not take (another key of the set was
// held), so the waiter for that key alone never heard of its release.
TEST_CASE("a set's waiter passes on a wake-up it may not use to the key's next waiter",
          "[integration][multi]") {
  env e;
  redlock::client holder(e.io.get_executor(), e.config);
  redlock::client waiters(e.io.get_executor(), e.config);
  warm_up(e.io, holder);
  warm_up(e.io, waiters);

  auto a = acquire(e.io, holder, "a", once());
  REQUIRE_FALSE(a.ec);
  auto b = acquire(e.io, holder, "b", once(30s));  // held throughout
  REQUIRE_FALSE(b.ec);

  auto set_options = waiting(10s);
  set_options.wait_timeout = 6s;
  auto set_result = make_pending();
  waiters.async_acquire_all({"a", "b"}, set_options, store_in(set_result));
  REQUIRE(e.someone_waits_for(e.key("a")));
  REQUIRE(e.someone_waits_for(e.key("b")));

  // Its retry comes after its wait deadline: only a wake-up can get it a.
  auto one_options = waiting(10s);
  one_options.wait_timeout = 4s;
  auto one_result = make_pending();
  waiters.async_acquire("a", one_options, store_in(one_result));
  // A probe through the same client: its SETs follow the waiter's on every
  // connection, so by the time it completes, a quorum has refused the
  // waiter's attempt and the waiter stands in line behind the set's waiter.
  auto probe = acquire(e.io, waiters, "probe", once());
  REQUIRE_FALSE(probe.ec);
  REQUIRE_FALSE(one_result->has_value());

  REQUIRE(release(e.io, holder, a.held).removed >= 3);
  const auto released_at = steady::now();
  run_until(e.io, [&] { return one_result->has_value(); });
  INFO("waited " << std::chrono::duration_cast<milliseconds>(steady::now() - released_at).count()
                 << " ms after a was released");
  CHECK_FALSE((*one_result)->ec);
  CHECK(steady::now() - released_at < 2s);

  run_until(e.io, [&] { return set_result->has_value(); });
  CHECK((*set_result)->ec == errc::not_acquired);  // b is still held
  if (!(*one_result)->ec) release(e.io, waiters, (*one_result)->held);
  release(e.io, holder, b.held);
}

// Review: each wake-up of a set's waiter cancelled and re-made its
// registrations on every other key, an UNSUBSCRIBE and a SUBSCRIBE per key
// per node: quadratic in the set's size, and a window for lost wake-ups.
TEST_CASE("a wake-up of a set's waiter leaves its other keys' subscriptions alone",
          "[integration][multi]") {
  env e;
  redlock::client holder(e.io.get_executor(), e.config);
  redlock::client waiter(e.io.get_executor(), e.config);
  warm_up(e.io, holder);
  warm_up(e.io, waiter);

  constexpr int size = 100;
  std::vector<std::string> set;
  for (int i = 0; i < size; ++i) set.push_back(std::string("k").append(std::to_string(i)));
  auto held = acquire_all(e.io, holder, set, once(30s));
  REQUIRE_FALSE(held.ec);

  auto result = make_pending();
  waiter.async_acquire_all(set, waiting(10s), store_in(result));
  for (const auto& r : set) REQUIRE(e.someone_waits_for(e.key(r)));
  for (auto& a : e.admin) a->command({"CONFIG", "RESETSTAT"});

  REQUIRE(release(e.io, holder, held.held).removed >= 3);
  run_until(e.io, [&] { return result->has_value(); });
  REQUIRE_FALSE((*result)->ec);
  // The set's channels are unsubscribed once, when the acquire completes.
  REQUIRE(poll_until(e.io, [&] {
    const auto r =
        e.admin[0]->command({"PUBSUB", "NUMSUB", redlock::detail::release_channel(e.key("k99"))});
    return r.elements.size() == 2 && r.elements[1].integer == 0;
  }));
  const auto subscribes = command_calls(*e.admin[0], "subscribe");
  const auto unsubscribes = command_calls(*e.admin[0], "unsubscribe");
  INFO("node 0 after the release: " << subscribes << " SUBSCRIBE, " << unsubscribes
                                    << " UNSUBSCRIBE");
  CHECK(subscribes == 0);
  CHECK(unsubscribes <= size);
  CHECK(e.release_everywhere(waiter, (*result)->held).removed >= 3);
}

TEST_CASE("a wait for a set is woken by the release of any resource in it",
          "[integration][multi]") {
  env e;
  redlock::client holder(e.io.get_executor(), e.config);
  redlock::client waiter(e.io.get_executor(), e.config);
  warm_up(e.io, holder);
  warm_up(e.io, waiter);

  auto held = acquire(e.io, holder, "second", once());
  REQUIRE_FALSE(held.ec);

  // Without a wake-up the next attempt would come 10 s after the first.
  auto options = waiting(10s);
  auto waited = make_pending();
  waiter.async_acquire_all({"first", "second", "third"}, options,
                           [waited](error_code ec, redlock::lock l) {
                             waited->emplace(lock_result{ec, std::move(l)});
                           });
  // It listens on every key of the set.
  for (const auto* r : {"first", "second", "third"}) REQUIRE(e.someone_waits_for(e.key(r)));
  REQUIRE_FALSE(waited->has_value());

  REQUIRE(release(e.io, holder, held.held).removed >= 3);
  const auto unlocked_at = steady::now();
  run_until(e.io, [&] { return waited->has_value(); });
  REQUIRE_FALSE((*waited)->ec);
  CHECK(steady::now() - unlocked_at < 5s);
  for (const auto* r : {"first", "second", "third"}) {
    CHECK(e.key_everywhere(e.key(r), (*waited)->held.token()));
  }
}

// Many clients take random overlapping sets of six resources, hold them for
// a moment and release them. The io_context is single-threaded, so a plain
// map records each resource's holder; every grant is checked against it.
TEST_CASE("overlapping sets from many workers: never two holders of one resource",
          "[integration][multi]") {
  env e;
  constexpr int workers = 6;
  constexpr int rounds = 15;
  std::vector<std::unique_ptr<redlock::client>> clients;
  for (int w = 0; w < workers; ++w) {
    clients.push_back(std::make_unique<redlock::client>(e.io.get_executor(), e.config));
  }
  std::map<std::string, int> holder;
  int overlaps = 0;
  int granted = 0;
  int finished = 0;
  std::mt19937 random(12345);

  redlock::lock_options options;
  options.ttl = 10s;
  options.request_timeout = 1s;
  options.retry = redlock::retry_policy::fixed(5ms, 0, 1.0);
  options.wait_timeout = 20s;

  struct worker {
    int id;
    int left;
  };
  std::function<void(worker)> next = [&](worker w) {
    if (w.left == 0) {
      ++finished;
      return;
    }
    std::vector<std::string> set;
    for (int r = 0; r < 6; ++r) {
      if (random() % 2 == 0) set.push_back("res" + std::to_string(r));
    }
    if (set.empty()) set.push_back("res0");
    clients[w.id]->async_acquire_all(set, options, [&, w, set](error_code ec, redlock::lock held) {
      if (ec) {
        FAIL_CHECK("worker " << w.id << ": " << ec.message());
        return next({w.id, 0});
      }
      ++granted;
      for (const auto& r : set) {
        if (holder.contains(r)) ++overlaps;
        holder[r] = w.id;
      }
      auto hold = std::make_shared<boost::asio::steady_timer>(e.io, 2ms);
      hold->async_wait([&, w, set, held, hold](error_code) {
        for (const auto& r : set) holder.erase(r);
        clients[w.id]->async_release(held, [&, w](error_code, std::size_t) {
          next({w.id, w.left - 1});
        });
      });
    });
  };
  for (int w = 0; w < workers; ++w) next({w, rounds});
  run_until(
      e.io, [&] { return finished == workers; }, 60s);
  CHECK(overlaps == 0);
  CHECK(granted == workers * rounds);
  for (const auto& a : e.admin) {
    CHECK(poll_until(e.io, [&] { return a->keys(e.config.key_prefix + "res*").empty(); }));
  }
}

TEST_CASE("the blocking facade takes sets with or without a scope", "[integration][multi]") {
  env e;
  redlock::blocking_client locks(e.config);
  auto held = locks.acquire_all({"u", "v"}, once());
  CHECK(held.resources() == std::vector<std::string>{"u", "v"});
  error_code ec;
  auto refused = locks.acquire_all({"v", "w"}, once(), ec);
  CHECK(ec == errc::not_acquired);
  CHECK(refused.empty());
  CHECK(locks.release(held) >= 3);

  {
    auto scope = locks.acquire_all_scoped({"u", "w"}, once(1s));
    REQUIRE(scope.owns_lock());
    // Kept past its TTL by the keeper (this one is about time passing).
    wait_on_timer(e.io, 1500ms);
    CHECK(scope.held().valid());
    for (const auto* r : {"u", "w"}) {
      // Extended at a quorum: a slow node may have missed an extension.
      CHECK(e.nodes_holding(e.key(r), scope.held().token()) >= 3);
    }
  }
  for (const auto* r : {"u", "w"}) CHECK(e.key_nowhere(e.key(r)));
}
