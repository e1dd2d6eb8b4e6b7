// A pub/sub connection of the wake-up hub: SUBSCRIBE and UNSUBSCRIBE go out
// unanswered, and the messages published on its channels come to a handler.
#pragma once

#include "detail/connection.hpp"

namespace redlock::detail {

class subscriber_connection final : public connection {
 public:
  subscriber_connection(strand_type strand, node_config node, connection_settings settings)
      : connection(std::move(strand), std::move(node), std::move(settings)) {}

  /// Writes a command whose answer comes as a push (SUBSCRIBE); dropped
  /// unless ready(), so send it again from the on_ready handler.
  void send_unanswered(std::string_view command);
  /// Receives each push as (kind, channel, payload), e.g. ("message",
  /// channel, message); payload is empty for pushes without one.
  using push_handler = unique_function<void(std::string_view, std::string_view, std::string_view)>;
  void on_push(push_handler handler) { push_handler_ = std::move(handler); }
  /// Called each time the connection (re)becomes ready: a reconnect forgets
  /// the subscriptions.
  void on_ready(unique_function<void()> handler) { ready_handler_ = std::move(handler); }
  void abandon() noexcept override;

 private:
  std::vector<std::string> setup_commands() const override;
  void became_ready() override;
  bool take_unasked(const redisReply& r) override;

  push_handler push_handler_;
  unique_function<void()> ready_handler_;
  bool warned_push_error_ = false;
};

}  // namespace redlock::detail
