#include "detail/logger.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace redlock::detail {

logger::logger(log_sink sink) : sink_(std::move(sink)) {}

void logger::operator()(log_level level, std::string_view message) const {
  if (sink_) {
    sink_(level, message);
    return;
  }
  if (level < log_level::warning) return;
  // The one place the library names itself: sinks get the bare sentence.
  fmt::print(stderr, "redlock: {}\n", message);
}

}  // namespace redlock::detail
