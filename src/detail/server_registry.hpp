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
  explicit server_registry(std::size_t nodes) : entries_(nodes) {}

  /// Node `node` (called `name` in logs) reached server `run_id`. Returns
  /// the name of the node whose server that already is, or records `run_id`
  /// as node's server and returns nullopt.
  ///
  /// What is recorded outlives the connection: a node that lost its
  /// connection still holds the votes it gave, so a twin connecting in the
  /// meantime must not vote too. A node found to be another's twin stays
  /// refused for the registry's lifetime, whichever of the two connects
  /// first later. An empty run_id (not reported) records nothing.
  std::optional<std::string> claim(std::size_t node, const std::string& run_id,
                                   const std::string& name);

 private:
  struct entry {
    std::string run_id;  ///< The server last seen; empty: none yet.
    std::string name;
    std::optional<std::size_t> twin_of;  ///< Set once found to be that node's server.
  };
  std::vector<entry> entries_;
};

}  // namespace redlock::detail
