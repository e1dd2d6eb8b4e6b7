// One client process of a torture run: lock, critical section, sometimes
// extend, release, over and over on randomly picked resources, recording
// every step in its history file.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace redlock::torture {

struct workload_options {
  int proc = 0;                           ///< Process number: client-<proc>.jsonl.
  std::vector<std::uint16_t> node_ports;  ///< The lock nodes (their proxies).
  std::uint16_t store_port = 0;           ///< The protected registers.
  int resources = 3;                      ///< Resources r0 .. r<resources-1>.
  std::uint64_t seed = 1;
  std::filesystem::path out_dir;
  /// The loop ends when this descriptor reports end-of-file (the controller
  /// closes its end of the pipe), checked between iterations.
  int stop_fd = -1;
  std::chrono::milliseconds min_ttl{200};
  std::chrono::milliseconds max_ttl{2000};
  /// A critical section starts only with at least its hold time plus this
  /// much validity left, as a careful client would check.
  std::chrono::milliseconds validity_margin{100};
};

/// Runs the loop; returns the process exit status (0, or 1 after a store
/// failure, which is reported on stderr).
int run_workload(const workload_options& options);

}  // namespace redlock::torture
