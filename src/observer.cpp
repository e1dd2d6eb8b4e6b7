#include <redlock/observer.hpp>

namespace redlock {

std::string_view to_string(operation_kind kind) noexcept {
  switch (kind) {
    case operation_kind::acquire:
      return "acquire";
    case operation_kind::extend:
      return "extend";
    case operation_kind::release:
      return "release";
  }
  return "unknown";
}

std::string_view to_string(connection_event event) noexcept {
  switch (event) {
    case connection_event::connected:
      return "connected";
    case connection_event::disconnected:
      return "disconnected";
    case connection_event::failed:
      return "failed";
  }
  return "unknown";
}

}  // namespace redlock
