// A node's INFO text, as a hostile server may send it, through the topology
// check.
#include "detail/topology_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto info = redlock::detail::parse_info(text);
  (void)redlock::detail::check_topology(info, true);
  return 0;
}
