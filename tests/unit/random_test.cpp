// Tokens and jitter randomness.
#include "detail/random.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

namespace {

/// The token a child made by _Fork() (no fork handlers run) draws first,
/// or an empty string if it could not say.
std::string token_of_child() {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {};
  const pid_t child = ::_Fork();
  if (child == 0) {
    int status = 1;
    try {
      const auto token = redlock::detail::make_token();
      if (::write(pipe_fds[1], token.data(), token.size()) == static_cast<ssize_t>(token.size())) {
        status = 0;
      }
    } catch (...) {
      status = 2;
    }
    ::_exit(status);
  }
  ::close(pipe_fds[1]);
  std::string token;
  char buffer[64];
  while (child > 0) {
    const auto n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    token.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return {};
  }
  return token;
}

}  // namespace

TEST_CASE("a copy of the process that no fork handler heard of draws other tokens",
          "[unit][random]") {
  // Twice, at consecutive draws: random bytes kept in the process for later
  // tokens would show up in both processes, wherever a block of them began.
  for (int round = 0; round < 2; ++round) {
    (void)redlock::detail::make_token();
    const auto childs = token_of_child();
    REQUIRE(childs.size() == 32);
    std::set<std::string> parents;
    for (int i = 0; i < 64; ++i) parents.insert(redlock::detail::make_token());
    CHECK(parents.count(childs) == 0);
  }
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
