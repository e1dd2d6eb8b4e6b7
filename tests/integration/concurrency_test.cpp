// The client driven from many threads at once, on a multi-threaded executor,
// and from coroutines racing it against a timer: what ThreadSanitizer runs
// to see the strand, the registry and the completion paths under contention.
#include "test_env.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/version.hpp>

#if BOOST_VERSION >= 107700
#include <boost/asio/experimental/awaitable_operators.hpp>
#endif

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
namespace asio = boost::asio;

namespace {

/// A handler that fulfils a promise with both arguments (Boost 1.74 has no
/// as_tuple), and the future to wait on.
template <class Result>
struct promised {
  std::shared_ptr<std::promise<std::pair<error_code, Result>>> promise =
      std::make_shared<std::promise<std::pair<error_code, Result>>>();
  std::future<std::pair<error_code, Result>> future = promise->get_future();

  auto handler() {
    return [p = promise](error_code ec, Result r) { p->set_value({ec, std::move(r)}); };
  }
  /// Waits at most `limit`; false if it did not complete by then.
  bool ready(milliseconds limit = op_limit) {
    return future.wait_for(limit) == std::future_status::ready;
  }
};

}  // namespace

// Four threads acquire and release on a client whose executor has two
// threads of its own, while a fifth closes the client midway: every
// operation completes exactly once, with success or operation_aborted, and
// nothing hangs.
TEST_CASE("many threads acquire and release while another closes the client", "[integration]") {
  env e;
  asio::thread_pool pool(2);
  auto locks = std::make_unique<redlock::client>(pool.get_executor(), e.config);
  constexpr int threads = 4;
  constexpr int rounds = 40;
  std::atomic<int> acquired{0}, aborted{0}, other{0}, finished{0};
  std::atomic<bool> closed{false};

  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t) {
    callers.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        // Two threads share each resource, so some acquires are refused.
        promised<redlock::lock> got;
        locks->async_acquire("shared-" + std::to_string(t % 2), once(5s), got.handler());
        if (!got.ready()) {
          ++other;
          return;
        }
        auto [ec, held] = got.future.get();
        if (!ec) {
          ++acquired;
          promised<std::size_t> released;
          locks->async_release(held, released.handler());
          if (!released.ready()) {
            ++other;
            return;
          }
          if (released.future.get().first == asio::error::operation_aborted) ++aborted;
        } else if (ec == asio::error::operation_aborted) {
          ++aborted;
        } else if (ec != errc::not_acquired) {
          ++other;
        }
      }
      ++finished;
    });
  }
  std::thread closer([&] {
    while (acquired.load() < 20 && finished.load() < threads) std::this_thread::yield();
    locks->close();
    closed = true;
  });
  for (auto& c : callers) c.join();
  closer.join();
  CHECK(closed.load());
  CHECK(other.load() == 0);
  CHECK(acquired.load() >= 20);
  // Operations after close() end at once with operation_aborted.
  promised<redlock::lock> late;
  locks->async_acquire("late", once(), late.handler());
  REQUIRE(late.ready());
  CHECK(late.future.get().first == asio::error::operation_aborted);
  locks.reset();
  pool.join();  // close() leaves no work behind
}

#if BOOST_VERSION >= 107700
// An acquire raced against a timer with Asio's awaitable operators, on a
// thread pool: the loser is cancelled through its cancellation slot from
// whichever thread the winner completed on.
TEST_CASE("co_await (acquire || timer) on a thread pool cancels the loser", "[integration]") {
  using namespace boost::asio::experimental::awaitable_operators;
  env e;
  asio::thread_pool pool(2);
  redlock::client locks(pool.get_executor(), e.config);
  const auto key = e.key("raced");

  auto race = [&](milliseconds timeout) {
    return asio::co_spawn(
        pool,
        [&locks, timeout]() -> asio::awaitable<std::variant<redlock::lock, std::monostate>> {
          asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
          co_return co_await (locks.async_acquire("raced", waiting(10s), asio::use_awaitable) ||
                              timer.async_wait(asio::use_awaitable));
        },
        asio::use_future);
  };

  // Free: the acquire wins and the timer is cancelled.
  auto first = race(5s);
  REQUIRE(first.wait_for(op_limit) == std::future_status::ready);
  auto won = first.get();
  REQUIRE(won.index() == 0);
  const auto held = std::get<0>(won);
  CHECK(held.valid());
  CHECK(e.key_everywhere(key, held.token()));

  // Held: the acquire waits (retry delay 10 s) and the timer wins; the
  // cancelled acquire leaves nothing on the nodes.
  const auto start = steady::now();
  auto second = race(200ms);
  REQUIRE(second.wait_for(op_limit) == std::future_status::ready);
  CHECK(second.get().index() == 1);
  CHECK(steady::now() - start < 5s);
  CHECK(e.key_everywhere(key, held.token()));

  promised<std::size_t> released;
  locks.async_release(held, released.handler());
  REQUIRE(released.ready());
  CHECK_FALSE(released.future.get().first);
  CHECK(e.key_nowhere(key));
  locks.close();
  pool.join();
}
#endif
