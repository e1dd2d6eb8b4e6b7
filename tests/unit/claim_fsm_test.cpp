// The steps of claiming a due time, driven with a fake clock: when a refused
// claim is retried, when it counts as held elsewhere, when it gives up.
#include "detail/claim_fsm.hpp"
#include "machine_printing.hpp"

#include <boost/asio/error.hpp>
#include <catch2/catch.hpp>

#include <map>
#include <string>

// Named, so that a unity build can merge this file with the other tests.
namespace claim_fsm_test {

using namespace std::chrono_literals;
using redlock::claim_outcome;
using redlock::errc;
using redlock::error_code;
using redlock::node_status;
using redlock::resource_status;
using redlock::wall_clock;
using redlock::detail::claim_fsm;
using action = claim_fsm::step::action;

namespace {

const wall_clock::time_point due{std::chrono::seconds(1'800'000'000)};

error_code code(errc e) { return make_error_code(e); }

/// A status read of `holders` (empty: no key), summarized for a quorum of
/// a majority.
resource_status read(std::initializer_list<const char*> holders) {
  resource_status status;
  std::map<std::string, std::size_t> count;
  for (const char* holder : holders) {
    node_status node;
    if (holder == nullptr) {
      node.state = node_status::holding::unknown;
      node.error = code(errc::node_unavailable);
    } else if (*holder == '\0') {
      node.state = node_status::holding::free;
      ++status.free;
    } else {
      node.state = node_status::holding::plain;
      node.holder = holder;
      ++count[holder];
    }
    if (node.answered()) ++status.answered;
    status.nodes.push_back(node);
  }
  for (const auto& [holder, n] : count) {
    if (n >= holders.size() / 2 + 1) status.quorum_holder = holder;
  }
  return status;
}

}  // namespace

TEST_CASE("claim: won at the first attempt", "[unit][claim]") {
  claim_fsm fsm(due + 500ms, 100ms);
  REQUIRE(fsm.start(due).what == action::attempt);
  const auto done = fsm.on_attempt({}, due + 10ms, 0.5);
  CHECK(done.what == action::finish);
  CHECK(done.outcome == claim_outcome::claimed);
  CHECK(fsm.attempts() == 1);
}

TEST_CASE("claim: a window already closed is missed, nothing sent", "[unit][claim]") {
  claim_fsm fsm(due + 500ms, 100ms);
  const auto first = fsm.start(due + 501ms);
  CHECK(first.what == action::finish);
  CHECK(first.outcome == claim_outcome::missed);
  CHECK(fsm.attempts() == 0);
  // The last instant of the window still attempts.
  claim_fsm edge(due + 500ms, 100ms);
  CHECK(edge.start(due + 500ms).what == action::attempt);
}

TEST_CASE("claim: refused and a majority holds another token: claimed elsewhere", "[unit][claim]") {
  claim_fsm fsm(due + 500ms, 100ms);
  fsm.start(due);
  REQUIRE(fsm.on_attempt(code(errc::not_acquired), due + 5ms, 0.5).what == action::read_status);
  const auto held = fsm.on_status({}, read({"other", "other", ""}), due + 8ms, 0.5);
  CHECK(held.what == action::finish);
  CHECK(held.outcome == claim_outcome::claimed_elsewhere);
  // 5 nodes, 3 of them the winner's, a node down.
  claim_fsm five(due + 500ms, 100ms);
  five.start(due);
  five.on_attempt(code(errc::not_acquired), due + 5ms, 0.5);
  CHECK(five.on_status({}, read({"w", "w", nullptr, "w", "x"}), due + 8ms, 0.5).outcome ==
        claim_outcome::claimed_elsewhere);
}

TEST_CASE("claim: split votes are retried after a jittered delay within the window",
          "[unit][claim]") {
  claim_fsm fsm(due + 500ms, 100ms);
  fsm.start(due);
  // 3 nodes, 3 instances, one node each: refused, and nobody holds it.
  REQUIRE(fsm.on_attempt(code(errc::not_acquired), due + 5ms, 0.5).what == action::read_status);
  auto next = fsm.on_status({}, read({"a", "b", "c"}), due + 10ms, 0.25);
  REQUIRE(next.what == action::wait);
  CHECK(next.at == due + 10ms + 25ms);  // a quarter of the spread
  REQUIRE(fsm.on_wake(due + 35ms).what == action::attempt);
  CHECK(fsm.attempts() == 2);
  // 5 nodes, 3 instances, 2/2/1: a majority refused us, yet nobody holds it.
  REQUIRE(fsm.on_attempt(code(errc::not_acquired), due + 40ms, 0.5).what == action::read_status);
  next = fsm.on_status({}, read({"a", "a", "b", "b", "c"}), due + 45ms, 0.0);
  REQUIRE(next.what == action::wait);
  CHECK(next.at == due + 45ms);
  REQUIRE(fsm.on_wake(due + 45ms).what == action::attempt);
  // The undos have landed by now: a read finding nothing retries too.
  fsm.on_attempt(code(errc::not_acquired), due + 50ms, 0.5);
  CHECK(fsm.on_status({}, read({"", "", "", "", ""}), due + 55ms, 0.9).what == action::wait);
  REQUIRE(fsm.on_wake(due + 145ms).what == action::attempt);
  CHECK(fsm.on_attempt({}, due + 150ms, 0.5).outcome == claim_outcome::claimed);
  CHECK(fsm.attempts() == 4);
}

TEST_CASE("claim: one node of three down, two instances split: retried", "[unit][claim]") {
  claim_fsm fsm(due + 500ms, 100ms);
  fsm.start(due);
  // Ours was undone; the other's undo has not landed yet.
  fsm.on_attempt(code(errc::not_acquired), due + 5ms, 0.5);
  CHECK(fsm.on_status({}, read({"", "b", nullptr}), due + 8ms, 0.5).what == action::wait);
}

TEST_CASE("claim: splits until the window closes end as contended, not claimed elsewhere",
          "[unit][claim]") {
  claim_fsm fsm(due + 200ms, 100ms);
  fsm.start(due);
  fsm.on_attempt(code(errc::not_acquired), due + 50ms, 0.5);
  REQUIRE(fsm.on_status({}, read({"a", "b", "c"}), due + 60ms, 0.9).what == action::wait);
  REQUIRE(fsm.on_wake(due + 150ms).what == action::attempt);
  fsm.on_attempt(code(errc::not_acquired), due + 170ms, 0.5);
  // The delay drawn would start the next attempt after the window: none
  // is squeezed in at its end, where every contender would meet again.
  const auto last = fsm.on_status({}, read({"a", "b", "c"}), due + 180ms, 0.3);
  CHECK(last.what == action::finish);
  CHECK(last.outcome == claim_outcome::contended);
  CHECK_FALSE(last.error);
  // A timer that fires after the window closed gives up too.
  claim_fsm late(due + 200ms, 100ms);
  late.start(due);
  late.on_attempt(code(errc::not_acquired), due + 50ms, 0.5);
  REQUIRE(late.on_status({}, read({"a", "b", "c"}), due + 60ms, 0.9).what == action::wait);
  const auto woke = late.on_wake(due + 201ms);
  CHECK(woke.what == action::finish);
  CHECK(woke.outcome == claim_outcome::contended);
  CHECK(late.attempts() == 1);
}

TEST_CASE("claim: too few answers are retried, and reported as failed when the window closes",
          "[unit][claim]") {
  claim_fsm fsm(due + 200ms, 100ms);
  fsm.start(due);
  auto next = fsm.on_attempt(code(errc::quorum_unreachable), due + 100ms, 0.5);
  REQUIRE(next.what == action::wait);
  REQUIRE(fsm.on_wake(next.at).what == action::attempt);
  next = fsm.on_attempt(code(errc::validity_expired), due + 190ms, 0.5);
  CHECK(next.what == action::finish);
  CHECK(next.outcome == claim_outcome::failed);
  CHECK(next.error == code(errc::validity_expired));
  // A refused attempt whose read reaches too few nodes: unknown, retried;
  // failed with the read's error if the window closes then.
  claim_fsm unknown(due + 200ms, 100ms);
  unknown.start(due);
  unknown.on_attempt(code(errc::not_acquired), due + 50ms, 0.5);
  const auto unread = unknown.on_status(code(errc::quorum_unreachable),
                                        read({"a", nullptr, nullptr}), due + 190ms, 0.5);
  CHECK(unread.outcome == claim_outcome::failed);
  CHECK(unread.error == code(errc::quorum_unreachable));
}

TEST_CASE("claim: errors that a retry cannot mend end the claim at once", "[unit][claim]") {
  for (const error_code ec :
       {code(errc::authentication_failed), code(errc::replica_node), code(errc::invalid_ttl),
        error_code(boost::asio::error::operation_aborted)}) {
    INFO(ec.message());
    claim_fsm fsm(due + 500ms, 100ms);
    fsm.start(due);
    const auto done = fsm.on_attempt(ec, due + 5ms, 0.5);
    CHECK(done.what == action::finish);
    CHECK(done.outcome == claim_outcome::failed);
    CHECK(done.error == ec);
  }
  claim_fsm cancelled(due + 500ms, 100ms);
  cancelled.start(due);
  cancelled.on_attempt(code(errc::not_acquired), due + 5ms, 0.5);
  const auto aborted =
      cancelled.on_status(boost::asio::error::operation_aborted, read({}), due + 6ms, 0.5);
  CHECK(aborted.outcome == claim_outcome::failed);
  CHECK(aborted.error == error_code(boost::asio::error::operation_aborted));
}

}  // namespace claim_fsm_test
