// Which Redis server (by INFO run_id) each configured node turned out to
// be, so that one server listed twice under two names is refused: its votes
// would count twice. Used on the client's strand only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace redlock::detail {

class server_registry {
 public:
  explicit server_registry(std::size_t nodes) : claims_(nodes) {}

  /// Node `node` (called `name` in logs) is connected to server `run_id`.
  /// Returns the name of another node connected to that server (and records
  /// nothing), or records the claim and returns nullopt.
  std::optional<std::string> claim(std::size_t node, const std::string& run_id,
                                   const std::string& name);
  /// Node `node`'s connection is gone; its server may be claimed again.
  void release(std::size_t node) noexcept;

 private:
  struct claim_entry {
    std::string run_id;  ///< Empty: no live connection.
    std::string name;
  };
  std::vector<claim_entry> claims_;
};

}  // namespace redlock::detail
