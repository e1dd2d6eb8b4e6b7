// One client process of a torture run: one Redlock client shared by several
// workers (threads), each doing acquire, critical section (sometimes with
// an extend inside it), release, over and over on randomly picked
// resources, recording every step in the process's history file.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace redlock::torture {

/// How the workers use their locks. The random schedule uses the defaults;
/// each targeted plan (plans.hpp) has its own.
struct workload_profile {
  std::chrono::milliseconds min_ttl{200};
  std::chrono::milliseconds max_ttl{2000};
  /// Per-node request timeout of every operation; 0 keeps the library's (ttl/20).
  std::chrono::milliseconds request_timeout{0};
  /// The share of acquires that try once; the others retry (and wait for
  /// the holder's release) until a random wait deadline.
  double try_once_share = 0.2;
  std::chrono::milliseconds retry_delay{10};
  double retry_jitter = 0.5;  ///< The delay is scaled by [1 - jitter, 1 + jitter].
  std::chrono::milliseconds min_wait{50};
  std::chrono::milliseconds max_wait{1000};
  /// The work of a critical section: 0 .. max_hold.
  std::chrono::milliseconds max_hold{5};
  /// The share of critical sections that extend their lock half-way through.
  double extend_share = 0.25;
  /// The share of critical sections run under a keeper (auto-extension),
  /// lasting 1 to keep_ttls TTLs, checking the lost-lock signal and the
  /// validity every few milliseconds and giving the section up when either
  /// says so.
  double keep_share = 0;
  int keep_ttls = 3;
  /// Each worker is a contender in a leader election for r0 instead: it
  /// leads for lead_min .. lead_max (recorded as an acquire, its keeper's
  /// extensions and a release), runs critical sections only while
  /// leader_election::leading() says so, then steps down and campaigns
  /// again; a term may also end early by the lost-lock signal.
  bool leader_election = false;
  std::chrono::milliseconds lead_min{100};
  std::chrono::milliseconds lead_max{600};
  /// A pause after each iteration, 0 .. max_pause: lets a resource go free
  /// now and then instead of passing from hand to hand.
  std::chrono::milliseconds max_pause{0};
  /// Keep every lock until the end of its reported validity before
  /// releasing it, so that a validity promised too long shows as an overlap.
  bool hold_to_deadline = false;
  /// A critical section starts (and continues after an extend) only with at
  /// least its remaining work plus this much validity left, as a careful
  /// client would check.
  std::chrono::milliseconds validity_margin{100};
  /// Fenced acquires (lock_options::fenced; client_config::max_fenced_ttl
  /// is then max_ttl): the histories record each lock's fence.
  bool fenced_locks = false;
  /// The register is written through the resource's fence check
  /// (protected_register::begin_fenced / end_fenced) instead of plainly.
  bool fenced_writes = false;
  /// Every stall_every-th critical section of each worker stalls between
  /// its read and its write until another holder has written the register
  /// (at most stall_max), then writes without checking its lock again: a
  /// holder paused past its validity at the worst moment (the GC pause of
  /// Kleppmann's example), made certain instead of left to where a SIGSTOP
  /// happens to land. 0: never.
  int stall_every = 0;
  std::chrono::milliseconds stall_max{0};
};

struct workload_options {
  int proc = 0;                           ///< Process number: client-<proc>.jsonl.
  int workers = 8;                        ///< Threads sharing the process's one client.
  std::vector<std::uint16_t> node_ports;  ///< The lock nodes (their proxies).
  std::uint16_t store_port = 0;           ///< The protected registers.
  int resources = 3;                      ///< Resources r0 .. r<resources-1>.
  std::uint64_t seed = 1;
  std::filesystem::path out_dir;
  /// The workers stop when this descriptor reports end-of-file (the
  /// controller closes its end of the pipe), checked between iterations.
  int stop_fd = -1;
  workload_profile profile;
};

/// Runs the workers until told to stop; returns the process exit status (0,
/// or 1 after a store failure or any other error, reported on stderr).
int run_workload(const workload_options& options);

}  // namespace redlock::torture
