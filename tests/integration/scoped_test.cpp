// Scoped locking in every style: blocking scoped_lock and run_exclusive,
// callback async_run_exclusive, coroutine run_exclusive.
#include "test_env.hpp"

#include <redlock/run_exclusive.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
using redlock::keep_options;
using redlock::keeper;

namespace {

/// Until `token` is stopped, or `limit` passes; true if stopped.
bool wait_for_stop(const std::stop_token& token, milliseconds limit) {
  std::mutex mutex;
  std::condition_variable_any woken;
  std::unique_lock guard(mutex);
  return woken.wait_for(guard, token, limit, [] { return false; }) || token.stop_requested();
}

}  // namespace

TEST_CASE("blocking run_exclusive runs the work under the lock and releases it after",
          "[integration][scoped]") {
  env e;
  redlock::blocking_client locks(e.config);
  const auto key = e.key("report");
  SECTION("returns the work's result") {
    const int result = locks.run_exclusive("report", once(500ms), {}, [&](std::stop_token stop) {
      CHECK(e.nodes_holding(key) >= 3);  // a quorum; a slower node may not have it yet
      // Longer than the TTL: kept extended meanwhile.
      CHECK_FALSE(wait_for_stop(stop, 1200ms));
      return 42;
    });
    CHECK(result == 42);
    CHECK(e.key_nowhere(key));
  }
  SECTION("an exception from the work propagates, and the lock is released first") {
    CHECK_THROWS_AS(locks.run_exclusive("report", [&] { throw std::runtime_error("job failed"); }),
                    std::runtime_error);
    CHECK(e.key_nowhere(key));
  }
  SECTION("held elsewhere: not_acquired, and the work does not run") {
    auto other = locks.acquire("report", once());
    bool ran = false;
    CHECK(code_of([&] { locks.run_exclusive("report", once(), {}, [&] { ran = true; }); }) ==
          errc::not_acquired);
    CHECK_FALSE(ran);
    locks.release(other);
  }
  SECTION("bad keep options: refused before anything is locked") {
    keep_options bad;
    bad.lost_margin = 5s;
    CHECK(code_of([&] { locks.run_exclusive("report", once(), bad, [] {}); }) ==
          errc::invalid_keep_options);
    CHECK_FALSE(e.admin[0]->exists(key));
  }
}

TEST_CASE("blocking run_exclusive: a lock lost while the work runs stops the work and throws",
          "[integration][scoped]") {
  env e;
  auto proxies = proxy_nodes(e, {0, 1, 2});
  redlock::blocking_client locks(e.config);
  bool stopped = false;
  const auto ec = code_of([&] {
    locks.run_exclusive("job", once(600ms), {}, [&](redlock::scoped_lock& scope) {
      for (auto& p : proxies) p->hold_replies(true);
      stopped = wait_for_stop(scope.stop_token(), 5s);
      CHECK(scope.held().valid());  // stopped before the validity ended
      for (auto& p : proxies) p->hold_replies(false);
    });
  });
  CHECK(stopped);
  CHECK(ec == errc::lock_expiring);
  CHECK(e.key_nowhere(e.key("job")));
}

TEST_CASE("scoped_lock releases when destroyed, moves, and releases once",
          "[integration][scoped]") {
  env e;
  redlock::blocking_client locks(e.config);
  const auto key = e.key("scope");
  {
    auto scope = locks.acquire_scoped("scope", once(500ms));
    CHECK(scope.owns_lock());
    REQUIRE(e.key_everywhere(key, scope.held().token()));
    redlock::scoped_lock moved = std::move(scope);
    CHECK_FALSE(scope.owns_lock());
    CHECK(moved.owns_lock());
    // Held past its TTL while in scope.
    std::this_thread::sleep_for(800ms);
    CHECK(moved.held().valid());
    CHECK(e.nodes_holding(key) >= 3);  // kept on a quorum; a slow node may miss an extend
  }
  CHECK(e.key_nowhere(key));
  auto scope = locks.acquire_scoped("scope", once(2s));
  CHECK(scope.release() >= 3);
  CHECK_FALSE(scope.owns_lock());
  CHECK(scope.release() == 0);
  CHECK(code_of([&] {
          auto held = locks.acquire_scoped("scope", once(2s));
          auto again = locks.acquire_scoped("scope", once(2s));
        }) == errc::not_acquired);
  CHECK(e.key_nowhere(key));
}

