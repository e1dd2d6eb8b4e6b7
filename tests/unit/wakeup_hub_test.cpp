#include "detail/wakeup_hub.hpp"
#include "detail/commands.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

using redlock::detail::release_channel;
using redlock::detail::wake_reason;
using redlock::detail::wakeup_hub;

namespace {

// No nodes: the hub opens no subscriber, and its hand-overs need none.
wakeup_hub make_hub(boost::asio::io_context& io) {
  return wakeup_hub(redlock::detail::make_core_strand(io.get_executor()), {}, {}, "me");
}

/// The hub under test with two waiters of "k", a (who records why it was
/// woken) then b; posted deliveries are kept alive by `owner`.
struct two_waiters {
  boost::asio::io_context io;
  wakeup_hub hub = make_hub(io);
  std::shared_ptr<int> owner = std::make_shared<int>(0);
  std::vector<std::string> woken;

  two_waiters() {
    hub.keep_alive_with(owner);
    hub.wait("k", hub.take_ticket(), [this](wake_reason why) {
      woken.push_back(why == wake_reason::released_here ? "a here" : "a announced");
    });
    hub.wait("k", hub.take_ticket(), [this](wake_reason) { woken.push_back("b"); });
  }
};

}  // namespace

TEST_CASE("wakeup_hub hands this client's release over to the caller, who starts it",
          "[unit][wakeup_hub]") {
  two_waiters t;
  auto& io = t.io;
  auto& hub = t.hub;
  auto& woken = t.woken;

  auto next = hub.released_here("k");
  REQUIRE(next);
  CHECK(woken.empty());  // the hub calls nobody itself
  next.start();
  CHECK(woken == std::vector<std::string>{"a here"});
  next.start();  // once only
  CHECK(woken.size() == 1);
  CHECK(hub.released_here_since("k", hub.releases_here() - 1));

  // Dropped unstarted: the waiter is freed, never called.
  CHECK(hub.pass_on("k", wake_reason::announced));
  CHECK(woken.size() == 1);
  CHECK_FALSE(hub.released_here("k"));  // nobody left
  CHECK(io.poll() == 0);
}

TEST_CASE("wakeup_hub delivers a node's announcement from a posted handler, once per release",
          "[unit][wakeup_hub]") {
  two_waiters t;
  auto& io = t.io;
  auto& hub = t.hub;
  auto& woken = t.woken;

  // One release is published on every node: three messages.
  for (int node = 0; node < 3; ++node) hub.announced(release_channel("k"));
  hub.announced(release_channel("unknown"));
  CHECK(woken.empty());
  CHECK(io.poll() == 1);
  // The first waiter only: the others' messages were about the same release.
  CHECK(woken == std::vector<std::string>{"a announced"});
  // A later release wakes the next.
  hub.announced(release_channel("k"));
  io.restart();
  io.poll();
  CHECK(woken == std::vector<std::string>{"a announced", "b"});
}

TEST_CASE(
    "wakeup_hub: a hand-over while an announcement waits to be delivered goes to the first "
    "waiter and replaces it",
    "[unit][wakeup_hub]") {
  two_waiters t;
  auto& io = t.io;
  auto& hub = t.hub;
  auto& woken = t.woken;

  hub.announced(release_channel("k"));
  // A waiter leaving meanwhile does not empty the line: the first one is
  // still in it, waiting for its delivery.
  const auto c = hub.wait("k", hub.take_ticket(), [&](wake_reason) { woken.push_back("c"); });
  hub.cancel(c);
  hub.released_here("k").start();
  CHECK(woken == std::vector<std::string>{"a here"});
  io.poll();
  CHECK(woken == std::vector<std::string>{"a here"});  // b was not woken by the stale delivery
}

TEST_CASE("wakeup_hub skips a posted delivery once its owner is gone", "[unit][wakeup_hub]") {
  boost::asio::io_context io;
  auto hub = make_hub(io);
  auto owner = std::make_shared<int>(0);
  hub.keep_alive_with(owner);
  bool called = false;
  hub.wait("k", hub.take_ticket(), [&](wake_reason) { called = true; });
  hub.announced(release_channel("k"));
  owner.reset();
  io.poll();
  CHECK_FALSE(called);
}

TEST_CASE("wakeup_hub forgets a cancelled waiter", "[unit][wakeup_hub]") {
  boost::asio::io_context io;
  auto hub = make_hub(io);
  bool called = false;
  const auto id = hub.wait("k", hub.take_ticket(), [&](wake_reason) { called = true; });
  const auto owner = std::make_shared<int>(0);
  hub.keep_alive_with(owner);
  hub.cancel(id);
  hub.cancel(id);
  CHECK_FALSE(hub.released_here("k"));
  hub.announced(release_channel("k"));
  io.poll();
  CHECK_FALSE(called);
}
