// A seeded, random schedule of faults on the lock nodes that never breaks
// the algorithm's assumptions: at most `max_faulted` nodes (a minority) are
// faulted at any time, a killed node without persistence comes back only
// after the maximum TTL, and a fast clock stays within the drift allowance.
// Pure: the controller applies it (torture_cluster::apply).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::torture {

enum class fault_kind {
  pause,                ///< SIGSTOP, then SIGCONT.
  kill,                 ///< SIGKILL, then a restart (at once only with appendfsync always).
  partition_blackhole,  ///< Nothing flows; delivered on heal.
  partition_drop,       ///< Bytes discarded; connections reset on heal.
  request_delay,        ///< Latency and jitter towards the node.
  reply_delay,          ///< Latency and jitter from the node.
  hold_replies,         ///< Replies kept back, then delivered at once.
  fast_clock,           ///< TTLs scaled by a factor in [1 - drift_factor/2, 1].
  reset_connections,    ///< Every connection reset (instantaneous).
  refuse_connections,   ///< Connections reset and new ones refused for a while.
};
inline constexpr fault_kind all_fault_kinds[] = {fault_kind::pause,
                                                 fault_kind::kill,
                                                 fault_kind::partition_blackhole,
                                                 fault_kind::partition_drop,
                                                 fault_kind::request_delay,
                                                 fault_kind::reply_delay,
                                                 fault_kind::hold_replies,
                                                 fault_kind::fast_clock,
                                                 fault_kind::reset_connections,
                                                 fault_kind::refuse_connections};
std::string_view name(fault_kind kind);

using std::chrono::milliseconds;

/// One fault on one node over [start, start + duration), times relative to
/// the start of the schedule.
struct fault {
  fault_kind kind = fault_kind::pause;
  std::size_t node = 0;
  milliseconds start{0};
  milliseconds duration{0};
  milliseconds delay{0};         ///< request_delay / reply_delay: fixed part.
  milliseconds jitter{0};        ///< request_delay / reply_delay: random extra, up to this.
  double ttl_factor = 1;         ///< fast_clock.
  bool restart_at_once = false;  ///< kill on a node with appendfsync always.
  /// A network fault seen only by the clients behind this proxy set; every
  /// set when empty. Faults of the node itself (pause, kill) hit everyone.
  std::optional<std::size_t> proxy_set;

  milliseconds end() const { return start + duration; }
};

/// "request-delay 40+-10 ms", "fast-clock x0.9963", ...
std::string describe(const fault& f);

struct schedule_options {
  std::uint64_t seed = 1;
  milliseconds length{60000};  ///< Faults start within [0, length).
  std::size_t nodes = 5;
  std::size_t max_faulted = 2;  ///< Nodes faulted at once; keep it a minority.
  milliseconds max_ttl{2000};   ///< The longest TTL (and extension) the clients use.
  double drift_factor = 0.01;   ///< The clients' drift allowance.
  bool durable_nodes = false;   ///< appendfsync always: a killed node restarts at once.
  milliseconds min_gap{100};    ///< Between one fault's start and the next.
  milliseconds max_gap{1000};
};

/// How long a killed node without persistence stays down at least: the
/// longest TTL plus a margin, so every key it held has expired everywhere.
milliseconds min_downtime(const schedule_options& options);

/// The faults, by start time. Same options (seed included), same schedule.
std::vector<fault> make_schedule(const schedule_options& options);

/// The most nodes faulted at the same moment in `faults`.
std::size_t max_concurrently_faulted(const std::vector<fault>& faults);

}  // namespace redlock::torture
