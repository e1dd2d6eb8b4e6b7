#include "duration.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace redlock::args {
namespace {

struct unit {
  std::string_view suffix;
  long long ms;
};
// "ms" before "m" and "s": the longest suffix is matched first.
constexpr std::array<unit, 4> units{{{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}}};

// Appended piece by piece: GCC 12 at -O2 reports a false -Wrestrict for
// "'" + std::string(...) (the inlined insert at the front of the string).
std::invalid_argument bad(std::string_view text, std::string_view why) {
  std::string message;
  message.reserve(text.size() + why.size() + 3);
  message.append(1, '\'').append(text).append("' ").append(why);
  return std::invalid_argument(message);
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text) {
  if (text.empty()) throw bad(text, "is not a duration (e.g. 500ms, 30s, 5m, 1h)");
  if (text == "0") return std::chrono::milliseconds{0};
  if (text.front() == '-') throw bad(text, "is negative");
  const unit* found = nullptr;
  for (const auto& u : units) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      found = &u;
      break;
    }
  }
  if (found == nullptr) {
    const bool bare = text.find_first_not_of("0123456789.") == std::string_view::npos;
    throw bad(text, bare ? "needs a unit: ms, s, m or h (e.g. 30s)"
                         : "is not a duration (e.g. 500ms, 30s, 5m, 1h)");
  }
  const auto number = text.substr(0, text.size() - found->suffix.size());
  // Digits with at most one '.', at least one digit: from_chars alone would
  // also take "1e3", "inf" and "nan".
  const auto digits = number.find_first_not_of("0123456789.");
  const auto dots = std::count(number.begin(), number.end(), '.');
  if (digits != std::string_view::npos || dots > 1 || number == ".") {
    throw bad(text, "is not a duration (e.g. 500ms, 30s, 5m, 1h)");
  }
  double value = 0;
  const auto parsed = std::from_chars(number.data(), number.data() + number.size(), value);
  if (parsed.ec != std::errc{} || parsed.ptr != number.data() + number.size()) {
    throw bad(text, "is not a duration (e.g. 500ms, 30s, 5m, 1h)");
  }
  const double ms = std::ceil(value * static_cast<double>(found->ms));
  // A year is more than any lock or timeout here needs.
  if (ms > 365.0 * 24 * 3'600'000) throw bad(text, "is too long (at most a year)");
  return std::chrono::milliseconds(static_cast<long long>(ms));
}

std::string format_duration(std::chrono::milliseconds value) {
  const auto ms = value.count();
  if (ms == 0) return "0";
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    if (ms % it->ms == 0) return std::to_string(ms / it->ms) + std::string(it->suffix);
  }
  return std::to_string(ms) + "ms";
}

}  // namespace redlock::args
