#include "detail/server_registry.hpp"

namespace redlock::detail {

std::optional<std::string> server_registry::claim(std::size_t node, const std::string& run_id,
                                                  const std::string& name) {
  if (node >= entries_.size()) return std::nullopt;
  auto& mine = entries_[node];
  if (mine.twin_of) return entries_[*mine.twin_of].name;
  if (run_id.empty()) return std::nullopt;
  for (std::size_t other = 0; other < entries_.size(); ++other) {
    if (other != node && entries_[other].run_id == run_id) {
      mine.twin_of = other;
      return entries_[other].name;
    }
  }
  mine.run_id = run_id;
  mine.name = name;
  return std::nullopt;
}

}  // namespace redlock::detail
