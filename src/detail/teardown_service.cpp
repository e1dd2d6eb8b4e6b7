#include "detail/teardown_service.hpp"

#include "detail/client_core.hpp"

#include <algorithm>

namespace redlock::detail {

boost::asio::execution_context::id teardown_service::id;

teardown_service::teardown_service(boost::asio::execution_context& context)
    : boost::asio::execution_context::service(context) {}

void teardown_service::watch(const std::shared_ptr<client_core>& core) {
  const std::lock_guard guard(mutex_);
  std::erase_if(watched_, [](const auto& weak) { return weak.expired(); });
  watched_.push_back(core);
}

void teardown_service::shutdown() {
  std::vector<std::weak_ptr<client_core>> watched;
  {
    const std::lock_guard guard(mutex_);
    watched.swap(watched_);
  }
  for (auto& weak : watched) {
    if (auto core = weak.lock()) core->abandon();
  }
}

}  // namespace redlock::detail
