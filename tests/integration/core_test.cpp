// Regression tests of the core's defects (each failed before its fix), the
// lock handle's semantics, and per-operation cancellation.
#include "test_env.hpp"

#include "support/fault_proxy.hpp"

#include <boost/version.hpp>

#include <memory>
#include <optional>
#include <stop_token>
#include <thread>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;

namespace {

/// Polls a Redis-side condition without running any io_context.
template <class Predicate>
bool poll_until_idle(Predicate condition, milliseconds limit = 2000ms) {
  const auto deadline = steady::now() + limit;
  while (!condition()) {
    if (steady::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

// Defect 1: the extend script ran PEXPIRE unconditionally, so an extend with
// a shorter TTL whose replies came late cut the keys' expiry under a handle
// that still trusted the old validity.
TEST_CASE("an extend with a shorter TTL never shortens the keys, even when it fails late",
          "[integration][defect]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("shorter");
  auto got = acquire(e.io, locks, "shorter", once(10s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  const auto deadline = got.held.validity_deadline();

  // A majority frozen: the extend (request timeout ttl/20 = 50 ms) fails,
  // and its scripts run on those nodes once they are thawed.
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).pause();
  const auto late = extend(e.io, locks, got.held, 1s);
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).resume();
  CHECK(late.ec == errc::quorum_unreachable);
  CHECK(late.held.token() == got.held.token());
  CHECK(got.held.validity_deadline() == deadline);  // the old validity stands
  CHECK(got.held.valid());
  // A probe queued behind the late scripts on the same connections: once it
  // has answered, they have run.
  const auto probe = extend(e.io, locks, got.held, 2s);
  REQUIRE_FALSE(probe.ec);
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(e.admin[i]->pttl(key) > 8000);  // still the acquire's 10 s
  }
  // And a successful shorter extend keeps the later deadline.
  CHECK(probe.held.validity_deadline() == deadline);
  CHECK(e.release_everywhere(locks, got.held).removed >= 3);
}

// Defect 2: a reply deciding failure and the request timer expiring in the
// same reactor cycle settled the attempt twice (two undos, two pauses, at
// worst success with an empty lock). Blocking the io_context thread until
// every node has answered and the timer is due makes both ready at once.
TEST_CASE("an attempt decided by a reply in the same cycle as its timer is settled once",
          "[integration][defect]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  e.warm_up_everywhere(locks);
  // The warm-up's commands have run on every node: the counts start after them.
  REQUIRE(e.key_nowhere(e.key("warm-up")));
  const auto key = e.key("same-cycle");
  for (std::size_t i : {0, 1, 2}) REQUIRE(foreign_set_nx(*e.admin[i], key, "foreign"));
  std::vector<long long> sets, evals;
  for (auto& a : e.admin) {
    sets.push_back(command_calls(*a, "set"));
    evals.push_back(script_calls(*a));
  }

  constexpr auto request_timeout = 50ms;
  auto result = std::make_shared<std::optional<lock_result>>();
  auto completions = std::make_shared<int>(0);
  const auto start = steady::now();
  locks.async_acquire("same-cycle", once(10s, request_timeout),
                      [result, completions](error_code ec, redlock::lock l) {
                        ++*completions;
                        result->emplace(lock_result{ec, std::move(l)});
                      });
  // One handler: the acquire's start, which writes the SETs. Then this
  // thread, the io_context's only one, stays away until every node has
  // answered and the request timer is due.
  const auto all_set = [&] {
    for (std::size_t i = 0; i < 5; ++i) {
      if (command_calls(*e.admin[i], "set") < sets[i] + 1) return false;
    }
    return true;
  };
  bool sent = false;
  for (int handlers = 0; handlers < 20 && !sent; ++handlers) {
    REQUIRE(e.io.poll_one() == 1);
    sent = poll_until_idle(all_set, 100ms);
  }
  REQUIRE(sent);
  REQUIRE_FALSE(result->has_value());
  while (steady::now() < start + 2 * request_timeout) std::this_thread::yield();
  run_until(e.io, [&] { return result->has_value(); });
  CHECK(*completions == 1);
  CHECK((*result)->ec == errc::not_acquired);
  CHECK((*result)->held.empty());
  // One undo, on the two nodes that granted: not two.
  CHECK(e.key_nowhere(key) == false);  // the foreign keys stay
  for (std::size_t i : {3, 4}) {
    INFO("node " << i);
    CHECK(poll_until(e.io, [&] { return !e.admin[i]->exists(key); }));
    wait_on_timer(e.io, 100ms);  // room for a second undo to show up
    CHECK(script_calls(*e.admin[i]) == evals[i] + 1);
  }
  for (std::size_t i : {0, 1, 2}) CHECK(script_calls(*e.admin[i]) == evals[i]);
}

// Defect 4: after a connection dropped under a SET, the undo went to a node
// in backoff and failed at once: the key stayed for its full TTL.
TEST_CASE("an attempt whose connections dropped under its SETs is undone once reconnected",
          "[integration][defect]") {
  env e;
  auto proxies = proxy_nodes(e, {0, 1, 2});
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("dropped");
  for (auto& p : proxies) p->hold_replies(true);

  auto result = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire("dropped", once(30s, 5s), [result](error_code ec, redlock::lock l) {
    result->emplace(lock_result{ec, std::move(l)});
  });
  // Our SETs landed on the proxied nodes; their answers are held.
  for (std::size_t i : {0, 1, 2}) {
    INFO("node " << i);
    REQUIRE(poll_until(e.io, [&] { return e.admin[i]->exists(key); }));
  }
  for (auto& p : proxies) {
    p->reset_connections();
    p->hold_replies(false);
  }
  run_until(e.io, [&] { return result->has_value(); });
  CHECK((*result)->ec == errc::quorum_unreachable);
  // Undone everywhere within a few reconnect delays, not after 30 s.
  CHECK(e.key_nowhere(key));
}

// Defect 5: the handshake (here SELECT) was bounded only by the stall
// timeout, so commands queued behind it waited for it.
TEST_CASE("a connection whose handshake hangs fails after connect_timeout",
          "[integration][defect]") {
  env e;
  auto proxies = proxy_nodes(e, {0, 1, 2});
  for (auto& node : e.config.nodes) node.database = 1;
  e.config.connect_timeout = 300ms;
  e.config.stall_timeout = 20s;
  for (auto& p : proxies) p->hold_replies(true);
  redlock::client locks(e.io.get_executor(), e.config);

  const auto start = steady::now();
  auto got = acquire(e.io, locks, "handshake", once(10s, 2500ms));
  const auto elapsed = steady::now() - start;
  INFO(describe_nodes(got.held));
  INFO("elapsed " << std::chrono::duration_cast<milliseconds>(elapsed).count() << " ms");
  CHECK(got.ec == errc::quorum_unreachable);
  CHECK(elapsed < 1500ms);
  for (std::size_t i : {0, 1, 2}) {
    CHECK(got.held.nodes()[i].error == boost::asio::error::timed_out);
  }
  CHECK(e.log.count(redlock::log_level::warning, "timed out") >= 1);
}

TEST_CASE("a released handle is not valid, and releasing it again does nothing", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  e.warm_up_everywhere(locks);
  const auto key = e.key("handle");
  auto got = acquire(e.io, locks, "handle", once());
  REQUIRE_FALSE(got.ec);
  // Every SET has landed, so the deletes counted below have too once the
  // key is gone.
  REQUIRE(e.key_everywhere(key, got.held.token()));
  const redlock::lock copy = got.held;
  REQUIRE(copy.valid());

  const auto released = release(e.io, locks, got.held);
  CHECK_FALSE(released.ec);
  CHECK(copy.released());
  CHECK_FALSE(copy.valid());
  CHECK(copy.remaining_validity() == 0ms);
  CHECK(e.key_nowhere(key));

  std::vector<long long> evals;
  for (auto& a : e.admin) evals.push_back(script_calls(*a));
  const auto again = release(e.io, locks, copy);
  CHECK_FALSE(again.ec);
  CHECK(again.removed == 0);
  CHECK(extend(e.io, locks, copy, 10s).ec == errc::lock_released);
  for (std::size_t i = 0; i < 5; ++i) CHECK(script_calls(*e.admin[i]) == evals[i]);
  CHECK(release(e.io, locks, redlock::lock{}).ec == errc::not_a_lock);

  // A moved-from handle is empty; the one moved into holds the acquisition.
  auto next = acquire(e.io, locks, "handle", once());
  REQUIRE_FALSE(next.ec);
  redlock::lock moved = std::move(next.held);
  CHECK(next.held.empty());  // NOLINT(bugprone-use-after-move): what is being tested
  CHECK(release(e.io, locks, next.held).ec == errc::not_a_lock);
  CHECK(moved.valid());
  CHECK_FALSE(release(e.io, locks, moved).ec);
}

TEST_CASE("a release after the lock lapsed on a majority fails with lock_lost", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto key = e.key("lapsed");
  auto got = acquire(e.io, locks, "lapsed", once());
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  for (std::size_t i : {0, 1, 2}) REQUIRE(e.admin[i]->command({"DEL", key}).integer == 1);
  const auto released = release(e.io, locks, got.held);
  CHECK(released.ec == errc::lock_lost);
  CHECK(released.removed <= 2);
  CHECK(e.key_nowhere(key));
}

TEST_CASE("a stop_token ends a waiting acquire at once with operation_aborted", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  e.warm_up_everywhere(locks);
  std::vector<long long> sets_before;
  for (auto& a : e.admin) sets_before.push_back(command_calls(*a, "set"));
  auto holder = acquire(e.io, locks, "wanted", once());
  REQUIRE_FALSE(holder.ec);

  std::stop_source stop;
  auto options = waiting(10s);
  options.stop = stop.get_token();
  auto result = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire("wanted", options, [result](error_code ec, redlock::lock l) {
    result->emplace(lock_result{ec, std::move(l)});
  });
  REQUIRE(e.someone_waits_for(e.key("wanted")));
  const auto start = steady::now();
  std::thread([&stop] { stop.request_stop(); }).join();  // from another thread
  run_until(
      e.io, [&] { return result->has_value(); }, 2s);
  CHECK((*result)->ec == boost::asio::error::operation_aborted);
  CHECK(steady::now() - start < 1s);
  CHECK(e.key_everywhere(e.key("wanted"), holder.held.token()));

  // Requested before the start: nothing is sent at all. Counted once the
  // holder's SET and the waiter's one attempt have reached every node (the
  // attempt failed at a quorum).
  std::vector<long long> sets;
  for (std::size_t i = 0; i < 5; ++i) {
    REQUIRE(
        poll_until(e.io, [&] { return command_calls(*e.admin[i], "set") >= sets_before[i] + 2; }));
    sets.push_back(command_calls(*e.admin[i], "set"));
  }
  auto early = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire("other", options, [early](error_code ec, redlock::lock l) {
    early->emplace(lock_result{ec, std::move(l)});
  });
  run_until(e.io, [&] { return early->has_value(); });
  CHECK((*early)->ec == boost::asio::error::operation_aborted);
  for (std::size_t i = 0; i < 5; ++i) CHECK(command_calls(*e.admin[i], "set") == sets[i]);
}

TEST_CASE("cancelling an attempt in flight undoes its partial votes before completing",
          "[integration]") {
  env e;
  const auto answers = watch_answers(e.config);
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("partial");
  std::vector<std::size_t> answered;
  for (std::size_t i : {0, 1})
    answered.push_back(answers->count(redlock::operation_kind::acquire, i));
  for (std::size_t i : {2, 3, 4}) e.nodes.node(i).pause();

  std::stop_source stop;
  auto options = once(10s, 5s);
  options.stop = stop.get_token();
  auto result = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire("partial", options, [result](error_code ec, redlock::lock l) {
    result->emplace(lock_result{ec, std::move(l)});
  });
  for (std::size_t i : {0, 1}) REQUIRE(poll_until(e.io, [&] { return e.admin[i]->exists(key); }));
  // And the client has their grants (not only Redis): those are the votes
  // whose undo it awaits.
  run_until(e.io, [&] {
    return answers->count(redlock::operation_kind::acquire, 0) > answered[0] &&
           answers->count(redlock::operation_kind::acquire, 1) > answered[1];
  });
  const auto start = steady::now();
  stop.request_stop();
  run_until(
      e.io, [&] { return result->has_value(); }, 2s);
  CHECK((*result)->ec == boost::asio::error::operation_aborted);
  CHECK(steady::now() - start < 1s);                                  // not the 5 s request timeout
  for (std::size_t i : {0, 1}) CHECK_FALSE(e.admin[i]->exists(key));  // undone before completing
  for (std::size_t i : {2, 3, 4}) e.nodes.node(i).resume();
  CHECK(e.key_nowhere(key));  // the SETs that landed late were undone behind them
}

// Review finding: an extend answered "not ours" by one node and not at all
// by two reported lock_lost and ended the handle's validity, although the
// two silent nodes and the two that agreed still held the key.
TEST_CASE("an extend refused by a minority and unanswered elsewhere keeps the old validity",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("mixed");
  auto got = acquire(e.io, locks, "mixed", once(10s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  const auto deadline = got.held.validity_deadline();
  REQUIRE(e.admin[0]->command({"DEL", key}).integer == 1);  // not ours there any more
  for (std::size_t i : {1, 2}) e.nodes.node(i).pause();
  const auto extended = extend(e.io, locks, got.held, 10s);
  for (std::size_t i : {1, 2}) e.nodes.node(i).resume();
  CHECK(extended.ec == errc::quorum_unreachable);
  CHECK(count_nodes(extended.held, status::held_elsewhere) == 1);
  CHECK(count_nodes(extended.held, status::acquired) == 2);
  CHECK(got.held.valid());
  CHECK(got.held.validity_deadline() == deadline);
  CHECK(e.release_everywhere(locks, got.held).removed >= 3);
}

// Review finding: the request timer of an extend is cut short by the old
// validity; when it fired there the extend said quorum_unreachable, though
// what ended it was the lock's own expiry.
TEST_CASE("an extend whose old validity ends before a quorum answers fails with lock_expired",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto got = acquire(e.io, locks, "expiring", once(300ms, 250ms));
  REQUIRE_FALSE(got.ec);
  // The extend's request timeout is the lock's (250 ms); it starts with
  // about 100 ms of validity left, which end well before that.
  wait_on_timer(e.io, got.held.remaining_validity() - 100ms);
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).pause();
  const auto extended = extend(e.io, locks, got.held, 10s);
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).resume();
  CHECK(extended.ec == errc::lock_expired);
  CHECK_FALSE(got.held.valid());
}

// Review finding: a delete sent again after its connection dropped answers 0
// when its first copy had already deleted the key; release counted that as
// "not ours" and reported lock_lost (and ended the handle) for a lock it had
// in fact released.
TEST_CASE("a delete repeated after a reconnect is no evidence that the lock was lost",
          "[integration]") {
  env e;
  auto proxies = proxy_nodes(e, {0, 1, 2});
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("repeated");
  auto got = acquire(e.io, locks, "repeated", once(30s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  for (auto& p : proxies) p->hold_replies(true);

  auto released = std::make_shared<std::optional<unlock_result>>();
  locks.async_release(got.held, [released](error_code ec, std::size_t removed) {
    released->emplace(unlock_result{ec, removed});
  });
  // The deletes ran on the proxied nodes; their answers (1) are held.
  for (std::size_t i : {0, 1, 2}) {
    INFO("node " << i);
    REQUIRE(poll_until(e.io, [&] { return !e.admin[i]->exists(key); }));
  }
  // Lost with their connections: the deletes go again and now answer 0.
  for (auto& p : proxies) {
    p->reset_connections();
    p->hold_replies(false);
  }
  run_until(e.io, [&] { return released->has_value(); });
  CHECK((*released)->ec != errc::lock_lost);
  CHECK((*released)->removed == 2);
  CHECK(e.key_nowhere(key));
}

// Review findings: close() dropped the deletes still queued behind a write
// in flight, although the release's documentation promised they still ran
// (the lock then stayed for its whole TTL); and once close() wrote out what
// was queued, it also sent the SETs of the acquires it aborted, which then
// stayed for their TTL with nobody holding them.
TEST_CASE(
    "close() right after a release still sends the queued deletes and undoes aborted "
    "attempts",
    "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("closing");
  const auto other_key = e.key("closing-other");
  auto got = acquire(e.io, locks, "closing", once(30s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));

  auto other = std::make_shared<std::optional<lock_result>>();
  auto released = std::make_shared<std::optional<unlock_result>>();
  const auto start_acquire = [&] {
    locks.async_acquire("closing-other", once(30s), [other](error_code ec, redlock::lock l) {
      other->emplace(lock_result{ec, std::move(l)});
    });
  };
  const auto start_release = [&] {
    locks.async_release(got.held, [released](error_code ec, std::size_t removed) {
      released->emplace(unlock_result{ec, removed});
    });
  };
  // On the strand in this order, then close(): the first writes (each write
  // completes only in a later handler), the second queues behind it.
  SECTION("acquire, then release") {
    start_acquire();
    start_release();
  }
  SECTION("release, then acquire") {
    start_release();
    start_acquire();
  }
  locks.close();
  run_until(e.io, [&] { return released->has_value() && other->has_value(); });
  CHECK((*released)->ec == boost::asio::error::operation_aborted);
  CHECK((*other)->ec == boost::asio::error::operation_aborted);
  // Everything runs out: close() leaves no work behind.
  e.io.run();
  CHECK(e.key_nowhere(key));
  CHECK(e.key_nowhere(other_key));
}

// The same through the hand-over: the release wakes this client's waiter,
// whose SET goes out with the deletes; close() aborts the waiter.
TEST_CASE("close() right after a release that woke a waiter leaves the resource free",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("closing-handover");
  auto got = acquire(e.io, locks, "closing-handover", once(30s));
  REQUIRE_FALSE(got.ec);
  auto options = waiting(10s);
  options.ttl = 30s;
  auto waiter = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire("closing-handover", options, [waiter](error_code ec, redlock::lock l) {
    waiter->emplace(lock_result{ec, std::move(l)});
  });
  REQUIRE(e.someone_waits_for(key));
  locks.async_release(got.held, [](error_code, std::size_t) {});
  locks.close();
  run_until(e.io, [&] { return waiter->has_value(); });
  CHECK((*waiter)->ec == boost::asio::error::operation_aborted);
  e.io.run();
  CHECK(e.key_nowhere(key));
}

// Review finding: a node refused by another owner at acquire time can never
// hold our key, so an extend that hears "not ours" from two nodes and
// nothing from the rest, one of which is such a node, has fewer than a
// quorum of possible holders: the lock is lost, not merely unconfirmed.
TEST_CASE("an extend counts nodes held elsewhere at acquire as never holding the lock",
          "[integration]") {
  env e;
  auto proxies = proxy_nodes(e, {4});
  redlock::client locks(e.io.get_executor(), e.config);
  e.warm_up_everywhere(locks);
  const auto key = e.key("holders");
  REQUIRE(foreign_set_nx(*e.admin[4], key, "foreign"));
  // Node 4's refusal comes after the quorum, as a slow node's would.
  proxies[0]->hold_replies(true);
  const auto sent_before = proxies[0]->traffic().to_clients;
  auto got = acquire(e.io, locks, "holders", once(10s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(count_nodes(got.held, status::held_elsewhere) == 0);
  // The quorum is any three of nodes 0 to 3: the fourth's SET may come later.
  REQUIRE(e.key_everywhere_but(key, got.held.token(), {4}));
  proxies[0]->hold_replies(false);
  REQUIRE(poll_until(e.io, [&] { return proxies[0]->traffic().to_clients > sent_before; }));
  for (std::size_t i : {0, 1}) REQUIRE(e.admin[i]->command({"DEL", key}).integer == 1);
  for (std::size_t i : {2, 3, 4}) e.nodes.node(i).pause();
  const auto extended = extend(e.io, locks, got.held, 10s);
  for (std::size_t i : {2, 3, 4}) e.nodes.node(i).resume();
  CHECK(extended.ec == errc::lock_lost);
  CHECK_FALSE(got.held.valid());
  release(e.io, locks, got.held);
}

// Review finding: a waiter woken by a release that then gave up without
// using it kept the wake-up; the next waiter slept until its retry delay
// although the resource was free.
TEST_CASE("a woken waiter that gives up passes the wake-up on to the next waiter",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("passed");
  auto held = acquire(e.io, locks, "passed", once());
  REQUIRE_FALSE(held.ec);
  REQUIRE(e.key_everywhere(key, held.held.token()));  // counts below start after our SETs
  std::vector<long long> sets_before;
  for (std::size_t i = 0; i < 5; ++i) sets_before.push_back(command_calls(*e.admin[i], "set"));

  std::stop_source give_up;
  auto first_options = waiting(10s);
  first_options.stop = give_up.get_token();
  auto first = std::make_shared<std::optional<lock_result>>();
  auto second = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire("passed", first_options, [first](error_code ec, redlock::lock l) {
    first->emplace(lock_result{ec, std::move(l)});
  });
  REQUIRE(e.someone_waits_for(key));  // the first waits, first in line
  locks.async_acquire("passed", waiting(10s), [second](error_code ec, redlock::lock l) {
    second->emplace(lock_result{ec, std::move(l)});
  });
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    REQUIRE(
        poll_until(e.io, [&] { return command_calls(*e.admin[i], "set") >= sets_before[i] + 2; }));
  }

  // The release wakes the first waiter, whose attempt goes out behind the
  // deletes; it is cancelled in the very next handler, before any answer.
  const auto start = steady::now();
  locks.async_release(held.held, [](error_code, std::size_t) {});
  give_up.request_stop();
  run_until(
      e.io, [&] { return first->has_value() && second->has_value(); }, 5s);
  CHECK((*first)->ec == boost::asio::error::operation_aborted);
  REQUIRE_FALSE((*second)->ec);
  CHECK(steady::now() - start < 5s);  // far from the 10 s retry delay
  CHECK(e.key_everywhere(key, (*second)->held.token()));
  CHECK(e.release_everywhere(locks, (*second)->held).removed >= 3);
}

// Second review: a handle used through another client was extended with
// the first client's per-node facts and raced its strand; it is refused.
TEST_CASE("a lock is extended and released only through the client that acquired it",
          "[integration]") {
  env e;
  redlock::client first(e.io.get_executor(), e.config);
  redlock::client second(e.io.get_executor(), e.config);
  auto got = acquire(e.io, first, "owned", once());
  REQUIRE_FALSE(got.ec);
  CHECK(extend(e.io, second, got.held, 20s).ec == errc::foreign_lock);
  CHECK(release(e.io, second, got.held).ec == errc::foreign_lock);
  CHECK(got.held.valid());
  CHECK_FALSE(got.held.released());
  CHECK(e.release_everywhere(first, got.held).removed >= 3);
}

TEST_CASE("blocking_client::try_acquire returns no lock when it is held elsewhere",
          "[integration]") {
  env e;
  redlock::blocking_client blocking(e.config);
  auto first = blocking.try_acquire("try", once());
  REQUIRE(first.has_value());
  CHECK(first->valid());
  CHECK_FALSE(blocking.try_acquire("try", once()).has_value());
  CHECK(blocking.release(*first) >= 3);
  CHECK_THROWS_AS(blocking.try_acquire("", once()), boost::system::system_error);
}

// Waiting with a deadline in the blocking style (issue "Holding a lock
// through real work", waiting).
TEST_CASE("blocking_client::try_acquire_for waits for the holder's release", "[integration]") {
  env e;
  redlock::blocking_client holder(e.config);
  redlock::blocking_client waiter(e.config);
  auto held = holder.try_acquire("wait-for", once(30s));
  REQUIRE(held.has_value());
  const auto key = e.key("wait-for");

  std::optional<redlock::lock> got;
  std::jthread waiting([&] { got = waiter.try_acquire_for("wait-for", 10s, once(30s)); });
  REQUIRE(e.someone_waits_for(key));
  const auto released_at = steady::now();
  CHECK(holder.release(*held) >= 3);
  waiting.join();
  REQUIRE(got.has_value());
  CHECK(got->valid());
  // Woken by the release, not by a retry delay running out at the end.
  CHECK(steady::now() - released_at < 5s);
  // The holder's deletes complete at a quorum: on a slower node our SET may
  // have met the old key, and that node is then left empty. Only our token,
  // on a majority at least.
  const auto settled = [&] {
    std::size_t holding = 0;
    for (auto& a : e.admin) {
      const auto value = a->get(key);
      if (value && *value != got->token()) return false;
      holding += value ? 1 : 0;
    }
    return holding >= 3;
  };
  CHECK(poll_until(e.io, settled));
  CHECK(waiter.release(*got) >= 3);
}

TEST_CASE("blocking_client::try_acquire_for and _until give up at the deadline, leaving no votes",
          "[integration]") {
  env e;
  redlock::blocking_client holder(e.config);
  redlock::blocking_client waiter(e.config);
  auto held = holder.try_acquire("deadline", once(30s));
  REQUIRE(held.has_value());
  const auto key = e.key("deadline");
  REQUIRE(e.key_everywhere(key, held->token()));  // counts below start after its SETs

  // A deadline already past: one attempt (it completes before a second
  // could be sent, so once every node has seen one, none sees two).
  std::vector<long long> sets;
  for (auto& a : e.admin) sets.push_back(command_calls(*a, "set"));
  CHECK_FALSE(waiter.try_acquire_until("deadline", std::chrono::system_clock::now() - 1s, once())
                  .has_value());
  for (std::size_t i = 0; i < 5; ++i) {
    INFO("node " << i);
    CHECK(poll_until(e.io, [&] { return command_calls(*e.admin[i], "set") >= sets[i] + 1; }));
    CHECK(command_calls(*e.admin[i], "set") == sets[i] + 1);
  }

  const auto start = steady::now();
  CHECK_FALSE(waiter.try_acquire_for("deadline", 400ms, once(30s)).has_value());
  const auto waited = steady::now() - start;
  CHECK(waited >= 400ms);  // it listened until the deadline
  CHECK(waited < 5s);
  CHECK(e.key_everywhere(key, held->token()));

  // Cancelled through the stop token while waiting: an error, not "held".
  std::stop_source stop;
  auto options = once(30s);
  options.stop = stop.get_token();
  std::jthread stopper([&] {
    if (e.someone_waits_for(key)) stop.request_stop();
  });
  CHECK_THROWS_AS(waiter.try_acquire_for("deadline", 10s, options), boost::system::system_error);
  stopper.join();
  CHECK(e.key_everywhere(key, held->token()));
  CHECK(holder.release(*held) >= 3);
}

#if BOOST_VERSION >= 107700
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

TEST_CASE("Asio's per-operation cancellation slot cancels a waiting acquire", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto holder = acquire(e.io, locks, "slot", once());
  REQUIRE_FALSE(holder.ec);

  boost::asio::cancellation_signal signal;
  auto result = std::make_shared<std::optional<lock_result>>();
  locks.async_acquire(
      "slot", waiting(10s),
      boost::asio::bind_cancellation_slot(signal.slot(), [result](error_code ec, redlock::lock l) {
        result->emplace(lock_result{ec, std::move(l)});
      }));
  REQUIRE(e.someone_waits_for(e.key("slot")));
  signal.emit(boost::asio::cancellation_type::terminal);
  run_until(
      e.io, [&] { return result->has_value(); }, 2s);
  CHECK((*result)->ec == boost::asio::error::operation_aborted);

  // A slot whose operation completed is free again: emitting does nothing.
  auto released = std::make_shared<std::optional<unlock_result>>();
  locks.async_release(holder.held, boost::asio::bind_cancellation_slot(
                                       signal.slot(), [released](error_code ec, std::size_t n) {
                                         released->emplace(unlock_result{ec, n});
                                       }));
  run_until(e.io, [&] { return released->has_value(); });
  CHECK_FALSE((*released)->ec);
  signal.emit(boost::asio::cancellation_type::terminal);
}

TEST_CASE("the cancellation slot ends an extend in flight, which keeps the old validity",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto got = acquire(e.io, locks, "slot-extend", once(10s));
  REQUIRE_FALSE(got.ec);
  const auto deadline = got.held.validity_deadline();
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).pause();

  boost::asio::cancellation_signal signal;
  auto result = std::make_shared<std::optional<lock_result>>();
  locks.async_extend(
      got.held, 20s,
      boost::asio::bind_cancellation_slot(signal.slot(), [result](error_code ec, redlock::lock l) {
        result->emplace(lock_result{ec, std::move(l)});
      }));
  // Granted by the two live nodes: the round is in flight, waiting for the
  // paused ones (request timeout 500 ms).
  for (std::size_t i : {3, 4}) {
    REQUIRE(poll_until(e.io, [&] { return e.admin[i]->pttl(e.key("slot-extend")) > 10500; }));
  }
  signal.emit(boost::asio::cancellation_type::terminal);
  run_until(
      e.io, [&] { return result->has_value(); }, 2s);
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).resume();
  CHECK((*result)->ec == boost::asio::error::operation_aborted);
  CHECK((*result)->held.token() == got.held.token());
  CHECK(got.held.validity_deadline() == deadline);
  CHECK(got.held.valid());
  CHECK(e.release_everywhere(locks, got.held).removed >= 3);
}

TEST_CASE("the cancellation slot ends a release in flight, and its deletes still run",
          "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("slot-release");
  auto got = acquire(e.io, locks, "slot-release", once(30s));
  REQUIRE_FALSE(got.ec);
  REQUIRE(e.key_everywhere(key, got.held.token()));
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).pause();

  boost::asio::cancellation_signal signal;
  auto result = std::make_shared<std::optional<unlock_result>>();
  locks.async_release(got.held, boost::asio::bind_cancellation_slot(
                                    signal.slot(), [result](error_code ec, std::size_t n) {
                                      result->emplace(unlock_result{ec, n});
                                    }));
  for (std::size_t i : {3, 4}) {
    REQUIRE(poll_until(e.io, [&] { return !e.admin[i]->exists(key); }));
  }
  signal.emit(boost::asio::cancellation_type::terminal);
  run_until(
      e.io, [&] { return result->has_value(); }, 2s);
  CHECK((*result)->ec == boost::asio::error::operation_aborted);
  CHECK(got.held.released());
  CHECK_FALSE(got.held.valid());
  for (std::size_t i : {0, 1, 2}) e.nodes.node(i).resume();
  CHECK(e.key_nowhere(key));  // the queued deletes ran once the nodes thawed
}
#endif
