// The client's command connections, one per node, on its strand: what every
// operation sends through. broadcast() is the one way to ask every node.
#pragma once

#include "detail/command_connection.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::detail {

/// broadcast()'s default: every node.
struct every_node {
  constexpr bool operator()(std::size_t) const noexcept { return true; }
};

class node_pool {
 public:
  /// One connection per entry of `nodes`, each with `settings_for(i)`.
  template <class SettingsFor>
  node_pool(const strand_type& strand, const std::vector<node_config>& nodes,
            SettingsFor settings_for) {
    connections_.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      connections_.push_back(
          std::make_shared<command_connection>(strand, nodes[i], settings_for(i)));
    }
  }

  /// Starts connecting every node.
  void start();
  /// Closes every connection (see connection::close).
  void close();
  /// Drops every queued callback without calling it.
  void abandon() noexcept;

  std::size_t size() const noexcept { return connections_.size(); }
  command_connection& node(std::size_t i) noexcept { return *connections_[i]; }

  /// Sends `command` to each node `include(i)` accepts; `on_reply(i, ec,
  /// reply)` gets node i's answer, exactly once (connection::send). Returns
  /// how many nodes it was sent to.
  template <class OnReply, class Include = every_node>
  std::size_t broadcast(std::string_view command, const OnReply& on_reply, Include include = {}) {
    std::size_t sent = 0;
    for (std::size_t i = 0; i < size(); ++i) {
      if (!include(i)) continue;
      // An init-capture: a plain capture of the const reference would make a
      // const member, which every move of the callback would copy.
      node(i).send(command, [on_reply = OnReply(on_reply), i](error_code ec, const reply& r) {
        on_reply(i, ec, r);
      });
      ++sent;
    }
    return sent;
  }
  /// The same for an idempotent command, resent across reconnects until
  /// `retry_until` and shared by every node's connection.
  template <class OnReply, class Include = every_node>
  std::size_t broadcast(const std::shared_ptr<const std::string>& command,
                        clock::time_point retry_until, const OnReply& on_reply,
                        Include include = {}) {
    std::size_t sent = 0;
    for (std::size_t i = 0; i < size(); ++i) {
      if (!include(i)) continue;
      node(i).send(
          command,
          [on_reply = OnReply(on_reply), i](error_code ec, const reply& r) { on_reply(i, ec, r); },
          retry_until);
      ++sent;
    }
    return sent;
  }

  /// While corked, what is sent leaves in one write per node. Nests.
  void cork() noexcept;
  void uncork();

 private:
  std::vector<std::shared_ptr<command_connection>> connections_;
};

/// Corks a node pool for a scope.
class corked {
 public:
  explicit corked(node_pool& pool) : pool_(pool) { pool_.cork(); }
  ~corked() { pool_.uncork(); }
  corked(const corked&) = delete;
  corked& operator=(const corked&) = delete;

 private:
  node_pool& pool_;
};

}  // namespace redlock::detail
