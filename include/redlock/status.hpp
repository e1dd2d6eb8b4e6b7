// What the nodes say about a resource right now (client::async_status).
#pragma once

#include <redlock/error.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock {

/// One node's view of a resource's key.
struct node_status {
  /// What the node's key is.
  enum class holding : std::uint8_t {
    unknown,    ///< The node did not answer: see `error`.
    free,       ///< No key.
    plain,      ///< A plain lock: `holder` is its token.
    reentrant,  ///< A reentrant lock: `holder` is its owner id.
    other,      ///< A key of another type: not a lock this library or Redlock makes.
  };
  holding state = holding::unknown;  ///< What the key is, if the node answered.
  std::string holder;                ///< The token or owner id, per `state`.
  /// The key's remaining TTL on the node's clock; nullopt when it has none
  /// (a key without expiry) or there is no key.
  std::optional<std::chrono::milliseconds> ttl;
  /// Why the node gave no answer (node_timeout, node_unavailable, ...).
  error_code error{};

  /// The node answered (state is not unknown).
  bool answered() const noexcept { return state != holding::unknown; }
};

/// The enumerator's name: "unknown", "free", "plain", "reentrant", "other";
/// "invalid" for a value that is no enumerator (unknown is one).
std::string_view to_string(node_status::holding h) noexcept;

/// Every node's view, in configuration order, and what a quorum agrees on.
/// A snapshot read without a lock: by the time it arrives a holder may have
/// released, or its key expired.
struct resource_status {
  std::string resource;            ///< The resource asked about.
  std::vector<node_status> nodes;  ///< Each node's view, in configuration order.
  /// Nodes that answered.
  std::size_t answered = 0;
  /// The holder (token or reentrant owner id) found on at least a quorum of
  /// nodes, if any. Says the key exists there, not that its holder's
  /// validity has time left.
  std::optional<std::string> quorum_holder;
  /// Nodes that answered and have no key.
  std::size_t free = 0;
};

}  // namespace redlock
