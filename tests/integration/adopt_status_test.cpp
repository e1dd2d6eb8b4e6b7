// client::adopt (a lock known only by its token, e.g. from another process)
// and client::async_status (what each node holds for a resource).
#include "test_env.hpp"

#include <string>

using namespace redlock::itest;
using redlock::errc;
using redlock::error_code;
using redlock::node_status;
using redlock::resource_status;

namespace {

std::tuple<error_code, resource_status> read_status(boost::asio::io_context& io,
                                                    redlock::client& locks,
                                                    const std::string& resource,
                                                    milliseconds timeout = 1s) {
  return run_op<error_code, resource_status>(
      io, [&](auto handler) { locks.async_status(resource, timeout, std::move(handler)); });
}

}  // namespace

TEST_CASE("an adopted token claims no validity until an extend through it lands",
          "[integration][adopt]") {
  env e;
  redlock::client first(e.io.get_executor(), e.config);
  redlock::client second(e.io.get_executor(), e.config);
  auto got = acquire(e.io, first, "job", once(10s));
  REQUIRE_FALSE(got.ec);
  // The acquire completes at a quorum; the other SETs may still be on their
  // way (a node's first commands wait for its topology check).
  REQUIRE(e.key_everywhere(e.key("job"), got.held.token()));

  auto adopted = second.adopt("job", got.held.token(), once(10s));
  CHECK_FALSE(adopted.empty());
  CHECK_FALSE(adopted.valid());
  CHECK(adopted.remaining_validity() == 0ms);
  CHECK(adopted.token() == got.held.token());
  CHECK(adopted.resource() == "job");
  CHECK(adopted.nodes().size() == 5);

  const auto before = redlock::clock::now();
  auto extended = extend(e.io, second, adopted, 30s);
  REQUIRE_FALSE(extended.ec);
  CHECK(adopted.valid());
  CHECK(adopted.validity_deadline() > before + 29s);
  CHECK(adopted.validity_deadline() <= redlock::clock::now() + 30s);
  // The extension may still be on its way to the nodes beyond the quorum.
  for (auto& admin : e.admin) {
    CHECK(poll_until(e.io, [&] { return admin->pttl(e.key("job")) > 20000; }));
  }

  auto released = release(e.io, second, adopted);
  CHECK_FALSE(released.ec);
  CHECK(released.removed >= 3);
  CHECK(e.key_nowhere(e.key("job")));
}

TEST_CASE("an adopted token that holds nothing is lost on extend and release",
          "[integration][adopt]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  const auto other = acquire(e.io, locks, "job", once(10s));
  REQUIRE_FALSE(other.ec);
  auto stranger = locks.adopt("job", "0123456789abcdef0123456789abcdef", once(10s));
  auto extended = extend(e.io, locks, stranger, 10s);
  CHECK(extended.ec == errc::lock_lost);
  CHECK_FALSE(stranger.valid());
  auto nothing = locks.adopt("free", "0123456789abcdef0123456789abcdef", once(10s));
  CHECK(release(e.io, locks, nothing).ec == errc::lock_lost);
  CHECK(e.key_everywhere(e.key("job"), other.held.token()));
}

TEST_CASE("adopt refuses an empty token or resource and bad options", "[integration][adopt]") {
  env e;
  redlock::client locks(e.io.get_executor(), e.config);
  CHECK(code_of([&] { locks.adopt("job", ""); }) == errc::empty_token);
  CHECK(code_of([&] { locks.adopt("", "t"); }) == errc::empty_resource);
  CHECK(code_of([&] { locks.adopt("job", "t", once(0ms)); }) == errc::invalid_ttl);
}

TEST_CASE("a lock's request timeout also bounds its release", "[integration][adopt]") {
  // With the TTL's default (ttl/20 = 500 ms) the release below would wait
  // half a second for the paused majority.
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  auto options = once(10s, 40ms);
  auto got = acquire(e.io, locks, "job", options);
  REQUIRE_FALSE(got.ec);
  e.nodes.node(0).pause();
  e.nodes.node(1).pause();
  const auto start = steady::now();
  const auto released = release(e.io, locks, got.held);
  const auto took = steady::now() - start;
  e.nodes.node(0).resume();
  e.nodes.node(1).resume();
  CHECK(released.ec == errc::quorum_unreachable);
  CHECK(took < 300ms);
}

