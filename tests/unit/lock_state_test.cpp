// What copies of a lock handle share: the deadline moves only forward on an
// extend, back to now when the lock is found lost, and never forward again.
#include "detail/lock_state.hpp"

#include <catch2/catch.hpp>

// Named, so that a unity build can merge this file with the other tests.
namespace lock_state_test {

using namespace std::chrono_literals;
using redlock::detail::lock_state;

namespace {
const redlock::clock::time_point t0{std::chrono::seconds(1000)};
}  // namespace

TEST_CASE("lock_state: an extend keeps the later deadline", "[unit][lock_state]") {
  lock_state state(1, {"r"}, {{"r"}, ""}, "t", 10s, 0s, t0 + 10s, 0);
  state.extended(2s, t0 + 3s);
  CHECK(state.deadline() == t0 + 10s);
  state.extended(20s, t0 + 20s);
  CHECK(state.deadline() == t0 + 20s);
}

// Review finding: an extend that reached its quorum after a concurrent one
// had found the lock lost moved the deadline forward again.
TEST_CASE("lock_state: a lock found lost stays lost", "[unit][lock_state]") {
  lock_state state(1, {"r"}, {{"r"}, ""}, "t", 10s, 0s, t0 + 10s, 0);
  state.lost(t0 + 1s);
  CHECK(state.deadline() == t0 + 1s);
  state.extended(20s, t0 + 21s);
  CHECK(state.deadline() == t0 + 1s);
  state.lost(t0 + 5s);  // never later than the first cut
  CHECK(state.deadline() == t0 + 1s);
}

}  // namespace lock_state_test

namespace lock_state_test {

TEST_CASE("describe_failure names each node that refused or failed, and why",
          "[unit][lock][describe]") {
  using redlock::node_outcome;
  using status = node_outcome::status;
  std::vector<redlock::node_config> nodes(4);
  nodes[0].port = 7001;
  nodes[1].port = 7002;
  nodes[2].host = "::1";
  nodes[2].port = 7003;
  nodes[3].host = "redis.example";
  nodes[3].port = 7004;
  const std::vector<node_outcome> outcomes{
      {status::acquired, {}},
      {status::failed,
       boost::system::errc::make_error_code(boost::system::errc::connection_refused)},
      {status::held_elsewhere, {}},
      {status::pending, {}}};
  CHECK(redlock::describe_nodes(outcomes, nodes) ==
        "127.0.0.1:7002: Connection refused; [::1]:7003: held elsewhere; redis.example:7004: no "
        "answer yet");
  const auto failed = redlock::detail::lock_access::failed(outcomes);
  CHECK(redlock::describe_failure(redlock::errc::quorum_unreachable, failed, nodes) ==
        "quorum unreachable: too few Redis nodes answered (127.0.0.1:7002: Connection refused; "
        "[::1]:7003: held elsewhere; redis.example:7004: no answer yet)");
  // Nothing to name: the message alone.
  CHECK(redlock::describe_failure(redlock::errc::empty_resource, redlock::lock{}, nodes) ==
        redlock::error_code(redlock::errc::empty_resource).message());
}

}  // namespace lock_state_test
