// SHA-1, only to name Lua scripts for EVALSHA (not for anything secret).
#pragma once

#include <string>
#include <string_view>

namespace redlock::detail {

/// The 40 lowercase hex digits of SHA-1(data), as SCRIPT LOAD returns them.
std::string sha1_hex(std::string_view data);

}  // namespace redlock::detail
