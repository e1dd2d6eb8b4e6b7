// Randomness: lock tokens from the OS CSPRNG, jitter from a cheap generator.
#pragma once

#include <string>

namespace redlock::detail {

/// 128 bits from getrandom(2), as 32 lowercase hex characters. The bytes
/// are fetched 512 at a time per thread (a forked child fetches its own).
/// Throws std::system_error if the kernel cannot supply them.
std::string make_token();

/// Uniform in [0, 1), for jitter only (not for anything secret).
double unit_random() noexcept;

}  // namespace redlock::detail