TEST_CASE("async_run_exclusive with callbacks", "[integration][scoped]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("cb");
  auto timer = std::make_shared<boost::asio::steady_timer>(e.io);
  SECTION("work that outlasts the TTL completes under the lock") {
    bool held_during_work = false;
    auto [ec] = run_op<error_code>(e.io, [&](auto handler) {
      redlock::async_run_exclusive(
          locks, "cb", once(400ms), {},
          [&, timer](keeper& kept, redlock::work_done done) {
            timer->expires_after(900ms);
            timer->async_wait([&, done = std::move(done)](error_code) mutable {
              held_during_work = kept.held().valid() && e.nodes_holding(key) >= 3;
              done({});
            });
          },
          std::move(handler));
    });
    CHECK_FALSE(ec);
    CHECK(held_during_work);
    CHECK(e.key_nowhere(key));
  }
  SECTION("the work's error is reported, and the lock released") {
    auto [ec] = run_op<error_code>(e.io, [&](auto handler) {
      redlock::async_run_exclusive(
          locks, "cb", once(2s), {},
          [](keeper&, redlock::work_done done) { done(boost::asio::error::no_permission); },
          std::move(handler));
    });
    CHECK(ec == boost::asio::error::no_permission);
    CHECK(e.key_nowhere(key));
  }
  SECTION("work that throws: released, and the exception leaves run()") {
    bool thrown = false;
    try {
      run_op<error_code>(e.io, [&](auto handler) {
        redlock::async_run_exclusive(
            locks, "cb", once(2s), {},
            [](keeper&, redlock::work_done) { throw std::runtime_error("boom"); },
            std::move(handler));
      });
    } catch (const std::runtime_error&) {
      thrown = true;
    }
    CHECK(thrown);
    CHECK(e.key_nowhere(key));
  }
  SECTION("held elsewhere: the acquire's error, the work never runs") {
    auto other = acquire(e.io, locks, "cb", once());
    REQUIRE_FALSE(other.ec);
    bool ran = false;
    auto [ec] = run_op<error_code>(e.io, [&](auto handler) {
      redlock::async_run_exclusive(
          locks, "cb", once(), {}, [&](keeper&, redlock::work_done) { ran = true; },
          std::move(handler));
    });
    CHECK(ec == errc::not_acquired);
    CHECK_FALSE(ran);
  }
}

TEST_CASE("run_exclusive in a coroutine", "[integration][scoped]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  const auto key = e.key("coro");
  auto outcome = std::make_shared<std::optional<std::pair<std::exception_ptr, int>>>();
  auto on_done = [outcome](std::exception_ptr failure, int value) {
    outcome->emplace(failure, value);
  };
  SECTION("returns the work's value after releasing") {
    boost::asio::co_spawn(
        e.io,
        redlock::run_exclusive(locks, "coro", once(400ms), {},
                               [&](keeper& kept) -> boost::asio::awaitable<int> {
                                 boost::asio::steady_timer t(e.io, 900ms);
                                 co_await t.async_wait(boost::asio::use_awaitable);
                                 co_return kept.held().valid() ? 7 : -1;
                               }),
        on_done);
    run_until(e.io, [&] { return outcome->has_value(); });
    CHECK_FALSE((*outcome)->first);
    CHECK((*outcome)->second == 7);
    CHECK(e.key_nowhere(key));
  }
  SECTION("an exception from the work propagates after the release is started") {
    boost::asio::co_spawn(e.io,
                          redlock::run_exclusive(locks, "coro", once(2s), {},
                                                 [&](keeper&) -> boost::asio::awaitable<int> {
                                                   throw std::runtime_error("boom");
                                                   co_return 0;
                                                 }),
                          on_done);
    run_until(e.io, [&] { return outcome->has_value(); });
    CHECK((*outcome)->first);
    CHECK(e.key_nowhere(key));
  }
  SECTION("a lost lock is thrown as its reason, the work's value dropped") {
    auto proxies = std::make_shared<std::vector<std::unique_ptr<redlock::test::fault_proxy>>>();
    env e2;
    *proxies = proxy_nodes(e2, {0, 1, 2});
    redlock::client paused(e2.io.get_executor(), e2.config);
    warm_up(e2.io, paused);
    boost::asio::co_spawn(
        e2.io,
        redlock::run_exclusive(paused, "coro", once(600ms), {},
                               [&](keeper& kept) -> boost::asio::awaitable<int> {
                                 for (auto& p : *proxies) p->hold_replies(true);
                                 co_await kept.async_wait_lost(boost::asio::use_awaitable);
                                 for (auto& p : *proxies) p->hold_replies(false);
                                 co_return 1;
                               }),
        on_done);
    run_until(e2.io, [&] { return outcome->has_value(); });
    REQUIRE((*outcome)->first);
    try {
      std::rethrow_exception((*outcome)->first);
    } catch (const boost::system::system_error& failure) {
      CHECK(failure.code() == errc::lock_expiring);
    }
    CHECK(e2.key_nowhere(e2.key("coro")));
  }
}

