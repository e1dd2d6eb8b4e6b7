// The same lock, extend and unlock through every way of being told the
// result: callbacks, futures, coroutines and the blocking facade; and the
// rules every handler follows (never inline, always on its executor).
#include "test_env.hpp"  // first: it includes <redlock/redlock.hpp> before any Boost header

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
namespace asio = boost::asio;

namespace {

/// Runs an io_context on a thread of its own for as long as it lives.
class io_thread {
 public:
  explicit io_thread(asio::io_context& io)
      : io_(io), work_(io.get_executor()), thread_([this] { io_.run(); }) {}
  ~io_thread() {
    work_.reset();
    io_.stop();  // a failed test may leave work behind; env's destructor finishes it
    thread_.join();
  }
  io_thread(const io_thread&) = delete;
  io_thread& operator=(const io_thread&) = delete;

 private:
  asio::io_context& io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

/// A foreign owner holds `key` on every node.
void hold_elsewhere(env& e, const std::string& key) {
  for (auto& admin : e.admin) REQUIRE(foreign_set_nx(*admin, key, "othertoken"));
}

/// Waits for `f`, then for the io thread to finish the handler that made it
/// ready (and to drop the promise). Otherwise an exception could be freed
/// on the io thread while the test reads it, and TSan, which cannot see the
/// reference count inside libstdc++, would call that a race.
template <class T>
void wait_ready(asio::io_context& io, std::future<T>& f) {
  REQUIRE(f.wait_for(op_limit) == std::future_status::ready);
  auto handler_done = asio::post(io, asio::use_future);
  REQUIRE(handler_done.wait_for(op_limit) == std::future_status::ready);
}

template <class T>
T get_within(asio::io_context& io, std::future<T>& f) {
  wait_ready(io, f);
  return f.get();
}

}  // namespace

TEST_CASE("plain callbacks: lock then extend then unlock chained in handlers", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);

  struct results {
    std::optional<lock_result> locked, extended;
    std::optional<unlock_result> unlocked;
  };
  auto r = std::make_shared<results>();
  locks.async_acquire("chained", once(5s), [&locks, r](error_code ec, redlock::lock held) {
    r->locked = lock_result{ec, held};
    if (ec) return;
    locks.async_extend(held, 20s, [&locks, r](error_code ec, redlock::lock extended) {
      r->extended = lock_result{ec, extended};
      if (ec) return;
      locks.async_release(extended, [r](error_code ec, std::size_t removed) {
        r->unlocked = unlock_result{ec, removed};
      });
    });
  });
  run_until(e.io, [&] {
    return r->unlocked.has_value() || (r->locked && r->locked->ec) ||
           (r->extended && r->extended->ec);
  });

  REQUIRE(r->locked);
  CHECK_FALSE(r->locked->ec);
  REQUIRE(r->extended);
  CHECK_FALSE(r->extended->ec);
  CHECK(r->extended->held.ttl() == 20s);
  // Past what the 10 s acquire gave: the extend moved every copy's deadline.
  CHECK(r->extended->held.validity_deadline() - redlock::clock::now() > 15s);
  CHECK(r->locked->held.validity_deadline() == r->extended->held.validity_deadline());
  REQUIRE(r->unlocked);
  CHECK_FALSE(r->unlocked->ec);
  CHECK(r->unlocked->removed >= 3);
}

TEST_CASE("use_future: results through futures and failures as system_error", "[integration]") {
  env e;
  hold_elsewhere(e, e.key("busy"));
  redlock::client locks(e.io.get_executor(), e.config);
  io_thread runner(e.io);

  std::future<redlock::lock> locking = locks.async_acquire("futures", once(5s), asio::use_future);
  const redlock::lock held = get_within(e.io, locking);
  CHECK_FALSE(held.empty());

  std::future<redlock::lock> extending = locks.async_extend(held, 20s, asio::use_future);
  const redlock::lock extended = get_within(e.io, extending);
  CHECK(extended.ttl() == 20s);
  CHECK(extended.remaining_validity() > 15s);

  std::future<std::size_t> unlocking = locks.async_release(extended, asio::use_future);
  CHECK(get_within(e.io, unlocking) >= 3);

  std::future<redlock::lock> refused = locks.async_acquire("busy", once(), asio::use_future);
  wait_ready(e.io, refused);
  try {
    refused.get();
    FAIL("acquired a lock held elsewhere");
  } catch (const boost::system::system_error& error) {
    CHECK(error.code() == errc::not_acquired);
  }
}

