// Tokens and jitter randomness.
#include "detail/random.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <set>
#include <string>

TEST_CASE("tokens are 128-bit hex and never repeat", "[unit][random]") {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const auto token = redlock::detail::make_token();
    REQUIRE(token.size() == 32);
    REQUIRE(token.find_first_not_of("0123456789abcdef") == std::string::npos);
    REQUIRE(seen.insert(token).second);
  }
}

TEST_CASE("a forked child does not draw the tokens its parent will", "[unit][random]") {
  // The parent has fetched a block of random bytes, most of it unused.
  (void)redlock::detail::make_token();
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const auto token = redlock::detail::make_token();
    const bool written =
        ::write(pipe_fds[1], token.data(), token.size()) == static_cast<ssize_t>(token.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::array<char, 32> from_child{};
  std::size_t got = 0;
  while (got < from_child.size()) {
    const auto n = ::read(pipe_fds[0], from_child.data() + got, from_child.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == from_child.size());
  const std::string childs(from_child.data(), from_child.size());
  // The parent's next tokens come from the block the child inherited.
  std::set<std::string> parents;
  for (int i = 0; i < 64; ++i) parents.insert(redlock::detail::make_token());
  CHECK(parents.count(childs) == 0);
}

TEST_CASE("unit_random stays in 0 <= x < 1", "[unit][random]") {
  double low = 1.0;
  double high = 0.0;
  for (int i = 0; i < 10000; ++i) {
    const double u = redlock::detail::unit_random();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    low = std::min(low, u);
    high = std::max(high, u);
  }
  CHECK(low < 0.1);
  CHECK(high > 0.9);
}
