// A parsed Redis reply as the operations see it.
#pragma once

#include <redlock/error.hpp>

#include <cstddef>
#include <string_view>

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

/// The error a node's error reply stands for: authentication_failed for
/// NOAUTH / WRONGPASS, server_error otherwise.
error_code classify_error_reply(std::string_view text) noexcept;

}  // namespace redlock::detail
