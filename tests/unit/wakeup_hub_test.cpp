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

namespace {

std::shared_ptr<redlock::detail::lock_state> lock_on(std::vector<std::string> keys,
                                                     redlock::clock::time_point deadline,
                                                     std::string owner = {}) {
  return std::make_shared<redlock::detail::lock_state>(
      1, keys, redlock::detail::held_keys{keys, std::move(owner)}, "token",
      std::chrono::milliseconds(10000), std::chrono::milliseconds(0), deadline, 0);
}

}  // namespace

TEST_CASE("wakeup_hub knows this client's lock on a key someone here waits on",
          "[unit][wakeup_hub][held_here]") {
  using namespace std::chrono_literals;
  constexpr auto none = redlock::clock::time_point::min();
  const redlock::clock::time_point now{1000s};
  boost::asio::io_context io;
  auto hub = make_hub(io);
  hub.keep_alive_with(std::make_shared<int>(0));

  SECTION("nobody waits when it is acquired: not remembered") {
    const auto lock = lock_on({"k"}, now + 5s);
    hub.acquired_here(lock);
    hub.wait("k", hub.take_ticket(), [](wake_reason) {});
    CHECK(hub.held_here_until("k", "", now) == none);
  }
  SECTION("remembered for each waited-on key until released, lost, ended or dropped") {
    hub.wait("k", hub.take_ticket(), [](wake_reason) {});
    auto lock = lock_on({"j", "k"}, now + 5s);
    hub.acquired_here(lock);
    CHECK(hub.held_here_until("k", "", now) == now + 5s);
    CHECK(hub.held_here_until("j", "", now) == none);       // nobody waits on j
    CHECK(hub.held_here_until("k", "", now + 5s) == none);  // its validity is over
    SECTION("released") {
      REQUIRE(lock->begin_release());
      CHECK(hub.held_here_until("k", "", now) == none);
    }
    SECTION("lost") {
      lock->lost(now + 1s);
      CHECK(hub.held_here_until("k", "", now) == none);
    }
    SECTION("every handle dropped") {
      lock.reset();
      CHECK(hub.held_here_until("k", "", now) == none);
    }
    SECTION("another client announces a release of the key: the nodes are asked once") {
      // The previous holder's release, heard late from a slow node, or this
      // lock's own through a handle adopted elsewhere: only the nodes know.
      hub.announced(release_channel("k"));
      CHECK(hub.held_here_until("k", "", now) == none);
      CHECK(hub.held_here_until("k", "", now) == now + 5s);
    }
    SECTION("this client releases the key through another handle") {
      const auto handed = hub.released_here("k");
      CHECK(handed);
      CHECK(hub.held_here_until("k", "", now) == none);
    }
    SECTION("nobody waits any more") {
      hub.released_here("k").start();  // the only waiter, woken and gone
      hub.wait("k", hub.take_ticket(), [](wake_reason) {});
      CHECK(hub.held_here_until("k", "", now) == none);
    }
    SECTION("the next holder replaces it") {
      hub.acquired_here(lock_on({"k"}, now + 7s));
      CHECK(hub.held_here_until("k", "", now) == none);  // that handle was dropped
      const auto next = lock_on({"k"}, now + 8s);
      hub.acquired_here(next);
      CHECK(hub.held_here_until("k", "", now) == now + 8s);
    }
  }
  SECTION("a reentrant lock does not stand against its own owner") {
    hub.wait("k", hub.take_ticket(), [](wake_reason) {});
    const auto lock = lock_on({"k"}, now + 5s, "owner-1");
    hub.acquired_here(lock);
    CHECK(hub.held_here_until("k", "owner-1", now) == none);
    CHECK(hub.held_here_until("k", "owner-2", now) == now + 5s);
    CHECK(hub.held_here_until("k", "", now) == now + 5s);
  }
}
