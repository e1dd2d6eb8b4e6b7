// Targeted runs: a fixed set of faults in place for the whole fault phase
// and a workload made to expose one kind of client bug, instead of the
// random schedule. Each negative control (--break) has one where a correct
// client stays safe and the broken one is caught; run without --break, a
// plan shows that the checker does not flag a correct client there.
#pragma once

#include "fault_schedule.hpp"
#include "workload.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace redlock::torture {

struct plan_info {
  std::string_view name;
  std::string_view description;
  /// Defaults of the run, unless given on the command line.
  int clients = 3;
  int workers_per_client = 8;
  int resources = 2;
  std::chrono::seconds duration{20};
  workload_profile workload;
  /// How often the controller scans the nodes' lock keys (the orphaned-vote
  /// rule needs two sightings orphan_grace apart).
  std::chrono::milliseconds scan_interval{1000};
  /// Client process k reaches the nodes through proxy set k % proxy_sets, so
  /// that a fault can be seen by some clients and not by others.
  std::size_t proxy_sets = 1;
  /// The faults, each on one node from the start of the fault phase to the
  /// heal (start and duration are set by plan_faults).
  std::vector<fault> faults;
  /// Instead of standing faults: a seeded series of pauses (SIGSTOP) and
  /// kills of one node at a time; a killed node comes back without its data
  /// (no persistence) after min_downtime, and the next fault starts 1-2 s
  /// after one ends, time for a fenced client to re-seed the node.
  bool node_pauses_and_kills = false;
  /// SIGSTOP of a random client process (all its workers) for
  /// client_pause.first .. client_pause.second, then SIGCONT; the next one
  /// 0.2-1 s later. None when the maximum is 0.
  std::pair<std::chrono::milliseconds, std::chrono::milliseconds> client_pause{};
};

const std::vector<plan_info>& all_plans();
/// nullptr when unknown.
const plan_info* find_plan(std::string_view name);

/// The plan's faults over a fault phase of `length` (`seed`: of a series of
/// node pauses and kills).
std::vector<fault> plan_faults(const plan_info& plan, std::chrono::milliseconds length,
                               std::uint64_t seed);

}  // namespace redlock::torture
