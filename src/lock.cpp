#include <redlock/lock.hpp>

namespace redlock {

std::chrono::milliseconds lock::remaining_validity(clock::time_point now) const noexcept {
  if (empty() || now >= deadline_) return std::chrono::milliseconds{0};
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now);
}

}  // namespace redlock
