#include "detail/subscriber_connection.hpp"
#include "detail/admission.hpp"

#include <fmt/format.h>
#include <hiredis.h>

namespace redlock::detail {
namespace {

std::string_view text_of(const redisReply& r) noexcept { return {r.str, r.len}; }

}  // namespace

std::vector<std::string> subscriber_connection::setup_commands() const {
  return detail::setup_commands(node(), true);
}

void subscriber_connection::send_unanswered(std::string_view command) {
  if (!ready()) return;
  queued().push_unanswered(command);
  write_if_idle();
}

void subscriber_connection::became_ready() {
  if (ready_handler_) ready_handler_();
}

bool subscriber_connection::take_unasked(const redisReply& r) {
  // Nobody to give a push to: as on a command connection.
  if (!push_handler_) return false;
  if (r.type == REDIS_REPLY_ERROR) {
    // A refused SUBSCRIBE (e.g. an ACL user without channel rights):
    // waiters fall back to polling. Said once per connection.
    if (!std::exchange(warned_push_error_, true)) {
      settings().log(log_level::warning,
                     fmt::format("node {}: subscription refused: {}", describe(), text_of(r)));
    }
    return true;
  }
  if (r.type != REDIS_REPLY_ARRAY || r.elements < 2 || r.element[0]->type != REDIS_REPLY_STRING ||
      r.element[1]->type != REDIS_REPLY_STRING) {
    return false;
  }
  std::string_view payload;
  if (r.elements >= 3 && r.element[2]->type == REDIS_REPLY_STRING) payload = text_of(*r.element[2]);
  push_handler_(text_of(*r.element[0]), text_of(*r.element[1]), payload);
  return true;
}

void subscriber_connection::abandon() noexcept {
  // Moved out first: destroying a callback may free what refers to us.
  auto push = std::move(push_handler_);
  auto ready = std::move(ready_handler_);
  connection::abandon();
}

}  // namespace redlock::detail
