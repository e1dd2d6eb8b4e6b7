// A parsed Redis reply as the operations see it.
#pragma once

#include <redlock/error.hpp>

#include <cstddef>
#include <string_view>

struct redisReply;
struct redisReader;

namespace redlock::detail {

/// A view of one reply; `text` points into the parser's memory and is valid
/// only during the callback that receives it.
struct reply {
  enum class kind { status, error, integer, string, nil, array };
  kind type = kind::nil;
  long long integer = 0;
  std::string_view text;
  /// The command was sent again after its connection failed, so it may
  /// already have run once: the answer is to the second run.
  bool repeated = false;

  bool is_ok() const noexcept { return type == kind::status && text == "OK"; }
  bool is_error() const noexcept { return type == kind::error; }
};

/// A lock's replies are small: a node sending bigger ones is broken or
/// hostile, and the memory it makes us allocate must stay bounded. At most
/// this many elements in an array (hiredis would allocate the pointers for
/// whatever count the header claims) ...
inline constexpr int max_reply_elements = 1 << 16;
/// ... and at most this many bytes buffered for replies not yet complete.
inline constexpr std::size_t max_unparsed_reply_bytes = std::size_t{64} << 20;

/// A hiredis reader that refuses (with a reader error) an array header
/// claiming more than max_reply_elements or fewer than -1 elements. Null
/// when out of memory.
redisReader* create_reply_reader();

/// A view of hiredis' parsed reply (which must outlive it).
reply reply_view(const redisReply& parsed) noexcept;

/// The error a node's error reply stands for: authentication_failed for
/// NOAUTH / WRONGPASS, server_error otherwise.
error_code classify_error_reply(std::string_view text) noexcept;

}  // namespace redlock::detail
