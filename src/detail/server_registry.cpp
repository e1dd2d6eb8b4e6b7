#include "detail/server_registry.hpp"

namespace redlock::detail {

std::optional<std::string> server_registry::claim(std::size_t node, const std::string& run_id,
                                                  const std::string& name) {
  for (std::size_t other = 0; other < claims_.size(); ++other) {
    if (other != node && !run_id.empty() && claims_[other].run_id == run_id) {
      return claims_[other].name;
    }
  }
  if (node < claims_.size()) claims_[node] = {run_id, name};
  return std::nullopt;
}

void server_registry::release(std::size_t node) noexcept {
  if (node < claims_.size()) claims_[node].run_id.clear();
}

}  // namespace redlock::detail
