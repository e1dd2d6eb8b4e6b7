// The connection operations send their commands on: one per node (the node
// pool's). Before anything else on each link, it checks whether the node
// restarted since its fencing state was last checked.
#pragma once

#include "detail/connection.hpp"

namespace redlock::detail {

class command_connection final : public connection {
 public:
  command_connection(strand_type strand, node_config node, connection_settings settings)
      : connection(std::move(strand), std::move(node), std::move(settings)) {}

 private:
  std::vector<std::string> setup_commands() const override;
  void queue_first() override;
  void on_restart_check_reply(error_code ec, const reply& r);
};

}  // namespace redlock::detail
