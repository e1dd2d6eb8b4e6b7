// Breaks the reference cycles of clients whose io_context is destroyed
// without running the close their destruction posted: their queued
// callbacks (which hold operations, which hold the client's state) are
// dropped when the context shuts down, so nothing is leaked.
#pragma once

#include <redlock/detail/asio.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace redlock::detail {

class client_core;

class teardown_service final : public boost::asio::execution_context::service {
 public:
  static boost::asio::execution_context::id id;

  explicit teardown_service(boost::asio::execution_context& context);

  /// `core` is abandoned if the context shuts down while it still exists.
  void watch(const std::shared_ptr<client_core>& core);

 private:
  void shutdown() override;

  std::mutex mutex_;
  std::vector<std::weak_ptr<client_core>> watched_;
};

}  // namespace redlock::detail
