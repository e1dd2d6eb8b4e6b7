// Deterministic scenarios: two clients, A and B, each behind its own set of
// proxies so that A's majority can be made exactly the nodes that are then
// broken. Each broken assumption has a safe counterpart that runs the same
// steps with the assumption kept.
#pragma once

#include "support/redis_server.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::torture {

class torture_cluster;

struct scenario_info {
  std::string_view name;
  std::string_view description;
  bool breaks_assumption = false;  ///< A violation must be found.
  test::persistence durability = test::persistence::none;
  std::chrono::milliseconds max_ttl{3000};  ///< Longest TTL the scenario uses.
};

const std::vector<scenario_info>& all_scenarios();
/// nullptr when unknown.
const scenario_info* find_scenario(std::string_view name);

/// Runs the scenario on `cluster` (built with two proxy sets: A uses set 0,
/// B set 1); histories go to client-0 (A) and client-1 (B) in `dir`. Returns
/// the resources used. Prints what happens, step by step. Throws
/// std::runtime_error if the setup could not be arranged.
std::vector<std::string> run_scenario(const scenario_info& scenario, torture_cluster& cluster,
                                      const std::filesystem::path& dir);

}  // namespace redlock::torture
