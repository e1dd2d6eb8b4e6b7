// Counts the program's heap allocations (every global operator new), so the
// benchmark can report allocations per acquire + release cycle.
#pragma once

#include <cstdint>

namespace redlock::bench {

/// Allocations made by the whole program so far.
std::uint64_t allocations() noexcept;

}  // namespace redlock::bench