// Review: work that dropped `done` left the handler uncalled and the key on
// the nodes for its TTL.
TEST_CASE(
    "async_run_exclusive whose work drops done releases and completes with "
    "operation_aborted",
    "[integration][scoped]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  auto [ec] = run_op<error_code>(e.io, [&](auto handler) {
    redlock::async_run_exclusive(
        locks, "dropped-done", once(30s), keep_options{},
        [](keeper&, redlock::work_done) { /* gave up: done is dropped */ }, std::move(handler));
  });
  CHECK(ec == boost::asio::error::operation_aborted);
  CHECK(e.key_nowhere(e.key("dropped-done")));
}

// Review: a coroutine destroyed while in the work left the key for its TTL.
TEST_CASE("run_exclusive: a coroutine destroyed while in the work starts the release",
          "[integration][scoped]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  warm_up(e.io, locks);
  // The coroutine runs on an io_context of its own, the client on e.io.
  auto work_io = std::make_unique<boost::asio::io_context>();
  bool started = false;
  boost::asio::co_spawn(
      *work_io,
      redlock::run_exclusive(locks, "coro-gone", once(30s), keep_options{},
                             [&](keeper&) -> boost::asio::awaitable<void> {
                               started = true;
                               boost::asio::steady_timer forever(
                                   co_await boost::asio::this_coro::executor, 1h);
                               co_await forever.async_wait(boost::asio::use_awaitable);
                             }),
      boost::asio::detached);
  // The acquire completes through e.io, then the work starts on work_io.
  const auto end = steady::now() + 5s;
  while (!started && steady::now() < end) {
    e.io.restart();
    e.io.run_for(5ms);
    work_io->restart();
    work_io->run_for(5ms);
  }
  REQUIRE(started);
  work_io.reset();  // the coroutine frame is destroyed
  CHECK(e.key_nowhere(e.key("coro-gone")));
}

// Review: scoped_lock kept a raw pointer to its blocking_client.
TEST_CASE("a scoped_lock may outlive its blocking_client and still releases",
          "[integration][scoped]") {
  env e;
  auto blocking = std::make_unique<redlock::blocking_client>(e.config);
  auto scope = blocking->acquire_scoped("outlived", once(30s));
  const auto key = e.key("outlived");
  REQUIRE(e.key_everywhere(key, scope.held().token()));
  blocking.reset();
  CHECK(scope.owns_lock());
  CHECK(scope.release() >= 3);
  CHECK(e.key_nowhere(key));
}

// Review: a keeper keeps no copy of the acquire's node outcomes, and a
// scoped lock has no handle but held().
TEST_CASE("a scoped lock's handle tells each node's outcome", "[integration][scoped]") {
  env e(3);
  redlock::blocking_client blocking(e.config);
  auto scoped = blocking.acquire_scoped("scoped-nodes", once());
  CHECK(scoped.held().valid());
  REQUIRE(scoped.held().nodes().size() == 3);
  // At a quorum: the third node's answer may not have come yet.
  const auto& nodes = scoped.held().nodes();
  CHECK(std::count_if(nodes.begin(), nodes.end(), [](const redlock::node_outcome& node) {
          return node.state == redlock::node_outcome::status::acquired;
        }) >= 2);
  scoped.release();
  CHECK_FALSE(scoped.held().valid());
}
