// Breaks the reference cycles of clients whose io_context is destroyed
// without running the shutdown their destruction posted: their queued
// callbacks (which hold operations, which hold the client's state) are
// dropped when the context shuts down, so nothing is leaked.
#pragma once

#include <redlock/detail/asio.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace redlock::detail {

class node_set;

class teardown_service final : public boost::asio::execution_context::service {
 public:
  static boost::asio::execution_context::id id;

  explicit teardown_service(boost::asio::execution_context& context);

  /// `nodes` is abandoned if the context shuts down while it still exists.
  void watch(const std::shared_ptr<node_set>& nodes);

 private:
  void shutdown() override;

  std::mutex mutex_;
  std::vector<std::weak_ptr<node_set>> watched_;
};

}  // namespace redlock::detail
