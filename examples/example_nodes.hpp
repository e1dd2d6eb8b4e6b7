// The examples' node list: host:port arguments, or the local cluster of
// scripts/cluster.sh (127.0.0.1:7001 ... 7005) when there are none.
#pragma once

#include <redlock/config.hpp>

#include <cstdint>
#include <vector>

/// The local cluster of scripts/cluster.sh start: 127.0.0.1:7001 ... 7005.
inline std::vector<redlock::node_config> example_local_cluster() {
  std::vector<redlock::node_config> nodes;
  for (std::uint16_t port = 7001; port <= 7005; ++port) nodes.emplace_back().port = port;
  return nodes;
}

/// The nodes named by argv[first ...], or the local cluster when there are
/// none; throws redlock::config_error for a malformed one.
inline std::vector<redlock::node_config> example_nodes(int argc, char** argv, int first) {
  std::vector<redlock::node_config> nodes;
  for (int i = first; i < argc; ++i) nodes.push_back(redlock::parse_node(argv[i]));
  return nodes.empty() ? example_local_cluster() : nodes;
}
