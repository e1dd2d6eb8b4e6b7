// --nodes / parse_nodes: any text is either a list of usable nodes or a
// config_error naming the bad part; never a crash or a node with no host.
#include <redlock/config.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& node : redlock::parse_nodes(text)) {
      if (node.host.empty() || node.port == 0) std::abort();
    }
  } catch (const redlock::config_error& e) {
    if (e.code() != redlock::errc::invalid_node) std::abort();
  }
  return 0;
}
