// Durations on the command line: pure parsing, no processes.

#include "args/duration.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

namespace redlock::args {
namespace {

using std::chrono::milliseconds;

std::string refusal(const std::string& text) {
  try {
    parse_duration(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("durations take ms, s, m and h", "[cli][duration]") {
  CHECK(parse_duration("0") == milliseconds{0});
  CHECK(parse_duration("250ms") == milliseconds{250});
  CHECK(parse_duration("2s") == milliseconds{2000});
  CHECK(parse_duration("1.5s") == milliseconds{1500});
  CHECK(parse_duration("0.0001s") == milliseconds{1});  // rounds up, never to 0
  CHECK(parse_duration("5m") == milliseconds{300000});
  CHECK(parse_duration("1h") == milliseconds{3600000});
  CHECK(parse_duration("0s") == milliseconds{0});
}

TEST_CASE("durations without a unit or malformed are refused, saying why", "[cli][duration]") {
  CHECK(refusal("30") == "'30' needs a unit: ms, s, m or h (e.g. 30s)");
  CHECK(refusal("-1s") == "'-1s' is negative");
  CHECK(refusal("") == "'' is not a duration (e.g. 500ms, 30s, 5m, 1h)");
  for (const auto* text : {"s", "ms", "1x", "1e3s", "1..2s", ".s", "infs", "nans", "1 s", "1sec"}) {
    INFO(text);
    CHECK(refusal(text).find("is not a duration") != std::string::npos);
  }
  CHECK(refusal("9000h") == "'9000h' is too long (at most a year)");
}

TEST_CASE("durations print in their shortest exact unit", "[cli][duration]") {
  CHECK(format_duration(milliseconds{0}) == "0");
  CHECK(format_duration(milliseconds{1500}) == "1500ms");
  CHECK(format_duration(milliseconds{2000}) == "2s");
  CHECK(format_duration(milliseconds{300000}) == "5m");
  CHECK(format_duration(milliseconds{7200000}) == "2h");
}

}  // namespace redlock::args
