// Command-line durations: any text parses or is refused with
// std::invalid_argument; what parses prints back to the same value.
#include "args/duration.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::chrono::milliseconds value{};
  try {
    value = redlock::args::parse_duration(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (value.count() < 0) std::abort();
  if (redlock::args::parse_duration(redlock::args::format_duration(value)) != value) {
    std::abort();
  }
  return 0;
}
