// basic_usage: take a Redlock, work under it, extend it, release it.
//   basic_usage [host:port ...]     (default: 127.0.0.1:7001 ... 127.0.0.1:7005)
#include <redlock/redlock.hpp>  // first: it includes <utility> before Asio

#include "example_nodes.hpp"

#include <fmt/core.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

using namespace std::chrono_literals;
namespace asio = boost::asio;

// Errors arrive as exceptions (boost::system::system_error) with use_awaitable.
asio::awaitable<void> report_job(redlock::client& locks) {
  redlock::lock_options opts;
  opts.ttl = 10s;                                       // key expiry on each node
  opts.retry = redlock::retry_policy::fixed(200ms, 5);  // up to 5 attempts if held elsewhere
  redlock::lock held = co_await locks.async_acquire("report-job", opts, asio::use_awaitable);
  fmt::print("locked, {} ms of validity left\n", held.remaining_validity().count());

  asio::steady_timer work(co_await asio::this_coro::executor, 500ms);  // the "work"
  co_await work.async_wait(asio::use_awaitable);

  // Need more time? Extend before the validity runs out; use the new handle.
  held = co_await locks.async_extend(held, 10s, asio::use_awaitable);
  fmt::print("extended, {} ms left\n", held.remaining_validity().count());

  const std::size_t released = co_await locks.async_release(held, asio::use_awaitable);
  fmt::print("released on {} of {} nodes\n", released, locks.config().nodes.size());
}

int main(int argc, char** argv) {
  redlock::client_config config;  // the N independent Redis masters
  try {
    config.nodes = example_nodes(argc, argv, 1);
  } catch (const redlock::config_error& e) {
    fmt::print(stderr, "usage: basic_usage [host:port ...]\n{}\n", e.what());
    return 2;
  }

  // 1. Asynchronous client on your own io_context.
  asio::io_context io;
  redlock::client locks(io.get_executor(), config);  // throws config_error if invalid
  asio::co_spawn(io, report_job(locks), [&locks](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      fmt::print(stderr, "report-job failed: {}\n", ex.what());
    }
    locks.close();  // lets run() return once the connections are closed
  });
  io.run();

  // 2. Blocking facade: no io_context to run; error_code overloads don't throw.
  redlock::blocking_client blocking(config);
  redlock::error_code ec;
  redlock::lock held = blocking.acquire("nightly-cleanup", {}, ec);
  if (ec) {
    fmt::print(stderr, "nightly-cleanup not acquired: {}\n", ec.message());
    return 1;
  }
  fmt::print("nightly-cleanup held for {} ms\n", held.remaining_validity().count());
  blocking.release(held);  // this overload throws on failure
}
