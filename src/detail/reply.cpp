#include "detail/reply.hpp"

namespace redlock::detail {

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
