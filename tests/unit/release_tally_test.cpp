// The decision of a release and the meaning of a node's answer to it: no
// sockets.
#include "detail/release_tally.hpp"
#include "machine_printing.hpp"

#include <catch2/catch.hpp>

using redlock::errc;
using redlock::detail::deletion;
using redlock::detail::release_tally;
using redlock::detail::reply;
using verdict = release_tally::verdict;

namespace {

reply integer(long long value, bool repeated = false) {
  reply r;
  r.type = reply::kind::integer;
  r.integer = value;
  r.repeated = repeated;
  return r;
}

}  // namespace

TEST_CASE("release answers: 1 removed, 0 absent, anything else unknown", "[unit][release]") {
  using redlock::detail::delete_outcome;
  CHECK(delete_outcome({}, integer(1)) == deletion::removed);
  CHECK(delete_outcome({}, integer(0)) == deletion::absent);
  CHECK(delete_outcome({}, integer(1, true)) == deletion::removed);
  // Sent again after a reconnect: the first copy may have deleted it.
  CHECK(delete_outcome({}, integer(0, true)) == deletion::unknown);
  CHECK(delete_outcome(errc::node_timeout, integer(1)) == deletion::unknown);
  reply error;
  error.type = reply::kind::error;
  CHECK(delete_outcome({}, error) == deletion::unknown);
  CHECK(delete_outcome({}, integer(2)) == deletion::unknown);
}

TEST_CASE("release: a quorum of deletes releases at once", "[unit][release]") {
  release_tally tally(5);
  CHECK(tally.on_answer(deletion::removed) == verdict::pending);
  CHECK(tally.on_answer(deletion::absent) == verdict::pending);
  CHECK(tally.on_answer(deletion::removed) == verdict::pending);
  CHECK(tally.on_answer(deletion::removed) == verdict::released);
  CHECK(tally.removed() == 3);
}

TEST_CASE("release: more than N - quorum without our key is a lost lock", "[unit][release]") {
  release_tally tally(5);
  tally.on_answer(deletion::removed);
  tally.on_answer(deletion::absent);
  CHECK(tally.on_answer(deletion::absent) == verdict::pending);
  CHECK(tally.on_answer(deletion::absent) == verdict::lost);
  CHECK(tally.removed() == 1);
}

TEST_CASE("release: unknown answers decide nothing until none is left", "[unit][release]") {
  release_tally tally(3);
  CHECK(tally.on_answer(deletion::removed) == verdict::pending);
  CHECK(tally.on_answer(deletion::unknown) == verdict::pending);
  CHECK(tally.on_answer(deletion::absent) == verdict::unknown);

  release_tally repeated(3);
  repeated.on_answer(deletion::unknown);
  repeated.on_answer(deletion::unknown);
  CHECK(repeated.on_answer(deletion::removed) == verdict::unknown);
}
