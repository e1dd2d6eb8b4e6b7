// Randomness: lock tokens from the OS CSPRNG, jitter from a cheap generator.
#pragma once

#include <string>

namespace redlock::detail {

/// 128 bits from getrandom(2), as 32 lowercase hex characters. Throws
/// std::system_error if the kernel cannot supply them.
///
/// One system call per token, on purpose: bytes kept in the process for
/// later tokens would be handed out twice by a copy of the process that no
/// fork handler hears of (_Fork, a raw clone, a restored snapshot of a VM
/// or a CRIU image), and a token shared by two holders breaks mutual
/// exclusion.
std::string make_token();

/// Uniform in [0, 1), for jitter only (not for anything secret).
double unit_random() noexcept;

}  // namespace redlock::detail