TEST_CASE("status reads each node's holder and TTL and the quorum's holder",
          "[integration][status]") {
  env e(3);
  redlock::client locks(e.io.get_executor(), e.config);
  SECTION("free") {
    auto [ec, st] = read_status(e.io, locks, "job");
    CHECK_FALSE(ec);
    CHECK(st.resource == "job");
    CHECK(st.answered == 3);
    CHECK(st.free == 3);
    CHECK_FALSE(st.quorum_holder);
    for (const auto& node : st.nodes) CHECK(node.state == node_status::holding::free);
  }
  SECTION("held by a plain lock, one node paused") {
    auto got = acquire(e.io, locks, "job", once(10s));
    REQUIRE_FALSE(got.ec);
    REQUIRE(e.key_everywhere(e.key("job"), got.held.token()));
    e.nodes.node(2).pause();
    auto [ec, st] = read_status(e.io, locks, "job", 100ms);
    e.nodes.node(2).resume();
    CHECK_FALSE(ec);
    CHECK(st.answered == 2);
    CHECK(st.quorum_holder == got.held.token());
    CHECK(st.nodes[0].state == node_status::holding::plain);
    CHECK(st.nodes[0].holder == got.held.token());
    REQUIRE(st.nodes[0].ttl);
    CHECK(*st.nodes[0].ttl > 9s);
    CHECK(st.nodes[2].state == node_status::holding::unknown);
    CHECK(st.nodes[2].error == errc::node_timeout);
  }
  SECTION("a reentrant lock shows its owner") {
    auto options = once(10s);
    options.reentrant_owner = "owner-1";
    auto got = acquire(e.io, locks, "job", options);
    REQUIRE_FALSE(got.ec);
    REQUIRE(poll_until(e.io, [&] {
      for (auto& admin : e.admin) {
        if (!admin->exists(e.key("job"))) return false;
      }
      return true;
    }));
    auto [ec, st] = read_status(e.io, locks, "job");
    CHECK_FALSE(ec);
    CHECK(st.quorum_holder == "owner-1");
    CHECK(st.nodes[1].state == node_status::holding::reentrant);
  }
  SECTION("split holders and a foreign key: no quorum holder") {
    e.admin[0]->command({"SET", e.key("job"), "a"});
    e.admin[1]->command({"SET", e.key("job"), "b"});
    e.admin[2]->command({"LPUSH", e.key("job"), "x"});
    auto [ec, st] = read_status(e.io, locks, "job");
    CHECK_FALSE(ec);
    CHECK_FALSE(st.quorum_holder);
    CHECK(st.free == 0);
    CHECK(st.nodes[0].holder == "a");
    CHECK_FALSE(st.nodes[0].ttl);
    CHECK(st.nodes[2].state == node_status::holding::other);
  }
  SECTION("too few answers") {
    e.nodes.node(0).pause();
    e.nodes.node(1).pause();
    auto [ec, st] = read_status(e.io, locks, "job", 100ms);
    e.nodes.node(0).resume();
    e.nodes.node(1).resume();
    CHECK(ec == errc::quorum_unreachable);
    CHECK(st.answered == 1);
  }
  SECTION("bad arguments") {
    CHECK(std::get<0>(read_status(e.io, locks, "")) == errc::empty_resource);
    CHECK(std::get<0>(read_status(e.io, locks, "job", 0ms)) == errc::invalid_request_timeout);
  }
}

TEST_CASE("blocking_client::status reads what every node holds, throwing or setting an error",
          "[integration][status][blocking]") {
  env e(3);
  redlock::blocking_client blocking(e.config);
  // Free everywhere.
  auto free = blocking.status("job");
  CHECK(free.resource == "job");
  CHECK(free.answered == 3);
  CHECK(free.free == 3);
  CHECK_FALSE(free.quorum_holder);

  // Held through the same blocking client: every node shows its token.
  const auto held = blocking.acquire("job", once(10s));
  REQUIRE(e.key_everywhere(e.key("job"), held.token()));
  const auto taken = blocking.status("job", 1s);
  CHECK(taken.answered == 3);
  CHECK(taken.free == 0);
  CHECK(taken.quorum_holder == held.token());
  for (const auto& node : taken.nodes) {
    CHECK(node.state == node_status::holding::plain);
    CHECK(node.holder == held.token());
    REQUIRE(node.ttl);
    CHECK(*node.ttl > 5s);
  }

  // Bad arguments are refused before anything is sent.
  CHECK(code_of([&] { blocking.status("", 1s); }) == errc::empty_resource);
  error_code ec;
  blocking.status("job", 0ms, ec);
  CHECK(ec == errc::invalid_request_timeout);

  // Too few answers: the error_code form still tells what the others said,
  // the throwing form throws quorum_unreachable.
  e.nodes.node(0).pause();
  e.nodes.node(1).pause();
  const auto partial = blocking.status("job", 100ms, ec);
  CHECK(ec == errc::quorum_unreachable);
  CHECK(partial.answered == 1);
  CHECK(partial.nodes[2].holder == held.token());
  CHECK(partial.nodes[0].error == errc::node_timeout);
  CHECK(code_of([&] { blocking.status("job", 100ms); }) == errc::quorum_unreachable);
  e.nodes.node(0).resume();
  e.nodes.node(1).resume();
}