namespace {

struct coroutine_report {
  redlock::lock held;
  redlock::lock extended;
  std::size_t removed = 0;
  error_code refused;  // what the lock of a held resource threw
};

asio::awaitable<void> lock_extend_unlock(redlock::client& locks,
                                         std::shared_ptr<coroutine_report> out) {
  out->held = co_await locks.async_acquire("coroutine", once(5s), asio::use_awaitable);
  out->extended = co_await locks.async_extend(out->held, 20s, asio::use_awaitable);
  out->removed = co_await locks.async_release(out->extended, asio::use_awaitable);
  try {
    co_await locks.async_acquire("busy", once(), asio::use_awaitable);
  } catch (const boost::system::system_error& error) {
    out->refused = error.code();
  }
}

asio::awaitable<void> lock_busy(redlock::client& locks) {
  co_await locks.async_acquire("busy", once(), asio::use_awaitable);
}

/// co_spawns `coroutine` and runs the io_context until it ended; returns
/// what escaped it.
std::exception_ptr run_coroutine(env& e, asio::awaitable<void> coroutine) {
  auto ended = std::make_shared<std::optional<std::exception_ptr>>();
  asio::co_spawn(e.io, std::move(coroutine),
                 [ended](std::exception_ptr ep) { ended->emplace(ep); });
  run_until(
      e.io, [&] { return ended->has_value(); }, op_limit, "the coroutine");
  return **ended;
}

}  // namespace

TEST_CASE("use_awaitable: co_await in a coroutine and failures thrown as system_error",
          "[integration]") {
  env e;
  hold_elsewhere(e, e.key("busy"));
  redlock::client locks(e.io.get_executor(), e.config);

  auto report = std::make_shared<coroutine_report>();
  const auto escaped = run_coroutine(e, lock_extend_unlock(locks, report));
  REQUIRE_FALSE(escaped);
  CHECK_FALSE(report->held.empty());
  CHECK(report->extended.ttl() == 20s);
  CHECK(report->extended.validity_deadline() - redlock::clock::now() > 15s);
  CHECK(report->removed >= 3);
  CHECK(report->refused == errc::not_acquired);

  // Uncaught, the failure reaches co_spawn's handler.
  const auto thrown = run_coroutine(e, lock_busy(locks));
  REQUIRE(thrown);
  try {
    std::rethrow_exception(thrown);
  } catch (const boost::system::system_error& error) {
    CHECK(error.code() == errc::not_acquired);
  }
}

TEST_CASE("blocking_client: acquire extend and release with throwing and error_code overloads",
          "[integration]") {
  env e;
  hold_elsewhere(e, e.key("busy"));
  redlock::blocking_client blocking(e.config);

  SECTION("throwing overloads") {
    const auto held = blocking.acquire("blocking", once(5s));
    CHECK_FALSE(held.empty());
    CHECK(held.valid());
    const auto extended = blocking.extend(held, 20s);
    CHECK(extended.remaining_validity() > 15s);
    CHECK(e.key_everywhere(e.key("blocking"), held.token()));
    CHECK(blocking.release(extended) >= 3);
    CHECK(e.key_nowhere(e.key("blocking")));

    try {
      blocking.acquire("busy", once());
      FAIL("acquired a lock held elsewhere");
    } catch (const boost::system::system_error& error) {
      CHECK(error.code() == errc::not_acquired);
    }
    try {
      blocking.release(redlock::lock{});
      FAIL("released an empty lock");
    } catch (const boost::system::system_error& error) {
      CHECK(error.code() == errc::not_a_lock);
    }
  }

  SECTION("error_code overloads") {
    error_code ec;
    const auto held = blocking.acquire("blocking", once(5s), ec);
    REQUIRE_FALSE(ec);
    const auto extended = blocking.extend(held, 20s, ec);
    REQUIRE_FALSE(ec);
    CHECK(extended.ttl() == 20s);
    CHECK(blocking.release(extended, ec) >= 3);
    CHECK_FALSE(ec);

    const auto refused = blocking.acquire("busy", once(), ec);
    CHECK(ec == errc::not_acquired);
    CHECK(refused.empty());
    CHECK(blocking.release(redlock::lock{}, ec) == 0);
    CHECK(ec == errc::not_a_lock);
    CHECK(blocking.extend(redlock::lock{}, 10s, ec).empty());
    CHECK(ec == errc::not_a_lock);
  }

  SECTION("from several threads at once") {
    constexpr int threads = 4;
    constexpr int rounds = 10;
    std::vector<std::thread> workers;
    std::vector<int> failures(threads, 0);
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int i = 0; i < rounds; ++i) {
          error_code ec;
          const auto held = blocking.acquire(fmt::format("thread-{}-{}", t, i), once(5s), ec);
          if (ec || blocking.release(held, ec) < 3 || ec) ++failures[t];
        }
      });
    }
    for (auto& w : workers) w.join();
    CHECK(failures == std::vector<int>(threads, 0));
  }
}

