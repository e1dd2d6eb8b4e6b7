#include "detail/reply.hpp"

#include <hiredis.h>

namespace redlock::detail {

namespace {

/// hiredis' own functions, with createArray checked first.
struct bounded_functions {
  redisReplyObjectFunctions defaults{};
  redisReplyObjectFunctions bounded{};

  bounded_functions() {
    // The defaults are static inside hiredis; a fresh reader points at them.
    redisReader* probe = redisReaderCreate();
    if (probe != nullptr && probe->fn != nullptr) defaults = *probe->fn;
    redisReaderFree(probe);
    bounded = defaults;
    bounded.createArray = &create_array;
  }

  static void* create_array(const redisReadTask* task, int elements);
};

const bounded_functions& functions() {
  static const bounded_functions instance;
  return instance;
}

void* bounded_functions::create_array(const redisReadTask* task, int elements) {
  // Null makes the reader fail: the connection is dropped as broken.
  if (elements < 0 || elements > max_reply_elements) return nullptr;
  return functions().defaults.createArray(task, elements);
}

}  // namespace

redisReader* create_reply_reader() {
  // The const_cast is hiredis' API: it never writes through fn.
  return redisReaderCreateWithFunctions(
      const_cast<redisReplyObjectFunctions*>(&functions().bounded));
}

reply reply_view(const redisReply& r) noexcept {
  reply out;
  switch (r.type) {
    case REDIS_REPLY_STATUS:
      out.type = reply::kind::status;
      break;
    case REDIS_REPLY_ERROR:
      out.type = reply::kind::error;
      break;
    case REDIS_REPLY_INTEGER:
      out.type = reply::kind::integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = reply::kind::string;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = reply::kind::array;
      break;
    default:
      out.type = reply::kind::nil;
      break;
  }
  out.integer = r.integer;
  if (r.str != nullptr) out.text = std::string_view(r.str, r.len);
  return out;
}

error_code classify_error_reply(std::string_view text) noexcept {
  if (text.starts_with("NOAUTH") || text.starts_with("WRONGPASS")) {
    return errc::authentication_failed;
  }
  // Redis 6+ answers AUTH without a configured password with this ERR.
  if (text.starts_with("ERR AUTH") || text.starts_with("ERR invalid password") ||
      text.starts_with("ERR Client sent AUTH")) {
    return errc::authentication_failed;
  }
  return errc::server_error;
}

}  // namespace redlock::detail
