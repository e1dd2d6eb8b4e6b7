#include "detail/waiter_line.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using redlock::detail::waiter_line;
using redlock::detail::wake_reason;

namespace {

/// Joins `line` on `channel` with a waiter that records its name when woken.
waiter_line::waiter_id join(waiter_line& line, const std::string& channel, std::uint64_t ticket,
                            std::string name, std::vector<std::string>& woken) {
  return line
      .join(channel, ticket,
            [name = std::move(name), &woken](wake_reason) { woken.push_back(name); })
      .id;
}

}  // namespace

TEST_CASE("waiter_line wakes the lowest ticket first, whatever the joining order",
          "[unit][waiter_line]") {
  waiter_line line;
  std::vector<std::string> woken;
  const auto early = line.take_ticket();
  const auto late = line.take_ticket();
  CHECK(line.join("c", late, [&](wake_reason) { woken.push_back("late"); }).first);
  // A waiter that rejoins after an attempt keeps its old, earlier place.
  CHECK_FALSE(line.join("c", early, [&](wake_reason) { woken.push_back("early"); }).first);

  auto next = line.take_first("c");
  REQUIRE(next);
  next(wake_reason::announced);
  line.take_first("c")(wake_reason::announced);
  CHECK(woken == std::vector<std::string>{"early", "late"});
  CHECK_FALSE(line.take_first("c"));
}

TEST_CASE("waiter_line keeps a channel emptied by a wake-up until forget_if_idle",
          "[unit][waiter_line]") {
  waiter_line line;
  std::vector<std::string> woken;
  join(line, "c", line.take_ticket(), "a", woken);
  auto wake = line.take_first("c");
  REQUIRE(wake);
  CHECK(line.nobody_waits());
  // Still subscribed: the woken waiter usually rejoins, and a reconnected
  // subscriber must subscribe to it meanwhile.
  CHECK(line.channels() == std::vector<std::string>{"c"});
  // It rejoins: the channel is not idle, and joining it is not a first.
  CHECK_FALSE(line.join("c", 1, [](wake_reason) {}).first);
  CHECK_FALSE(line.forget_if_idle("c"));
  line.take_first("c");
  CHECK(line.forget_if_idle("c"));
  CHECK(line.channels().empty());
  CHECK_FALSE(line.forget_if_idle("c"));  // unknown now
}

TEST_CASE("waiter_line: leaving names the channel only when its last waiter left",
          "[unit][waiter_line]") {
  waiter_line line;
  std::vector<std::string> woken;
  const auto a = join(line, "c", line.take_ticket(), "a", woken);
  const auto b = join(line, "c", line.take_ticket(), "b", woken);
  const auto other = join(line, "d", line.take_ticket(), "other", woken);
  CHECK_FALSE(line.leave(a));
  CHECK_FALSE(line.leave(a));  // twice: unknown, ignored
  CHECK(line.leave(b) == std::optional<std::string>("c"));
  CHECK_FALSE(line.nobody_waits());
  line.take_first("d")(wake_reason::released_here);
  CHECK(woken == std::vector<std::string>{"other"});
  // Taken out of line by the wake-up: leaving afterwards is a no-op.
  CHECK_FALSE(line.leave(other));
  CHECK(line.nobody_waits());
}

TEST_CASE("waiter_line::clear drops waiters without calling them", "[unit][waiter_line]") {
  waiter_line line;
  std::vector<std::string> woken;
  join(line, "c", line.take_ticket(), "a", woken);
  line.clear();
  CHECK(line.nobody_waits());
  CHECK(line.channels().empty());
  CHECK_FALSE(line.take_first("c"));
  CHECK(woken.empty());
}

TEST_CASE("waiter_line remembers this client's recent releases per key", "[unit][waiter_line]") {
  waiter_line line;
  const auto before = line.releases_here();
  CHECK_FALSE(line.released_here_since("k", before));

  line.note_release_here("k");
  CHECK(line.releases_here() == before + 1);
  CHECK(line.released_here_since("k", before));
  CHECK_FALSE(line.released_here_since("other", before));
  CHECK_FALSE(line.released_here_since("k", line.releases_here()));  // nothing since

  // Only the last few are remembered: an old release is forgotten, not
  // misreported.
  const auto mark = line.releases_here();
  line.note_release_here("k");
  for (int i = 0; i < 100; ++i) line.note_release_here("busy-" + std::to_string(i));
  CHECK_FALSE(line.released_here_since("k", mark));
  CHECK(line.released_here_since("busy-99", mark));
}
