// Tokens and jitter randomness.
#include "detail/random.hpp"

#include <catch2/catch.hpp>

#include <set>

TEST_CASE("tokens are 128-bit hex and never repeat", "[unit][random]") {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const auto token = redlock::detail::make_token();
    REQUIRE(token.size() == 32);
    REQUIRE(token.find_first_not_of("0123456789abcdef") == std::string::npos);
    REQUIRE(seen.insert(token).second);
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
