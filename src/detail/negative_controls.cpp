#include "detail/negative_controls.hpp"

namespace redlock::detail {

negative_controls& broken_on_purpose() noexcept {
  static negative_controls controls;
  return controls;
}

}  // namespace redlock::detail
