// The decision of a release and the meaning of a node's answer to it: no
// sockets.
#include "detail/release_tally.hpp"
#include "machine_printing.hpp"

#include <catch2/catch.hpp>

using redlock::errc;
using redlock::detail::release_tally;
using redlock::detail::reply;
using redlock::detail::vote;
using verdict = release_tally::verdict;

namespace {

const vote removed{vote::kind::granted, {}};
const vote absent{vote::kind::refused, {}};
const vote unknown{vote::kind::failed, redlock::make_error_code(errc::node_timeout)};

reply integer(long long value, bool repeated = false) {
  reply r;
  r.type = reply::kind::integer;
  r.integer = value;
  r.repeated = repeated;
  return r;
}

}  // namespace

TEST_CASE("release votes: 1 granted (deleted), 0 refused (not ours), anything else failed",
          "[unit][release]") {
  using redlock::detail::release_vote;
  CHECK(release_vote({}, integer(1)).what == vote::kind::granted);
  CHECK(release_vote({}, integer(0)).what == vote::kind::refused);
  CHECK(release_vote({}, integer(1, true)).what == vote::kind::granted);
  // Sent again after a reconnect: the first copy may have deleted it.
  const auto again = release_vote({}, integer(0, true));
  CHECK(again.what == vote::kind::failed);
  CHECK(again.error == errc::protocol_error);
  const auto timed_out = release_vote(errc::node_timeout, integer(1));
  CHECK(timed_out.what == vote::kind::failed);
  CHECK(timed_out.error == errc::node_timeout);
  reply error;
  error.type = reply::kind::error;
  error.text = "NOPERM this user has no permissions to run the 'eval' command";
  const auto refused = release_vote({}, error);
  CHECK(refused.what == vote::kind::failed);
  CHECK(refused.error == redlock::detail::classify_error_reply(error.text));
  CHECK(release_vote({}, integer(2)).what == vote::kind::failed);
  // The observer's view: the one mapping every operation shares.
  CHECK(as_outcome(release_vote({}, integer(1))).state == redlock::node_outcome::status::acquired);
  CHECK(as_outcome(again).error == errc::protocol_error);
}

TEST_CASE("release: a quorum of deletes releases at once", "[unit][release]") {
  release_tally tally(5);
  CHECK(tally.on_answer(removed) == verdict::pending);
  CHECK(tally.on_answer(absent) == verdict::pending);
  CHECK(tally.on_answer(removed) == verdict::pending);
  CHECK(tally.on_answer(removed) == verdict::released);
  CHECK(tally.removed() == 3);
}

TEST_CASE("release: more than N - quorum without our key is a lost lock", "[unit][release]") {
  release_tally tally(5);
  tally.on_answer(removed);
  tally.on_answer(absent);
  CHECK(tally.on_answer(absent) == verdict::pending);
  CHECK(tally.on_answer(absent) == verdict::lost);
  CHECK(tally.removed() == 1);
}

TEST_CASE("release: unknown answers decide nothing until none is left", "[unit][release]") {
  release_tally tally(3);
  CHECK(tally.on_answer(removed) == verdict::pending);
  CHECK(tally.on_answer(unknown) == verdict::pending);
  CHECK(tally.on_answer(absent) == verdict::unknown);

  release_tally repeated(3);
  repeated.on_answer(unknown);
  repeated.on_answer(unknown);
  CHECK(repeated.on_answer(removed) == verdict::unknown);
}
