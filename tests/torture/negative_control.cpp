#include "negative_control.hpp"

#include "detail/negative_controls.hpp"

#include <atomic>

namespace redlock::torture {
namespace {

struct control {
  std::string_view name;
  std::atomic<bool> detail::negative_controls::*flag;
};

// In the order of the header's fields.
constexpr control controls[] = {
    {"drop_drift", &detail::negative_controls::drop_drift},
    {"count_late_votes", &detail::negative_controls::count_late_votes},
    {"skip_undo", &detail::negative_controls::skip_undo},
    {"settle_twice", &detail::negative_controls::settle_twice},
};

}  // namespace

const std::vector<std::string_view>& negative_control_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> list;
    for (const auto& c : controls) list.push_back(c.name);
    return list;
  }();
  return names;
}

bool break_on_purpose(std::string_view name) {
  for (const auto& c : controls) {
    if (c.name == name) {
      (detail::broken_on_purpose().*c.flag).store(true);
      return true;
    }
  }
  return false;
}

}  // namespace redlock::torture
