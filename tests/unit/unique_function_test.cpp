#include <redlock/detail/unique_function.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <memory>
#include <string>
#include <utility>

using redlock::detail::unique_function;

namespace {

// Counts live copies, so every construction is matched by one destruction.
struct tracked {
  explicit tracked(int* live) : live(live) { ++*live; }
  tracked(tracked&& other) noexcept : live(other.live) { ++*live; }
  tracked(const tracked&) = delete;
  ~tracked() { --*live; }
  int* live;
};

}  // namespace

TEST_CASE("unique_function: small and large callables are called, moved and destroyed once",
          "[unit][unique_function]") {
  int live = 0;
  {
    // Small: stored inline. Large: on the heap.
    unique_function<int(int)> small = [t = tracked(&live)](int x) { return x + 1; };
    unique_function<int(int)> large = [t = tracked(&live), pad = std::array<char, 256>{}](int x) {
      return x + static_cast<int>(pad.size());
    };
    CHECK(live == 2);
    CHECK(small(1) == 2);
    CHECK(large(1) == 257);

    unique_function<int(int)> moved_small = std::move(small);
    unique_function<int(int)> moved_large = std::move(large);
    CHECK_FALSE(small);  // a moved-from function is empty
    CHECK_FALSE(large);
    CHECK(live == 2);
    CHECK(moved_small(2) == 3);
    CHECK(moved_large(2) == 258);

    moved_small = std::move(moved_large);  // destroys the small one
    CHECK(live == 1);
    CHECK(moved_small(3) == 259);
    moved_small = {};
    CHECK(live == 0);
    CHECK_FALSE(moved_small);
  }
  CHECK(live == 0);
}

TEST_CASE("unique_function: move-only captures and reference arguments",
          "[unit][unique_function]") {
  auto owned = std::make_unique<std::string>("held");
  unique_function<void(std::string&)> append = [p = std::move(owned)](std::string& out) {
    out += *p;
  };
  std::string out = "still ";
  append(out);
  CHECK(out == "still held");
}