TEST_CASE("a handler is never invoked from inside the initiating function", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);

  // Each flag is set right after the initiating call returns; a handler run
  // inline would see it unset.
  struct probe {
    bool returned = false;
    std::optional<bool> saw_returned;
    error_code ec;
  };
  auto check_not_inline = [&](auto initiate, errc expected) {
    auto p = std::make_shared<probe>();
    initiate([p](error_code ec, auto&&) {
      p->saw_returned = p->returned;
      p->ec = ec;
    });
    p->returned = true;
    CHECK_FALSE(p->saw_returned.has_value());
    run_until(e.io, [&] { return p->saw_returned.has_value(); });
    CHECK(*p->saw_returned);
    if (expected == errc{}) {
      CHECK_FALSE(p->ec);
    } else {
      CHECK(p->ec == expected);
    }
  };

  const redlock::lock nothing;
  check_not_inline([&](auto h) { locks.async_acquire("", {}, std::move(h)); },
                   errc::empty_resource);
  check_not_inline([&](auto h) { locks.async_acquire("r", once(0ms), std::move(h)); },
                   errc::invalid_ttl);
  check_not_inline([&](auto h) { locks.async_release(nothing, std::move(h)); }, errc::not_a_lock);
  check_not_inline([&](auto h) { locks.async_extend(nothing, 10s, std::move(h)); },
                   errc::not_a_lock);
  check_not_inline([&](auto h) { locks.async_acquire("inline", once(), std::move(h)); }, errc{});
}

TEST_CASE("handlers run on their associated executor", "[integration]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);

  SECTION("a strand bound with bind_executor") {
    auto strand = asio::make_strand(e.io);
    struct seen {
      std::optional<bool> on_strand;
      error_code ec;
      redlock::lock held;
      std::size_t removed = 0;
    };
    // Runs one operation with a handler bound to the strand.
    auto on_strand = [&](auto initiate) {
      auto s = std::make_shared<seen>();
      initiate(asio::bind_executor(strand, [s, strand](error_code ec, auto result) {
        s->on_strand = strand.running_in_this_thread();
        s->ec = ec;
        if constexpr (std::is_same_v<decltype(result), redlock::lock>) {
          s->held = std::move(result);
        } else {
          s->removed = result;
        }
      }));
      run_until(e.io, [&] { return s->on_strand.has_value(); });
      CHECK(*s->on_strand);
      return s;
    };

    auto locked =
        on_strand([&](auto h) { locks.async_acquire("stranded", once(5s), std::move(h)); });
    REQUIRE_FALSE(locked->ec);
    auto extended = on_strand([&](auto h) { locks.async_extend(locked->held, 20s, std::move(h)); });
    REQUIRE_FALSE(extended->ec);
    auto unlocked = on_strand([&](auto h) { locks.async_release(extended->held, std::move(h)); });
    CHECK_FALSE(unlocked->ec);
    CHECK(unlocked->removed >= 3);
    // Failures too, including those decided without touching a node.
    auto invalid = on_strand([&](auto h) { locks.async_acquire("", {}, std::move(h)); });
    CHECK(invalid->ec == errc::empty_resource);
    auto not_a_lock =
        on_strand([&](auto h) { locks.async_extend(redlock::lock{}, 5s, std::move(h)); });
    CHECK(not_a_lock->ec == errc::not_a_lock);
  }

  SECTION("the executor of another io_context") {
    asio::io_context other;
    auto called = std::make_shared<std::optional<bool>>();
    locks.async_acquire("elsewhere", once(5s),
                        asio::bind_executor(other, [called, &other](error_code ec, redlock::lock) {
                          called->emplace(!ec && other.get_executor().running_in_this_thread());
                        }));
    // The client works on e.io; the handler may only run inside other.run().
    const auto deadline = steady::now() + op_limit;
    e.io.restart();
    while (!called->has_value() && steady::now() < deadline) {
      e.io.run_one_for(5ms);
      other.restart();
      other.poll();
    }
    REQUIRE(called->has_value());
    CHECK(**called);
  }
}
