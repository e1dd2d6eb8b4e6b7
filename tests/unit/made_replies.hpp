// Replies as a node's parser would hand them over, made up for unit tests.
#pragma once

#include "detail/reply.hpp"

#include <string_view>

namespace redlock::test {

/// A bulk string reply whose text is `body` (which must outlive it).
inline detail::reply text_reply(std::string_view body) {
  detail::reply r;
  r.type = detail::reply::kind::string;
  r.text = body;
  return r;
}

/// An error reply, e.g. "NOPERM ...".
inline detail::reply error_reply(std::string_view message) {
  detail::reply r;
  r.type = detail::reply::kind::error;
  r.text = message;
  return r;
}

}  // namespace redlock::test
