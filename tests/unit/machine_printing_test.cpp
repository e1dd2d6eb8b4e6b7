// A failed check on a machine's action names it: "undo", not "2".
#include "machine_printing.hpp"

#include <catch2/catch.hpp>

// Named, so that a unity build can merge this file with the other tests.
namespace machine_printing_test {

using Catch::Detail::stringify;
using namespace redlock::detail;

TEST_CASE("machine printing: actions, states and verdicts print by name") {
  CHECK(stringify(acquire_fsm::action::kind::undo) == "undo");
  CHECK(stringify(acquire_fsm::phase::writing_back) == "writing_back");
  CHECK(stringify(undo_plan{undo_role::skip, undo_role::send_and_await}) ==
        "{ skip, send_and_await }");
  CHECK(stringify(quorum_fsm::state::reached) == "reached");
  CHECK(stringify(keep_action::kind::signal) == "signal");
  CHECK(stringify(claim_fsm::step::action::read_status) == "read_status");
  CHECK(stringify(release_tally::verdict::lost) == "lost");
  CHECK(stringify(vote::kind::refused) == "refused");
}

}  // namespace machine_printing_test
