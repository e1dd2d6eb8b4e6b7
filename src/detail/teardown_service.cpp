#include "detail/teardown_service.hpp"

#include "detail/node_set.hpp"

#include <algorithm>

namespace redlock::detail {

boost::asio::execution_context::id teardown_service::id;

teardown_service::teardown_service(boost::asio::execution_context& context)
    : boost::asio::execution_context::service(context) {}

void teardown_service::watch(const std::shared_ptr<node_set>& nodes) {
  const std::lock_guard guard(mutex_);
  std::erase_if(watched_, [](const auto& weak) { return weak.expired(); });
  watched_.push_back(nodes);
}

void teardown_service::shutdown() {
  std::vector<std::weak_ptr<node_set>> watched;
  {
    const std::lock_guard guard(mutex_);
    watched.swap(watched_);
  }
  for (auto& weak : watched) {
    if (auto nodes = weak.lock()) nodes->abandon();
  }
}

}  // namespace redlock::detail
