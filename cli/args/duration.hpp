// Durations on command lines: a number and a unit, such as 250ms, 2s, 1.5m
// or 1h. A bare number is refused (except 0): is "30" seconds or ms?
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace redlock::args {

/// Parses "<number><unit>", unit one of ms, s, m, h (the number may have a
/// fraction: 1.5s; sub-millisecond remainders round up), or "0". Throws
/// std::invalid_argument saying what is wrong with `text`.
std::chrono::milliseconds parse_duration(std::string_view text);

/// The shortest exact form: 1500ms, 2s, 5m, 1h; "0" for zero.
std::string format_duration(std::chrono::milliseconds value);

}  // namespace redlock::args
